//! E-mail transports: SMTP against a real SMTP server on loopback (aiosmtpd, which CI
//! installs), and the log transport as the default.

use std::process::Stdio;
use std::time::Duration;

use axum::http::StatusCode;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::people_support::first_owner;
use crate::support::{TestApp, config_for};

/// An SMTP sink: `python -m aiosmtpd` printing every message it receives to its stdout.
struct SmtpSink {
    child: Child,
    port: u16,
    output: tokio::sync::mpsc::UnboundedReceiver<String>,
}

impl SmtpSink {
    async fn start() -> SmtpSink {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new(python())
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}")])
            .env("PYTHONUNBUFFERED", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("python -m aiosmtpd starts (pip install aiosmtpd)");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let (tx, output) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return SmtpSink {
                    child,
                    port,
                    output,
                };
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("aiosmtpd did not listen on port {port}");
    }

    /// Everything received so far as one text, with quoted-printable soft line breaks and
    /// `=3D` undone, once `needle` appears in it (or after ten seconds).
    async fn received_containing(&mut self, needle: &str) -> String {
        let mut raw = String::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let text = raw.replace("=\n", "").replace("=3D", "=");
            if text.contains(needle) {
                return text;
            }
            match tokio::time::timeout_at(deadline, self.output.recv()).await {
                Ok(Some(line)) => {
                    raw.push_str(line.trim_end_matches('\r'));
                    raw.push('\n');
                }
                _ => panic!("the SMTP server never received {needle}; it got:\n{raw}"),
            }
        }
    }

    async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

fn python() -> &'static str {
    let works = |name: &str| {
        std::process::Command::new(name)
            .args(["-c", "import aiosmtpd"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if works("python") { "python" } else { "python3" }
}

async fn smtp_delivers_through_a_real_server(url: String) {
    let mut sink = SmtpSink::start().await;
    let mut config = config_for(&url);
    config.email.transport = "smtp".into();
    config.email.from = "CMS Test <cms@test.example>".into();
    config.email.smtp.host = Some("127.0.0.1".into());
    config.email.smtp.port = Some(sink.port);
    config.email.smtp.security = "none".into();
    let app = TestApp::with_configured_mailer(config).await;
    let (ada, _) = first_owner(&app).await;

    let res = app
        .post(
            "/api/organizations/invitations",
            json!({"email": "bob@example.com", "role": "editor"}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    // The link with its secret, exactly as the inviter's answer shows it.
    let link = res.body["data"]["acceptUrl"].as_str().unwrap();
    assert!(
        link.starts_with("http://cms.test/admin/accept-invitation?token="),
        "{link}"
    );
    let received = sink.received_containing(link).await;
    assert!(received.contains("To: bob@example.com"), "{received}");
    assert!(received.contains("cms@test.example"), "{received}");
    assert!(
        received.contains("Subject: You are invited to Default"),
        "{received}"
    );
    assert!(
        app.mail.sent().is_empty(),
        "the recording mailer was not used"
    );

    // The reset e-mail goes out on a task of its own, through the same transport.
    let res = app
        .post(
            "/api/user/request-password-reset",
            json!({"email": "ada@example.com"}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    sink.received_containing("/admin/reset-password?token=")
        .await;

    // With the server gone, an invitation cannot be delivered: it is withdrawn (503).
    sink.stop().await;
    let res = app
        .post(
            "/api/organizations/invitations",
            json!({"email": "carol@example.com", "role": "viewer"}),
        )
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::SERVICE_UNAVAILABLE, "Service Unavailable");
    let list = app
        .get("/api/organizations/invitations")
        .cookie(&ada)
        .send()
        .await;
    let emails: Vec<_> = list.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["email"].clone())
        .collect();
    assert_eq!(emails, vec![json!("bob@example.com")]);
    app.stop().await;
}

async fn the_log_transport_needs_no_mail_server(url: String) {
    // The default configuration: e-mail goes to the log, so a local install can invite.
    let app = TestApp::with_configured_mailer(config_for(&url)).await;
    let (ada, _) = first_owner(&app).await;
    let res = app
        .post(
            "/api/organizations/invitations",
            json!({"email": "bob@example.com", "role": "editor"}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    app.stop().await;
}

async fn a_bad_smtp_configuration_stops_the_start(url: String) {
    let mut config = config_for(&url);
    config.email.transport = "smtp".into();
    config.email.smtp.host = Some("127.0.0.1".into());
    config.email.from = "not an address".into();
    let err = cms::Builder::new(config)
        .build()
        .await
        .err()
        .expect("refused");
    assert!(err.to_string().contains("email"), "{err}");
}

cms_store::both_engines!(
    smtp_delivers_through_a_real_server,
    the_log_transport_needs_no_mail_server,
    a_bad_smtp_configuration_stops_the_start,
);
