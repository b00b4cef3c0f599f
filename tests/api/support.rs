//! The test harness: an app on a fresh database, and a small request helper.

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use cms::service::{BlobStore, OffsetClock, Registry};

use crate::people_support::RecordingMailer;
use cms::{Builder, Config};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

pub const PASSWORD: &str = "correct horse battery";

pub struct TestApp {
    pub app: cms::App,
    pub clock: Arc<OffsetClock>,
    /// Every e-mail the app sent (unless it was built with its configured transport).
    pub mail: Arc<RecordingMailer>,
    dir: PathBuf,
}

pub fn config_for(url: &str) -> Config {
    let dir = std::env::temp_dir().join(format!("cms-app-{}", uuid::Uuid::now_v7().simple()));
    let mut config = Config {
        data_dir: dir,
        ..Config::default()
    };
    config.database.url = Some(url.to_string());
    config.auth.secret = Some("a test secret of at least thirty-two characters".into());
    config
}

impl TestApp {
    pub async fn start(url: &str) -> TestApp {
        TestApp::with(config_for(url), None).await
    }

    pub async fn with(config: Config, storage: Option<Arc<dyn BlobStore>>) -> TestApp {
        TestApp::build(config, storage, Registry::default()).await
    }

    /// An app with event consumers and job handlers.
    pub async fn with_registry(config: Config, registry: Registry) -> TestApp {
        TestApp::build(config, None, registry).await
    }

    /// An app that sends e-mail through the transport its configuration names (`email.*`)
    /// rather than recording it.
    pub async fn with_configured_mailer(config: Config) -> TestApp {
        TestApp::assemble(config, None, Registry::default(), false).await
    }

    async fn build(
        config: Config,
        storage: Option<Arc<dyn BlobStore>>,
        registry: Registry,
    ) -> TestApp {
        TestApp::assemble(config, storage, registry, true).await
    }

    async fn assemble(
        config: Config,
        storage: Option<Arc<dyn BlobStore>>,
        registry: Registry,
        record_mail: bool,
    ) -> TestApp {
        let clock = Arc::new(OffsetClock::default());
        let mail = Arc::new(RecordingMailer::default());
        let mut builder = Builder::new(config.clone())
            .clock(clock.clone())
            .registry(registry);
        if let Some(storage) = storage {
            builder = builder.storage(storage);
        }
        if record_mail {
            builder = builder.mailer(mail.clone());
        }
        let app = builder.build().await.expect("the app starts");
        let dir = config.data_dir.clone();
        TestApp {
            app,
            clock,
            mail,
            dir,
        }
    }

    /// Stops the app: closes the database and removes its files.
    pub async fn stop(self) {
        self.app.cms.store().close().await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }

    pub fn req(&self, method: Method, path: &str) -> Call<'_> {
        Call {
            app: self,
            builder: Request::builder().method(method).uri(path),
            body: Body::empty(),
        }
    }

    pub fn get(&self, path: &str) -> Call<'_> {
        self.req(Method::GET, path)
    }

    pub fn post(&self, path: &str, body: Value) -> Call<'_> {
        self.req(Method::POST, path).json(body)
    }

    /// Signs up and returns (bearer token, cookie header value, user).
    pub async fn sign_up(&self, name: &str, email: &str) -> Session {
        let res = self
            .post(
                "/api/auth/sign-up/email",
                serde_json::json!({"name": name, "email": email, "password": PASSWORD}),
            )
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "sign-up: {}", res.body);
        Session::from(&res)
    }

    /// Creates an API key as `session` and returns its secret.
    pub async fn create_key(&self, session: &Session, body: Value) -> String {
        let res = self
            .post("/api/settings/api-keys", body)
            .cookie(session)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
        res.body["data"]["key"].as_str().unwrap().to_string()
    }
}

#[derive(Clone)]
pub struct Session {
    pub token: String,
    pub cookie: String,
    pub user: Value,
}

impl From<&Reply> for Session {
    fn from(res: &Reply) -> Self {
        let set_cookie = res
            .headers
            .get("set-cookie")
            .expect("a session cookie")
            .to_str()
            .unwrap();
        let cookie = set_cookie.split(';').next().unwrap().to_string();
        Session {
            token: res.body["token"].as_str().unwrap().to_string(),
            cookie,
            user: res.body["user"].clone(),
        }
    }
}

pub struct Call<'a> {
    app: &'a TestApp,
    builder: axum::http::request::Builder,
    body: Body,
}

impl Call<'_> {
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.builder = self.builder.header(name, value);
        self
    }

    pub fn json(mut self, body: Value) -> Self {
        self.builder = self.builder.header("content-type", "application/json");
        self.body = Body::from(body.to_string());
        self
    }

    pub fn raw(mut self, content_type: &str, body: impl Into<Body>) -> Self {
        self.builder = self.builder.header("content-type", content_type);
        self.body = body.into();
        self
    }

    pub fn cookie(self, session: &Session) -> Self {
        let cookie = session.cookie.clone();
        self.header("cookie", &cookie)
    }

    pub fn bearer(self, token: &str) -> Self {
        self.header("authorization", &format!("Bearer {token}"))
    }

    pub fn key(self, key: &str) -> Self {
        self.header("x-api-key", key)
    }

    pub async fn send(self) -> Reply {
        let request = self.builder.body(self.body).unwrap();
        let response = self.app.app.router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or(Value::Null)
        };
        Reply {
            status,
            headers,
            body,
        }
    }
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    /// Asserts the auth layer's body: exactly `{ "error": ... }`.
    pub fn assert_access_refusal(&self, status: StatusCode, error: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.body, serde_json::json!({ "error": error }));
    }

    /// Asserts the handler layer's body and returns its message.
    pub fn assert_handler_error(&self, status: StatusCode, error: &str) -> String {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.body["success"], false, "{}", self.body);
        assert_eq!(self.body["error"], error, "{}", self.body);
        self.body["message"]
            .as_str()
            .expect("a message")
            .to_string()
    }
}
