//! The Python receiver (`tests/api/webhook_receiver.py`) on a loopback port: it records what
//! each named receiver is sent, answers as scripted, and verifies Standard Webhooks signatures
//! with the `standardwebhooks` package from PyPI, an implementation independent of ours. It
//! stops with the test (its standard input closes when the process guard drops).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::support::{Process, free_port};

pub struct Verifier {
    base: String,
    http: reqwest::Client,
    _process: Process,
}

/// One request a receiver got.
#[derive(Debug, Clone)]
pub struct Hook {
    pub headers: Map<String, Value>,
    pub body: String,
}

impl Hook {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(Value::as_str)
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }

    /// The Standard Webhooks headers, as a receiver hands them to a verifier.
    pub fn signed_headers(&self) -> Value {
        json!({
            "webhook-id": self.header("webhook-id"),
            "webhook-timestamp": self.header("webhook-timestamp"),
            "webhook-signature": self.header("webhook-signature"),
        })
    }
}

impl Verifier {
    pub async fn start() -> Verifier {
        let port = free_port();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/api/webhook_receiver.py");
        let child = Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("python3 runs the webhook receiver");
        let mut process = Process(child);
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if http
                .get(format!("{base}/control/ready"))
                .send()
                .await
                .is_ok_and(|r| r.status() == 200)
            {
                break;
            }
            if let Some(status) = process.0.try_wait().unwrap() {
                panic!(
                    "the webhook receiver exited ({status}): it needs python3 with the \
                     standardwebhooks package (pip install standardwebhooks)"
                );
            }
            assert!(
                Instant::now() < deadline,
                "the webhook receiver did not start"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Verifier {
            base,
            http,
            _process: process,
        }
    }

    /// Where receiver `name` listens.
    pub fn url(&self, name: &str) -> String {
        format!("{}/hook/{name}", self.base)
    }

    /// Receiver `name` answers `statuses` in order, then `otherwise`.
    pub async fn script(&self, name: &str, statuses: &[u16], otherwise: u16) {
        let res = self
            .http
            .post(format!("{}/control/script", self.base))
            .json(&json!({"name": name, "statuses": statuses, "otherwise": otherwise}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
    }

    /// What receiver `name` was sent, oldest first.
    pub async fn received(&self, name: &str) -> Vec<Hook> {
        let hooks: Vec<Value> = self
            .http
            .get(format!("{}/control/received?name={name}", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        hooks
            .into_iter()
            .map(|h| Hook {
                headers: h["headers"].as_object().unwrap().clone(),
                body: h["body"].as_str().unwrap().to_string(),
            })
            .collect()
    }

    /// Whether `standardwebhooks` accepts these headers and body under `secret`; the error it
    /// raised otherwise.
    pub async fn verify(&self, secret: &str, headers: &Value, body: &str) -> Result<(), String> {
        let answer: Value = self
            .http
            .post(format!("{}/control/verify", self.base))
            .json(&json!({"secret": secret, "headers": headers, "body": body}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        match answer["ok"].as_bool() {
            Some(true) => Ok(()),
            _ => Err(answer["error"].as_str().unwrap_or_default().to_string()),
        }
    }

    /// [`Verifier::verify`] of a request as it was received.
    pub async fn verify_hook(&self, secret: &str, hook: &Hook) -> Result<(), String> {
        self.verify(secret, &hook.signed_headers(), &hook.body)
            .await
    }
}
