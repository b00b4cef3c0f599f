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
/// The `auth.secret` of every test app (a `cms` process a test starts on its database needs it).
pub const AUTH_SECRET: &str = "a test secret of at least thirty-two characters";

pub struct TestApp {
    pub app: cms::App,
    pub clock: Arc<OffsetClock>,
    /// Every e-mail the app sent (unless it was built with its configured transport).
    pub mail: Arc<RecordingMailer>,
    dir: PathBuf,
    /// The origin a browser on this instance's pages sends: `server.publicUrl`, else the
    /// address of the `Host` every test request carries.
    origin: String,
}

/// The `Host` of every test request, as an HTTP/1.1 client always sends one.
pub const HOST: &str = "cms.test";

/// The app served on a loopback port until the returned guard drops.
pub struct Served {
    pub origin: String,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

pub async fn serve(app: &TestApp) -> Served {
    serve_on(app, bind().await).await
}

/// A loopback listener on a free port, and its origin: for an app whose configuration must
/// name its own address (`server.publicUrl`) before it is built.
pub async fn bind() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    (listener, origin)
}

/// Serves `app` on a listener from [`bind`].
pub async fn serve_on(
    app: &TestApp,
    (listener, origin): (tokio::net::TcpListener, String),
) -> Served {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let router = app.app.router.clone();
    tokio::spawn(async move {
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .with_graceful_shutdown(async {
            let _ = rx.await;
        })
        .await
        .unwrap();
    });
    Served {
        origin,
        shutdown: Some(tx),
    }
}

