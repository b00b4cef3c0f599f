//! `cms backup` (issue 28 point 2, CONTRACT.md section 19): a copy of the SQLite database taken
//! while documents are being written opens, passes `PRAGMA integrity_check` and holds a state
//! the writes went through; an existing target is refused; PostgreSQL is sent to pg_dump.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use axum::http::StatusCode;
use serde_json::json;
use sqlx::{Connection, SqliteConnection};

use crate::people_support::first_owner;
use crate::support::{TestApp, config_for};

async fn a_backup_under_writes_is_whole(url: String) {
    let app = TestApp::start(&url).await;
    let config = config_for(&url);
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("backup.db");
    if url.starts_with("postgres") {
        let refused = cms::backup(&config, &target).await.unwrap_err().to_string();
        assert!(refused.contains("pg_dump"), "{refused}");
        assert!(!target.exists());
        app.stop().await;
        return;
    }
    let (ada, _) = first_owner(&app).await;
    let done = AtomicBool::new(false);
    let written = AtomicUsize::new(0);
    let writes = async {
        while !done.load(Ordering::SeqCst) || written.load(Ordering::SeqCst) < 20 {
            let n = written.load(Ordering::SeqCst);
            let res = app
                .post(
                    "/api/documents",
                    json!({"type": "post", "data": {"title": format!("Post {n}")}, "publish": true}),
                )
                .cookie(&ada)
                .send()
                .await;
            assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
            written.fetch_add(1, Ordering::SeqCst);
        }
    };
    let backup = async {
        // Some writes before, more during and after.
        while written.load(Ordering::SeqCst) < 10 {
            tokio::task::yield_now().await;
        }
        let result = cms::backup(&config, &target).await;
        done.store(true, Ordering::SeqCst);
        result
    };
    let ((), result) = tokio::join!(writes, backup);
    result.unwrap();

    let mut copy = SqliteConnection::connect(&format!("sqlite://{}?mode=ro", target.display()))
        .await
        .unwrap();
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut copy)
        .await
        .unwrap();
    assert_eq!(check, "ok");
    let documents: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM documents")
        .fetch_one(&mut copy)
        .await
        .unwrap();
    let total = written.load(Ordering::SeqCst) as i64;
    assert!((10..=total).contains(&documents), "{documents} of {total}");
    // Every document in the copy came with its version and its event: one commit's state.
    let versions: i64 =
        sqlx::query_scalar("SELECT COUNT(DISTINCT document_id) FROM document_versions")
            .fetch_one(&mut copy)
            .await
            .unwrap();
    assert_eq!(versions, documents);
    copy.close().await.unwrap();

    // The copy is a working database: an app starts on it and reads what it holds.
    let restored = TestApp::start(&format!("sqlite://{}", target.display())).await;
    let res = restored
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "ada@example.com", "password": crate::support::PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    let again = cms::backup(&config, &target).await.unwrap_err().to_string();
    assert!(again.contains("exists already"), "{again}");
    restored.stop().await;
    app.stop().await;
}

cms_store::both_engines!(a_backup_under_writes_is_whole,);
