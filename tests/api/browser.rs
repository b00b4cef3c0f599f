//! Headless Chromium (Debian's `chromium` and `chromium-driver`, which `.ci/run` installs),
//! driven over WebDriver. The browser reaches loopback only: every other host name fails to
//! resolve, so a page that needs the internet visibly breaks.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder};
use serde_json::json;

pub struct Browser {
    pub client: Client,
    /// Taken when the browser is stopped, so it is stopped once.
    driver: Option<Child>,
}

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

impl Browser {
    pub async fn start() -> Browser {
        Browser::launch(&[]).await
    }

    /// A browser whose pages see the system prefer a dark colour scheme
    /// (`prefers-color-scheme: dark`), as a person with dark mode on has it. Blink's own
    /// setting (0 is dark): `--force-dark-mode` also reports dark, but is documented for the
    /// browser's own interface; this one is what the media query reads.
    pub async fn start_dark() -> Browser {
        Browser::launch(&["--blink-settings=preferredColorScheme=0"]).await
    }

    async fn launch(extra: &[&str]) -> Browser {
        let port = crate::support::free_port();
        // chromedriver leads a process group of its own, with the Chromium it starts, so the
        // whole group can be stopped together (killing chromedriver alone orphans Chromium).
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{CHROMEDRIVER} could not start (.ci/run installs chromium-driver): {e}")
            });
        let mut args = vec![
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
        ];
        args.extend_from_slice(extra);
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({ "binary": CHROMIUM, "args": args }),
        );
        let webdriver = format!("http://127.0.0.1:{port}");
        let mut last_error = String::new();
        for _ in 0..100 {
            match ClientBuilder::rustls()
                .expect("rustls roots")
                .capabilities(capabilities.clone())
                .connect(&webdriver)
                .await
            {
                Ok(client) => {
                    return Browser {
                        client,
                        driver: Some(driver),
                    };
                }
                Err(e) => last_error = e.to_string(),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("chromedriver did not answer: {last_error}");
    }

    pub async fn stop(mut self) {
        let _ = self.client.clone().close().await;
        self.kill_all();
    }

    /// Stops chromedriver and every Chromium process it started (its process group).
    fn kill_all(&mut self) {
        let Some(mut driver) = self.driver.take() else {
            return;
        };
        let group = format!("-{}", driver.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = driver.kill();
        let _ = driver.wait();
    }
}

/// A test that panics never reaches `stop`: its browser still goes, all of it.
impl Drop for Browser {
    fn drop(&mut self) {
        self.kill_all();
    }
}
