//! The `cms` binary as a newcomer runs it: no configuration, a fresh directory, the README's
//! commands.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The README's tested command blocks, run in this order in one shell.
const BLOCKS: &[&str] = &["quickstart", "documents", "assets"];

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `cms serve` in `dir` with no configuration but the port, and waits until /healthz
/// answers 200.
async fn start(dir: &Path) -> Server {
    start_with(dir, &[]).await
}

/// [`start`] with environment variables of the README's own examples.
async fn start_with(dir: &Path, env: &[(&str, &str)]) -> Server {
    let port = crate::support::free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_cms"))
        .args(["serve", "--port", &port.to_string()])
        .current_dir(dir)
        .env_remove("CMS_DATABASE_URL")
        .env_remove("CMS_CONFIG")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let server = Server { child, port };
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let url = format!("http://127.0.0.1:{port}/healthz");
        if let Ok(res) = client.get(&url).send().await
            && res.status() == 200
        {
            return server;
        }
        assert!(
            Instant::now() < deadline,
            "cms serve did not become healthy"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The README's `sh` block between `<!-- NAME:start -->` and `<!-- NAME:end -->`.
fn readme_block(readme: &str, name: &str) -> String {
    let start_marker = format!("<!-- {name}:start -->");
    let start = readme
        .find(&start_marker)
        .unwrap_or_else(|| panic!("README has a {name} block"))
        + start_marker.len();
    let end = readme
        .find(&format!("<!-- {name}:end -->"))
        .expect("the block ends");
    let block = &readme[start..end];
    let code_start = block.find("```sh\n").expect("a sh code block") + "```sh\n".len();
    let code_end = block[code_start..].find("```").unwrap() + code_start;
    block[code_start..code_end].to_string()
}

fn readme_script() -> String {
    readme_blocks(BLOCKS)
}

fn readme_blocks(blocks: &[&str]) -> String {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    blocks
        .iter()
        .map(|name| readme_block(&readme, name))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs the README's `blocks` in one shell, as written, against a fresh `cms serve` started
/// with `env` in a new directory; the shell's standard output, once it succeeded.
async fn run_readme(blocks: &[&str], env: &[(&str, &str)]) -> String {
    let dir = std::env::temp_dir().join(format!("cms-bin-{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = start_with(&dir, env).await;
    let script =
        readme_blocks(blocks).replace("127.0.0.1:3000", &format!("127.0.0.1:{}", server.port));
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(&dir)
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "README blocks {blocks:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
    stdout
}

/// The README's two-language example, after the blocks it continues, on a server started
/// as it says (`CMS_LOCALES_AVAILABLE=en,de`).
#[tokio::test]
async fn the_readme_two_language_example_works() {
    let stdout = run_readme(
        &["quickstart", "documents", "locales"],
        &[("CMS_LOCALES_AVAILABLE", "en,de")],
    )
    .await;
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("every command prints JSON"))
        .collect();
    // ... the quickstart's and documents' five, then the German save, its published read,
    // every locale, and the locales.
    assert_eq!(lines.len(), 9, "{stdout}");
    assert_eq!(
        lines[6]["data"]["publishedData"]["title"], "Willkommen",
        "{stdout}"
    );
    assert_eq!(lines[6]["data"]["_meta"]["locale"], "de", "{stdout}");
    assert_eq!(
        lines[7]["data"]["draftData"]["title"],
        serde_json::json!({"en": "Welcome", "de": "Willkommen"}),
        "{stdout}"
    );
    assert_eq!(
        lines[8]["data"]["available"],
        serde_json::json!(["en", "de"]),
        "{stdout}"
    );
}

/// The README's website example, after the blocks it continues: the `public` role granted,
/// an anonymous read naming the organization, and its revalidation answered 304.
#[tokio::test]
async fn the_readme_website_example_works() {
    let stdout = run_readme(&["quickstart", "documents", "delivery"], &[]).await;
    let lines: Vec<&str> = stdout.lines().collect();
    // ... the quickstart's and documents' five, then the grant, the anonymous list, the 304.
    assert_eq!(lines.len(), 8, "{stdout}");
    let grant: serde_json::Value = serde_json::from_str(lines[5]).unwrap();
    assert_eq!(
        grant["data"]["capabilities"],
        serde_json::json!(["document.read"]),
        "{stdout}"
    );
    let list: serde_json::Value = serde_json::from_str(lines[6]).unwrap();
    assert_eq!(
        list["data"][0]["publishedData"]["title"], "Hello",
        "{stdout}"
    );
    assert!(list["data"][0].get("draftData").is_none(), "{stdout}");
    assert_eq!(lines[7], "304", "{stdout}");
}

#[tokio::test]
async fn a_fresh_start_serves_and_the_readme_commands_work() {
    let dir = std::env::temp_dir().join(format!("cms-bin-{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = start(&dir).await;
    assert!(
        dir.join("cms-data/cms.db").exists(),
        "SQLite under ./cms-data by default"
    );
    assert!(
        dir.join("cms-data/media").is_dir(),
        "assets under ./cms-data/media by default"
    );
    let secret = dir.join("cms-data/auth-secret");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&secret).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    // The README's commands, as written, against this server's port.
    let script = readme_script().replace("127.0.0.1:3000", &format!("127.0.0.1:{}", server.port));
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(&dir)
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "README quickstart failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The last command prints the uploaded file as served from /media.
    let (json_lines, file) = stdout.trim_end().rsplit_once('\n').unwrap_or_default();
    assert_eq!(file, "Hello, file.", "{stdout}");
    let lines: Vec<serde_json::Value> = json_lines
        .lines()
        .map(|l| serde_json::from_str(l).expect("every other command prints JSON"))
        .collect();
    // sign-up, sign-in, the key list, the created post, the query.
    assert_eq!(lines.len(), 5, "{stdout}");
    assert_eq!(lines[2]["data"][0]["name"], "my-first-key", "{stdout}");
    assert_eq!(
        lines[3]["data"]["publishedData"]["title"], "Hello",
        "{stdout}"
    );
    assert_eq!(
        lines[4]["data"][0]["draftData"]["title"], "Hello",
        "{stdout}"
    );
    assert_eq!(lines[4]["pagination"]["total"], 1, "{stdout}");

    // SIGTERM stops it gracefully with a zero exit status.
    let mut server = server;
    let pid = server.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "cms serve did not stop on SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status}");

    // The generated secret survives a restart: the same data directory keeps its sessions.
    let again = start(&dir).await;
    drop(again);
    assert!(secret.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn version_and_migrate_run_without_a_server() {
    let out = Command::new(env!("CARGO_BIN_EXE_cms"))
        .arg("version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("cms {}", env!("CARGO_PKG_VERSION"))
    );

    let dir = std::env::temp_dir().join(format!("cms-migrate-{}", uuid::Uuid::now_v7().simple()));
    let db = dir.join("elsewhere/cms.db");
    let out = Command::new(env!("CARGO_BIN_EXE_cms"))
        .arg("migrate")
        .current_dir(std::env::temp_dir())
        .env("CMS_DATABASE_URL", format!("sqlite://{}", db.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(db.exists(), "migrate creates the database the URL names");

    // `cms openapi` prints the document the server would serve, and only it, on stdout.
    let out = Command::new(env!("CARGO_BIN_EXE_cms"))
        .arg("openapi")
        .env("CMS_DATA_DIR", &dir)
        .env("CMS_DATABASE_URL", format!("sqlite://{}", db.display()))
        .env("CMS_GRAPHQL_PATH", "/graph/ql")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc["paths"]["/graph/ql"]["post"].is_object());
    assert!(doc["components"]["schemas"]["PostData"].is_object());

    // A bad setting stops the start with the key named, and a non-zero status.
    let out = Command::new(env!("CARGO_BIN_EXE_cms"))
        .arg("migrate")
        .env("CMS_DATABASE_URL", format!("sqlite://{}", db.display()))
        .env("CMS_HEALTH_TIMEOUT_MS", "soon")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("CMS_HEALTH_TIMEOUT_MS"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `cms user create ARGS` on `db` with `password` on standard input.
fn user_create(dir: &Path, db: &str, args: &[&str], password: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cms"))
        .args(["user", "create"])
        .args(args)
        .current_dir(dir)
        .env("CMS_DATABASE_URL", db)
        .env("CMS_AUTH_SECRET", SECRET)
        .env("CMS_AUTH_FIRST_ADMIN", "none")
        .env_remove("CMS_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(password.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

const SECRET: &str = "a binary test secret of thirty-two characters or more";

#[tokio::test]
async fn user_create_provisions_the_first_admin_out_of_band() {
    use crate::support::{PASSWORD, TestApp, config_for};
    let dir = std::env::temp_dir().join(format!("cms-user-{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}", dir.join("cms.db").display());
    let first = [
        "--email",
        "Root@Example.com",
        "--name",
        "Root",
        "--password-stdin",
    ];
    let out = user_create(&dir, &db, &first, &format!("{PASSWORD}\n"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stdout.contains(PASSWORD) && !stderr.contains(PASSWORD));
    let user: serde_json::Value = serde_json::from_str(stdout.trim()).expect("the user as JSON");
    assert_eq!(user["role"], "super_admin");
    assert_eq!(user["email"], "root@example.com");

    // A second run is refused, naming the flag that adds a further user.
    let out = user_create(&dir, &db, &first, PASSWORD);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--additional"));
    // The password never comes from the command line.
    let out = user_create(
        &dir,
        &db,
        &["--email", "x@example.com", "--name", "X"],
        PASSWORD,
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--password-stdin"));
    let further = [
        "--email",
        "ops@example.com",
        "--name",
        "Ops",
        "--password-stdin",
        "--additional",
        "--role",
        "admin",
    ];
    let out = user_create(&dir, &db, &further, PASSWORD);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ops: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ops["role"], "admin");

    // The administrator signs in (the trailing newline was not part of the password) and owns
    // "Default", as the first sign-up would.
    let mut config = config_for(&db);
    config.auth.secret = Some(SECRET.into());
    config.auth.first_admin = "none".into();
    let app = TestApp::with(config, None).await;
    let res = app
        .post(
            "/api/auth/sign-in/email",
            serde_json::json!({"email": "root@example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    let session = crate::support::Session::from(&res);
    let got = app
        .get("/api/auth/get-session")
        .cookie(&session)
        .send()
        .await;
    let org = got.body["session"]["activeOrganizationId"]
        .as_str()
        .expect("Default is active")
        .to_string();
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    assert_eq!(
        tx.organization_by_id(&org).await.unwrap().unwrap().slug,
        "default"
    );
    drop(tx);
    app.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn serve_logs_the_claim_code_once_and_the_first_sign_up_uses_it() {
    use std::io::BufRead;
    let dir = std::env::temp_dir().join(format!("cms-claim-{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let port = crate::support::free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cms"))
        .args(["serve", "--port", &port.to_string()])
        .current_dir(&dir)
        .env_remove("CMS_DATABASE_URL")
        .env_remove("CMS_CONFIG")
        .env("CMS_AUTH_FIRST_ADMIN", "claimCode")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let (lines, received) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines.send(line);
        }
    });
    let server = Server { child, port };
    let marker = "printed before): ";
    let mut log = Vec::new();
    let code = loop {
        let line = received
            .recv_timeout(Duration::from_secs(30))
            .expect("the claim code is logged at start");
        log.push(line.clone());
        if let Some(at) = line.find(marker) {
            let code: String = line[at + marker.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            break code;
        }
    };
    assert_eq!(code.len(), 20, "{log:?}");

    let client = reqwest::Client::new();
    let url = format!("http://127.0.0.1:{}/api/auth/sign-up/email", server.port);
    let body = serde_json::json!({"name": "Ada", "email": "ada@example.com", "password": "correct horse battery"});
    let refused = client.post(&url).json(&body).send().await.unwrap();
    assert_eq!(refused.status(), 403);
    let res = client
        .post(&url)
        .header("x-cms-bootstrap-code", &code)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let user: serde_json::Value = res.json().await.unwrap();
    assert_eq!(user["user"]["role"], "super_admin");
    drop(server);
    // Everything logged: the code appears on one line only.
    log.extend(received.try_iter());
    assert_eq!(
        log.iter().filter(|l| l.contains(&code)).count(),
        1,
        "{log:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
