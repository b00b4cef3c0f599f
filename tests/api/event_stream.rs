//! The live event stream (issue 25, CONTRACT.md section 16): GET /api/events/stream and
//! `cms events tail`, on both engines. Every wait is bounded (`sse::WAIT`); nothing here times
//! the service except the one promise the contract makes, an event of another instance within a
//! second.

use std::process::Stdio;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode};
use cms::core::schema::parse_schemas;
use cms::service::documents::NewDocument;
use cms::service::{EventDeclaration, NewEvent, Settings};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::sse::{Sse, SseReader, WAIT};
use crate::support::{Session, TestApp, config_for};

const STREAM: &str = "/api/events/stream";
const THING: &str = "test.thing.happened";
const OTHER: &str = "test.other.happened";
const PUBLISHED: &str = "document.published";
/// The auth secret of `config_for`, which a second process needs to accept the same sessions.
const SECRET: &str = "a test secret of at least thirty-two characters";

/// Notes with a field only `admin` reads; memos only `admin` reads at all.
fn schemas_json() -> Value {
    json!([
        { "type": "document", "name": "note", "fields": [
            { "name": "title", "type": "string" },
            { "name": "secret", "type": "string", "access": { "read": ["admin"] } }
        ] },
        { "type": "document", "name": "memo", "access": { "read": ["admin"] },
          "fields": [{ "name": "title", "type": "string" }] }
    ])
}

fn schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&schemas_json()).unwrap()
}

/// An app with the note and memo types and two custom event types, its service settings tuned.
async fn app_with(url: &str, tune: impl FnOnce(&mut Settings) + Send + 'static) -> TestApp {
    let mut config = config_for(url);
    config.auth.invite_only = false;
    TestApp::custom(config, |b| {
        let declare = |name| EventDeclaration::from_json(name, &json!([])).unwrap();
        b.schemas(schemas())
            .event_type(declare(THING))
            .event_type(declare(OTHER))
            .tune(tune)
    })
    .await
}

async fn app(url: &str) -> TestApp {
    app_with(url, |_| {}).await
}

/// Opens a stream as `session` (with `headers`), which must be accepted.
async fn open_with(
    app: &TestApp,
    session: &Session,
    query: &str,
    headers: &[(&str, &str)],
) -> SseReader {
    let mut call = app.get(&format!("{STREAM}{query}")).bearer(&session.token);
    for (name, value) in headers {
        call = call.header(name, value);
    }
    let (status, headers, body) = call.open().await;
    assert_eq!(status, StatusCode::OK, "{query}");
    assert_eq!(content_type(&headers), "text/event-stream", "{query}");
    SseReader::of_body(body)
}

async fn open(app: &TestApp, session: &Session, query: &str) -> SseReader {
    open_with(app, session, query, &[]).await
}

fn content_type(headers: &HeaderMap) -> &str {
    headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// Appends a custom event in `org` (as a plugin would): its id.
async fn emit(app: &TestApp, org: &str, event_type: &str, n: i64) -> String {
    let actor = app.app.cms.plugin_actor("test", org).await.unwrap();
    app.app
        .cms
        .events()
        .emit(&actor, event_type, json!({}))
        .await
        .unwrap_or_else(|e| panic!("emit {event_type} #{n}: {e}"))
        .id
}

/// Several custom events appended in one unit of work (with a document): their ids, oldest
/// first, as `session` lists them.
async fn emit_together(app: &TestApp, session: &Session, org: &str, count: usize) -> Vec<String> {
    let actor = app.app.cms.plugin_actor("test", org).await.unwrap();
    let input = NewDocument {
        doc_type: "note".into(),
        data: json!({"title": "carrier"}),
        publish: false,
        locale: None,
    };
    app.app
        .cms
        .documents()
        .create_emitting(&actor, input, |_| {
            (0..count)
                .map(|_| NewEvent::new(THING, json!({})))
                .collect()
        })
        .await
        .unwrap();
    let res = app
        .get(&format!("/api/events?type={THING}&pageSize={count}"))
        .bearer(&session.token)
        .send()
        .await;
    let mut ids: Vec<String> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), count, "{}", res.body);
    ids.reverse();
    ids
}

