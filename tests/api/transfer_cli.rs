//! `cms export` and `cms import` as an operator runs them: an instance on SQLite piped from one
//! command into the other, into an empty database of each engine, quiet when not on a
//! terminal; an import without `--into-empty`, into a database with data, or an export over an
//! existing file is refused with the reason.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use axum::http::StatusCode;
use serde_json::json;

use crate::assets::uploaded;
use crate::people_support::{first_owner, sign_in};
use crate::support::{AUTH_SECRET, TestApp, config_for};

/// `cms ARGS` on the database `url` with its asset files under `data_dir`, run there.
fn cms(url: &str, data_dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cms"));
    command
        .args(args)
        .env("CMS_DATABASE_URL", url)
        .env("CMS_STORAGE_PATH", data_dir.join("media"))
        .current_dir(data_dir)
        .env("CMS_AUTH_SECRET", AUTH_SECRET)
        .env_remove("CMS_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `cms ARGS` fails, saying `why`.
fn refused(url: &str, data_dir: &Path, args: &[&str], why: &str) {
    let out = cms(url, data_dir, args).output().unwrap();
    let stderr = text(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains(why),
        "{args:?}: {stderr}"
    );
}

/// Neither a progress bar nor its carriage returns when standard error is not a terminal.
fn assert_quiet(out: &Output) {
    let stderr = text(&out.stderr);
    assert!(
        !stderr.contains('\r') && !stderr.contains('\u{1b}'),
        "no progress drawn when piped: {stderr:?}"
    );
}

async fn the_commands_pipe_an_instance_into_an_empty_database(target_url: String) {
    let source_db = cms_store::testing::TestDatabase::new(cms_store::Dialect::Sqlite).await;
    let source_config = config_for(&source_db.url);
    let source = TestApp::custom(source_config.clone(), |b| b).await;
    let (ada, _) = first_owner(&source).await;
    let doc = source
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Moved"}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(doc.status, StatusCode::CREATED, "{}", doc.body);
    let id = doc.body["data"]["id"].as_str().unwrap().to_string();
    uploaded(&source, &ada, "notes.txt", b"carried along").await;
    // Closed, its files kept: the commands read them.
    source.app.cms.store().close().await;

    // `cms export --with-credentials | cms import - --into-empty`.
    let target_dir = tempfile::tempdir().unwrap();
    let mut export = cms(
        &source_db.url,
        &source_config.data_dir,
        &["export", "--with-credentials"],
    )
    .spawn()
    .unwrap();
    let archive = export.stdout.take().unwrap();
    let import = cms(
        &target_url,
        target_dir.path(),
        &["import", "-", "--into-empty"],
    )
    .stdin(Stdio::from(archive))
    .output()
    .unwrap();
    let exported = export.wait_with_output().unwrap();
    assert!(exported.status.success(), "{}", text(&exported.stderr));
    assert!(import.status.success(), "{}", text(&import.stderr));
    for out in [&exported, &import] {
        let stderr = text(&out.stderr);
        assert!(stderr.contains("documents: 1\n"), "{stderr}");
        assert!(stderr.contains("files: 1 (13 bytes)"), "{stderr}");
        assert_quiet(out);
    }

    // The target serves what the source held, to the same password.
    let mut target_config = config_for(&target_url);
    target_config.data_dir = target_dir.path().to_path_buf();
    let target = TestApp::custom(target_config, |b| b).await;
    let ada = sign_in(&target, "ada@example.com").await;
    let read = target
        .get(&format!("/api/documents/{id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    assert_eq!(read.body["data"]["draftData"]["title"], "Moved");
    let assets = target.get("/api/assets").cookie(&ada).send().await;
    let url = assets.body["data"][0]["url"].as_str().unwrap().to_string();
    assert_eq!(target.get(&url).send().await.bytes, &b"carried along"[..]);
    // Its directory is the temporary one, removed when dropped.
    target.app.cms.store().close().await;

    // Refusals, each with its reason and nothing changed.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("instance.tar.zst");
    let out = cms(
        &source_db.url,
        &source_config.data_dir,
        &["export", "--output", file.to_str().unwrap()],
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_quiet(&out);
    let written = std::fs::read(&file).unwrap();
    let path = file.to_str().unwrap();
    let (source_dir, target_dir) = (source_config.data_dir.as_path(), target_dir.path());
    refused(
        &source_db.url,
        source_dir,
        &["export", "--output", path],
        "cannot create",
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        written,
        "the existing file is kept"
    );
    refused(&target_url, target_dir, &["import", path], "--into-empty");
    refused(
        &target_url,
        target_dir,
        &["import", path, "--into-empty"],
        "already holds people or organizations",
    );
    refused(
        &target_url,
        target_dir,
        &["export", "--org", "nosuch"],
        "no organization `nosuch`",
    );
    source.stop().await;
    source_db.remove().await;
}

cms_store::both_engines!(the_commands_pipe_an_instance_into_an_empty_database,);