/// A process a test started (a `cms` binary), killed when dropped, also when the test panics.
pub struct Process(pub std::process::Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits (a minute at most) until `base` answers 200 on `/healthz`.
pub async fn wait_healthy(base: &str) {
    use std::time::{Duration, Instant};
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !client
        .get(format!("{base}/healthz"))
        .send()
        .await
        .is_ok_and(|r| r.status() == 200)
    {
        assert!(
            Instant::now() < deadline,
            "cms serve did not become healthy"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A port nothing listens on now, for a server a test starts.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An organization (a child of `parent`, when given) with draft documents `(id, type, data)`,
/// written straight to the store: for tests of reach across organizations that do not need
/// the organization endpoints.
pub async fn insert_organization(
    app: &TestApp,
    org_id: &str,
    parent: Option<&str>,
    documents: &[(&str, &str, Value)],
) {
    let mut tx = app.app.cms.store().write_instance_wide().await.unwrap();
    let org = cms_store::organizations::OrganizationRecord {
        id: org_id.into(),
        name: org_id.into(),
        slug: org_id.into(),
        metadata: cms_store::Json(serde_json::json!({})),
        parent_id: parent.map(String::from),
        locales: None,
        require_two_factor: false,
        created_at: 0,
        updated_at: 0,
    };
    tx.insert_organization(&org).await.unwrap();
    tx.act_for(org_id).await.unwrap();
    for (id, doc_type, data) in documents {
        let doc = cms_store::documents::DocumentRecord {
            id: id.to_string(),
            organization_id: org_id.into(),
            doc_type: doc_type.to_string(),
            singleton: false,
            draft_data: cms_store::Json(data.clone()),
            published_data: None,
            published_hash: None,
            revision: 1,
            created_by: None,
            updated_by: None,
            created_at: 0,
            updated_at: 0,
            published_at: None,
        };
        tx.insert_document(&doc).await.unwrap();
    }
    tx.commit().await.unwrap();
}

pub fn config_for(url: &str) -> Config {
    let dir = std::env::temp_dir().join(format!("cms-app-{}", uuid::Uuid::now_v7().simple()));
    let mut config = Config {
        data_dir: dir,
        ..Config::default()
    };
    config.database.url = Some(url.to_string());
    config.auth.secret = Some(AUTH_SECRET.into());
    config
}

impl TestApp {
    pub async fn start(url: &str) -> TestApp {
        TestApp::with(config_for(url), None).await
    }

    pub async fn with(config: Config, storage: Option<Arc<dyn BlobStore>>) -> TestApp {
        TestApp::build(config, storage, Registry::default()).await
    }

    /// An app assembled by `customise` from the builder of `config` (schemas, capabilities,
    /// access policies, ...), recording its e-mail.
    pub async fn custom(config: Config, customise: impl FnOnce(Builder) -> Builder) -> TestApp {
        TestApp::assemble(config, true, customise).await
    }

    /// The active organization of a session.
    pub async fn active_organization(&self, session: &Session) -> String {
        let res = self
            .get("/api/auth/get-session")
            .cookie(session)
            .send()
            .await;
        res.body["session"]["activeOrganizationId"]
            .as_str()
            .expect("an active organization")
            .to_string()
    }

    /// Makes the user of `session` a member of `organization` with `role` (or changes their
    /// role there) and makes it the session's active organization, straight through the store
    /// (the member endpoints are built elsewhere).
    pub async fn join(&self, session: &Session, organization: &str, role: &str) {
        let res = self
            .get("/api/auth/get-session")
            .cookie(session)
            .send()
            .await;
        let session_id = res.body["session"]["id"]
            .as_str()
            .expect("a session")
            .to_string();
        let user_id = session.user["id"].as_str().unwrap().to_string();
        let mut tx = self.app.cms.store().write_instance_wide().await.unwrap();
        if tx.member(organization, &user_id).await.unwrap().is_some() {
            assert!(
                tx.update_member_role(organization, &user_id, role)
                    .await
                    .unwrap()
            );
        } else {
            tx.insert_member(&cms_store::organizations::MemberRecord {
                organization_id: organization.to_string(),
                user_id,
                role: role.to_string(),
                created_at: 0,
            })
            .await
            .expect("the role exists in the organization");
        }
        tx.set_active_organization(&session_id, Some(organization), 0)
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    /// An app with event consumers and job handlers.
    pub async fn with_registry(config: Config, registry: Registry) -> TestApp {
        TestApp::build(config, None, registry).await
    }

    /// An app that sends e-mail through the transport its configuration names (`email.*`)
    /// rather than recording it.
    pub async fn with_configured_mailer(config: Config) -> TestApp {
        TestApp::assemble(config, false, |builder| builder).await
    }

    async fn build(
        config: Config,
        storage: Option<Arc<dyn BlobStore>>,
        registry: Registry,
    ) -> TestApp {
        TestApp::custom(config, |builder| {
            let builder = builder.registry(registry);
            match storage {
                Some(storage) => builder.storage(storage),
                None => builder,
            }
        })
        .await
    }

    async fn assemble(
        config: Config,
        record_mail: bool,
        customise: impl FnOnce(Builder) -> Builder,
    ) -> TestApp {
        let clock = Arc::new(OffsetClock::default());
        let mail = Arc::new(RecordingMailer::default());
        let mut builder = Builder::new(config.clone()).clock(clock.clone());
        if record_mail {
            builder = builder.mailer(mail.clone());
        }
        let app = customise(builder).build().await.expect("the app starts");
        let dir = config.data_dir.clone();
        let origin = config
            .server
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{HOST}"));
        TestApp {
            app,
            clock,
            mail,
            dir,
            origin,
        }
    }

    /// Where the app keeps its database (on SQLite) and its local asset storage (`media/`).
    pub fn data_dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// Stops the app: closes the database and removes its files.
    pub async fn stop(self) {
        self.app.cms.store().close().await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }

    pub fn req(&self, method: Method, path: &str) -> Call<'_> {
        Call {
            app: self,
            builder: Request::builder()
                .method(method)
                .uri(path)
                .header("host", HOST),
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

    /// A `multipart/form-data` body: a file when given as (field, file name, bytes), then the
    /// text fields (the order a server must not depend on: metadata after the file).
    pub fn multipart(self, fields: &[(&str, &str)], file: Option<(&str, &str, &[u8])>) -> Self {
        const BOUNDARY: &str = "cms-test-boundary-7MA4YWxkTrZu0gW";
        let mut body = Vec::new();
        if let Some((name, filename, bytes)) = file {
            body.extend_from_slice(
                format!(
                    "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                )
                .as_bytes(),
            );
            body.extend_from_slice(bytes);
            body.extend_from_slice(b"\r\n");
        }
        for (name, value) in fields {
            body.extend_from_slice(
                format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                    .as_bytes(),
            );
        }
        body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
        self.raw(&format!("multipart/form-data; boundary={BOUNDARY}"), body)
    }

    /// The session cookie, with the `Origin` a browser sends from the instance's own pages
    /// (the CSRF check wants it on writes).
    pub fn cookie(self, session: &Session) -> Self {
        let origin = self.app.origin.clone();
        self.cookie_without_origin(session)
            .header("origin", &origin)
    }

    /// The session cookie alone, as a cross-site form or a careless client would send it.
    pub fn cookie_without_origin(self, session: &Session) -> Self {
        let cookie = session.cookie.clone();
        self.header("cookie", &cookie)
    }

    /// The socket peer's address, as the server sees a real connection.
    pub fn peer(mut self, ip: &str) -> Self {
        let addr = std::net::SocketAddr::new(ip.parse().expect("an IP address"), 40000);
        self.builder = self.builder.extension(axum::extract::ConnectInfo(addr));
        self
    }

    pub fn bearer(self, token: &str) -> Self {
        self.header("authorization", &format!("Bearer {token}"))
    }

    pub fn key(self, key: &str) -> Self {
        self.header("x-api-key", key)
    }

    /// Sends the request and hands back the answer with its body unread: for a stream, which
    /// `send` would wait on forever.
    pub async fn open(self) -> (StatusCode, HeaderMap, Body) {
        let request = self.builder.body(self.body).unwrap();
        let response = self.app.app.router.clone().oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        (parts.status, parts.headers, body)
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
            bytes,
        }
    }
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    /// The body as JSON (`Null` when it is not JSON).
    pub body: Value,
    /// The body as it came.
    pub bytes: axum::body::Bytes,
}

impl Reply {
    /// The body as text (HTML pages, scripts).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// A response header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
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
