//! The `cms` binary as a newcomer runs it: no configuration, a fresh directory, the README's
//! commands.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const QUICKSTART_START: &str = "<!-- quickstart:start -->";
const QUICKSTART_END: &str = "<!-- quickstart:end -->";

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

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `cms serve` in `dir` with no configuration but the port, and waits until /healthz
/// answers 200.
async fn start(dir: &Path) -> Server {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_cms"))
        .args(["serve", "--port", &port.to_string()])
        .current_dir(dir)
        .env_remove("CMS_DATABASE_URL")
        .env_remove("CMS_CONFIG")
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

fn readme_quickstart() -> String {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme
        .find(QUICKSTART_START)
        .expect("README has a quickstart block")
        + QUICKSTART_START.len();
    let end = readme
        .find(QUICKSTART_END)
        .expect("README's quickstart block ends");
    let block = &readme[start..end];
    let code_start = block.find("```sh\n").expect("a sh code block") + "```sh\n".len();
    let code_end = block[code_start..].find("```").unwrap() + code_start;
    block[code_start..code_end].to_string()
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
    let script =
        readme_quickstart().replace("127.0.0.1:3000", &format!("127.0.0.1:{}", server.port));
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
    let last = stdout.lines().last().unwrap_or_default();
    let listed: serde_json::Value =
        serde_json::from_str(last).expect("the last command prints JSON");
    assert_eq!(listed["success"], true, "{last}");
    assert_eq!(listed["data"][0]["name"], "my-first-key", "{last}");

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