/// Creates a note as `session` (published when asked): its id.
async fn note(app: &TestApp, session: &Session, doc_type: &str, publish: bool) -> String {
    let data = match doc_type {
        "note" => json!({"title": "T", "secret": "S"}),
        _ => json!({"title": "T"}),
    };
    let res = app
        .post(
            "/api/documents",
            json!({"type": doc_type, "data": data, "publish": publish}),
        )
        .bearer(&session.token)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

/// The event a stream sent must be the next of `event_type` and `id` (when given).
fn is(got: &(String, String, Value), event_type: &str, id: Option<&str>) {
    assert_eq!(got.1, event_type, "{got:?}");
    assert_eq!(got.2["type"], event_type, "{got:?}");
    assert_eq!(
        got.0,
        got.2["id"].as_str().unwrap(),
        "the SSE id is the event's"
    );
    if let Some(id) = id {
        assert_eq!(got.0, id, "{got:?}");
    }
}

async fn ada(app: &TestApp) -> (Session, String) {
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    (ada, org)
}

// ---------------------------------------------------------------------------------------------

async fn a_stream_receives_what_a_request_commits(url: String) {
    let app = app(&url).await;
    let (ada, org) = ada(&app).await;
    let mut published = open(&app, &ada, &format!("?types={PUBLISHED}")).await;
    let mut everything = open(&app, &ada, "").await;
    let id = note(&app, &ada, "note", true).await;
    let got = published.event().await;
    is(&got, PUBLISHED, None);
    assert_eq!(got.2["payload"]["documentId"], id.as_str());
    assert_eq!(got.2["organizationId"], org.as_str());
    // `data` is the event as GET /api/events lists it.
    let listed = app
        .get(&format!("/api/events?type={PUBLISHED}"))
        .bearer(&ada.token)
        .send()
        .await;
    assert_eq!(listed.body["data"][0], got.2);
    // A custom event too, on the stream that takes every type (after whatever the publish
    // appended).
    let thing = emit(&app, &org, THING, 1).await;
    loop {
        let got = everything.event().await;
        if got.1 == THING {
            is(&got, THING, Some(&thing));
            break;
        }
    }
    // Events appended together in one unit of work arrive together, in their order.
    let mut things = open(&app, &ada, &format!("?types={THING}")).await;
    for id in emit_together(&app, &ada, &org, 3).await {
        is(&things.event().await, THING, Some(&id));
    }
    app.stop().await;
}

async fn replay_then_live_without_a_gap_or_a_repeat(url: String) {
    let app = app(&url).await;
    let (ada, org) = ada(&app).await;
    let mut ids = Vec::new();
    for n in 0..3 {
        ids.push(emit(&app, &org, THING, n).await);
    }
    let only = format!("?types={THING}");
    // Last-Event-ID: what came after it, then the new ones, each once.
    let mut stream = open_with(&app, &ada, &only, &[("last-event-id", &ids[0])]).await;
    is(&stream.event().await, THING, Some(&ids[1]));
    is(&stream.event().await, THING, Some(&ids[2]));
    ids.push(emit(&app, &org, THING, 3).await);
    is(&stream.event().await, THING, Some(&ids[3]));
    ids.push(emit(&app, &org, THING, 4).await);
    is(&stream.event().await, THING, Some(&ids[4]));
    // `?after=` alike.
    let mut after = open(&app, &ada, &format!("{only}&after={}", ids[2])).await;
    is(&after.event().await, THING, Some(&ids[3]));
    is(&after.event().await, THING, Some(&ids[4]));
    // Both: the header is the client's latest word.
    let mut both = open_with(
        &app,
        &ada,
        &format!("{only}&after={}", ids[0]),
        &[("last-event-id", &ids[3])],
    )
    .await;
    is(&both.event().await, THING, Some(&ids[4]));
    // The newest id: nothing to replay.
    let mut newest = open_with(&app, &ada, &only, &[("last-event-id", &ids[4])]).await;
    ids.push(emit(&app, &org, THING, 5).await);
    for reader in [&mut stream, &mut after, &mut both, &mut newest] {
        is(&reader.event().await, THING, Some(&ids[5]));
    }
    app.stop().await;
}

async fn types_filter_and_bad_requests_are_400(url: String) {
    let app = app(&url).await;
    let (ada, org) = ada(&app).await;
    let mut other = open(&app, &ada, &format!("?types={OTHER}")).await;
    let mut both = open(&app, &ada, &format!("?types={THING},{OTHER}")).await;
    let thing = emit(&app, &org, THING, 0).await;
    let second = emit(&app, &org, OTHER, 1).await;
    is(&other.event().await, OTHER, Some(&second));
    is(&both.event().await, THING, Some(&thing));
    is(&both.event().await, OTHER, Some(&second));
    for query in [
        "?types=nope.nope".to_string(),
        format!("?types={THING},,{OTHER}"),
        format!("?types={THING},document.nosuch"),
        "?after=not-an-id".to_string(),
    ] {
        let res = app
            .get(&format!("{STREAM}{query}"))
            .bearer(&ada.token)
            .send()
            .await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    let res = app
        .get(STREAM)
        .bearer(&ada.token)
        .header("last-event-id", "1; DROP TABLE events")
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    app.get(STREAM)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

async fn readers_get_only_what_they_may_read(url: String) {
    let app = app(&url).await;
    let (_ada, org) = ada(&app).await;
    let admin = app.sign_up("Admin", "admin@example.com").await;
    app.join(&admin, &org, "admin").await;
    let editor = app.sign_up("Editor", "editor@example.com").await;
    app.join(&editor, &org, "editor").await;
    let only = format!("?types={PUBLISHED}");
    let mut admins = open(&app, &admin, &only).await;
    let mut editors = open(&app, &editor, &only).await;
    let memo = note(&app, &admin, "memo", true).await;
    let note = note(&app, &admin, "note", true).await;
    // The admin reads both types whole.
    for id in [&memo, &note] {
        let got = admins.event().await;
        assert_eq!(got.2["payload"]["documentId"], id.as_str());
        assert!(got.2["payload"]["publishedHash"].is_string(), "{got:?}");
    }
    // The editor may not read memos at all, nor the note's secret: the memo's event is left
    // out, the note's comes without its digest.
    let got = editors.event().await;
    assert_eq!(got.2["payload"]["documentId"], note.as_str(), "{got:?}");
    assert_eq!(got.2["payload"]["documentType"], "note");
    assert!(got.2["payload"].get("publishedHash").is_none(), "{got:?}");
    app.stop().await;
}

async fn another_organizations_events_never_arrive(url: String) {
    let app = app(&url).await;
    let (ada, org) = ada(&app).await;
    let res = app
        .post(
            "/api/organizations",
            json!({"name": "Other", "slug": "other"}),
        )
        .bearer(&ada.token)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let other_org = res.body["data"]["id"].as_str().unwrap().to_string();
    let stranger = app.sign_up("Stranger", "stranger@example.com").await;
    app.join(&stranger, &other_org, "admin").await;
    let only = format!("?types={THING}");
    let mut mine = open(&app, &ada, &only).await;
    let mut theirs = open(&app, &stranger, &only).await;
    emit(&app, &other_org, THING, 0).await;
    let marker = emit(&app, &org, THING, 1).await;
    is(&mine.event().await, THING, Some(&marker));
    let got = theirs.event().await;
    assert_eq!(got.2["organizationId"], other_org.as_str());
    let marker = emit(&app, &other_org, THING, 2).await;
    is(&theirs.event().await, THING, Some(&marker));
    app.stop().await;
}

async fn past_the_cap_a_stream_is_429(url: String) {
    let app = app_with(&url, |s| s.events.max_streams = 2).await;
    let (ada, org) = ada(&app).await;
    let first = open(&app, &ada, "").await;
    let _second = open(&app, &ada, "").await;
    let res = app.get(STREAM).bearer(&ada.token).send().await;
    let message = res.assert_handler_error(StatusCode::TOO_MANY_REQUESTS, "Too Many Requests");
    assert!(message.contains("event streams"), "{message}");
    let retry: u64 = res
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!(retry >= 1);
    // The cap is per organization.
    let res = app
        .post(
            "/api/organizations",
            json!({"name": "Other", "slug": "other"}),
        )
        .bearer(&ada.token)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let stranger = app.sign_up("Stranger", "stranger@example.com").await;
    app.join(&stranger, res.body["data"]["id"].as_str().unwrap(), "admin")
        .await;
    let _theirs = open(&app, &stranger, "").await;
    // A stream that ends gives its place back.
    drop(first);
    let mut again = open(&app, &ada, &format!("?types={THING}")).await;
    let id = emit(&app, &org, THING, 0).await;
    is(&again.event().await, THING, Some(&id));
    app.stop().await;
}

async fn an_idle_stream_gets_keep_alive_comments(url: String) {
    let app = app_with(&url, |s| s.events.keep_alive = Duration::from_millis(100)).await;
    let (ada, org) = ada(&app).await;
    let mut stream = open(&app, &ada, &format!("?types={THING}")).await;
    assert!(
        matches!(stream.next().await, Some(Sse::Comment(_))),
        "a comment line first"
    );
    let id = emit(&app, &org, THING, 0).await;
    is(&stream.event().await, THING, Some(&id));
    app.stop().await;
}

async fn a_stream_that_falls_behind_is_ended(url: String) {
    let app = app_with(&url, |s| s.events.buffer = 2).await;
    let (ada, org) = ada(&app).await;
    let only = format!("?types={THING}");
    let mut slow = open(&app, &ada, &only).await;
    let mut fast = open(&app, &ada, &only).await;
    // One at a time: the fast reader takes each before the next commits (so its buffer never
    // fills), and once it has one, the hub has handed that one to every stream.
    let mut ids = Vec::new();
    for n in 0..5 {
        ids.push(emit(&app, &org, THING, n).await);
        is(&fast.event().await, THING, Some(&ids[n as usize]));
    }
    // The slow one kept what its buffer held, and was ended at the next.
    is(&slow.event().await, THING, Some(&ids[0]));
    is(&slow.event().await, THING, Some(&ids[1]));
    slow.ends().await;
    // Its client reconnects with the last id it got and misses nothing.
    let mut again = open_with(&app, &ada, &only, &[("last-event-id", &ids[1])]).await;
    for id in &ids[2..] {
        is(&again.event().await, THING, Some(id));
    }
    app.stop().await;
}

async fn draining_ends_every_stream(url: String) {
    let app = app(&url).await;
    let (ada, _org) = ada(&app).await;
    let mut stream = open(&app, &ada, "").await;
    app.app.cms.end_event_streams();
    stream.ends().await;
    let res = app.get(STREAM).bearer(&ada.token).send().await;
    res.assert_handler_error(StatusCode::SERVICE_UNAVAILABLE, "Service Unavailable");
    app.stop().await;
}

// ---------------------------------------------------------------------------------------------
// Other processes: the real binary on the test's database.

/// `cms <args>` on the test's database, with the test app's auth secret and schemas.
fn binary(url: &str, dir: &std::path::Path, args: &[&str]) -> tokio::process::Child {
    let schemas = dir.join("schemas.json");
    std::fs::write(&schemas, schemas_json().to_string()).unwrap();
    tokio::process::Command::new(env!("CARGO_BIN_EXE_cms"))
        .args(args)
        .current_dir(dir)
        .env("CMS_DATABASE_URL", url)
        .env("CMS_DATA_DIR", dir)
        .env("CMS_AUTH_SECRET", SECRET)
        .env("CMS_AUTH_INVITE_ONLY", "false")
        .env("CMS_SCHEMAS_PATHS", &schemas)
        .env("RUST_LOG", "info")
        .env_remove("CMS_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts")
}

async fn serve(url: &str, dir: &std::path::Path) -> (tokio::process::Child, String) {
    let port = crate::support::free_port();
    let child = binary(url, dir, &["serve", "--port", &port.to_string()]);
    let base = format!("http://127.0.0.1:{port}");
    crate::support::wait_healthy(&base).await;
    (child, base)
}

/// Sends `signal` (`INT`, `TERM`) to the child and waits (bounded) for it to exit: its status.
pub(crate) async fn stop(
    child: &mut tokio::process::Child,
    signal: &str,
) -> std::process::ExitStatus {
    let pid = child.id().expect("still running").to_string();
    let sent = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    tokio::time::timeout(WAIT, child.wait())
        .await
        .unwrap_or_else(|_| panic!("the process did not stop within {WAIT:?} of SIG{signal}"))
        .unwrap()
}

async fn another_process_commits_reach_the_stream(url: String) {
    let app = app(&url).await;
    let (ada, org) = ada(&app).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut other, base) = serve(&url, dir.path()).await;
    let mut stream = open(&app, &ada, &format!("?types={PUBLISHED}")).await;
    let client = reqwest::Client::new();
    let publish_there = |title: &'static str| {
        client
            .post(format!("{base}/api/documents"))
            .bearer_auth(&ada.token)
            .json(&json!({"type": "note", "data": {"title": title}, "publish": true}))
            .send()
    };
    // A first publish there, untimed: a process that just started may still be building its
    // field indexes, which its first write waits for (seen: ~1 s on a loaded CI machine).
    let res = publish_there("warm-up").await.unwrap();
    assert_eq!(res.status(), 201);
    stream.event().await;
    // Committed by the other process: the test's own commits play no part in its arrival.
    let sent = Instant::now();
    let res = publish_there("elsewhere").await.unwrap();
    assert_eq!(res.status(), 201);
    let created: Value = res.json().await.unwrap();
    let got = stream.event().await;
    let delay = sent.elapsed();
    is(&got, PUBLISHED, None);
    assert_eq!(got.2["payload"]["documentId"], created["data"]["id"]);
    assert_eq!(got.2["organizationId"], org.as_str());
    eprintln!("an event of another process arrived {delay:?} after its request was sent");
    if url.starts_with("postgres") {
        // The contract's promise; LISTEN makes it milliseconds (SQLite polls: no promise made
        // beyond arrival here).
        assert!(delay < Duration::from_secs(1), "{delay:?}");
    }
    assert!(stop(&mut other, "TERM").await.success());
    app.stop().await;
}

async fn a_draining_server_ends_its_streams_and_stops(url: String) {
    let app = app(&url).await;
    let (ada, _org) = ada(&app).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut server, base) = serve(&url, dir.path()).await;
    let res = reqwest::Client::new()
        .get(format!("{base}{STREAM}"))
        .bearer_auth(&ada.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let mut stream = SseReader::of_response(res);
    // Left open by its client, the stream neither holds the shutdown nor is cut mid-event.
    let status = stop(&mut server, "TERM").await;
    assert!(status.success(), "{status:?}");
    stream.ends().await;
    app.stop().await;
}

async fn events_tail_prints_what_commits_after_it_started(url: String) {
    let app = app(&url).await;
    let (ada, org) = ada(&app).await;
    let dir = tempfile::tempdir().unwrap();
    let mut tail = binary(&url, dir.path(), &["events", "tail", "--types", PUBLISHED]);
    // It says when its stream is open (on standard error, with the logs).
    let mut log = BufReader::new(tail.stderr.take().unwrap()).lines();
    tokio::time::timeout(WAIT, async {
        while let Some(line) = log.next_line().await.unwrap() {
            if line.contains("tailing the event stream") {
                return;
            }
        }
        panic!("cms events tail ended before its stream opened");
    })
    .await
    .expect("the tail opens its stream");
    let id = note(&app, &ada, "note", true).await;
    let mut out = BufReader::new(tail.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(WAIT, out.next_line())
        .await
        .expect("a line for the event")
        .unwrap()
        .expect("a line, not the end");
    let event: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(event["type"], PUBLISHED);
    assert_eq!(event["organizationId"], org.as_str());
    assert_eq!(event["payload"]["documentId"], id.as_str());
    // The operator reads the type whole.
    assert!(event["payload"]["publishedHash"].is_string(), "{event}");
    // Ctrl-C ends it cleanly.
    assert!(stop(&mut tail, "INT").await.success());
    // An organization that does not exist is refused with its name.
    let missing = binary(
        &url,
        dir.path(),
        &["events", "tail", "--organization", "nosuch"],
    );
    let output = tokio::time::timeout(WAIT, missing.wait_with_output())
        .await
        .expect("it stops")
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("nosuch"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    app.stop().await;
}

cms_store::both_engines!(
    a_stream_receives_what_a_request_commits,
    replay_then_live_without_a_gap_or_a_repeat,
    types_filter_and_bad_requests_are_400,
    readers_get_only_what_they_may_read,
    another_organizations_events_never_arrive,
    past_the_cap_a_stream_is_429,
    an_idle_stream_gets_keep_alive_comments,
    a_stream_that_falls_behind_is_ended,
    draining_ends_every_stream,
    another_process_commits_reach_the_stream,
    a_draining_server_ends_its_streams_and_stops,
    events_tail_prints_what_commits_after_it_started,
);
