//! Rows of the security table for the live event stream (issue 25, CONTRACT.md section 16):
//! the stream is a read of the log, with the log's rule (document.read in the active
//! organization) and the documents' rules on what an event may tell.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::{DOCS, Fx, forbidden, unauthorized};
use crate::sse::SseReader;
use crate::support::Session;

const STREAM: &str = "/api/events/stream";
const PUBLISHED: &str = "?types=document.published";

impl Fx {
    /// A stream of published documents as `who` (a session), which must open.
    async fn stream_as(&self, who: &Session) -> SseReader {
        let (status, _, body) = self
            .app
            .get(&format!("{STREAM}{PUBLISHED}"))
            .cookie(who)
            .open()
            .await;
        assert_eq!(status, StatusCode::OK);
        SseReader::of_body(body)
    }

    /// Publishes a new document of `doc_type` with `key` (of its organization): its id.
    async fn publish_with_key(&self, key: &str, doc_type: &str) -> String {
        let res = self
            .app
            .post(
                DOCS,
                json!({"type": doc_type, "data": {"title": "streamed"}, "publish": true}),
            )
            .key(key)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
        res.body["data"]["id"].as_str().unwrap().to_string()
    }

    /// Publishes a new document of `doc_type` as `who`: its id.
    async fn publish_as(&self, who: &Session, doc_type: &str) -> String {
        let res = self
            .app
            .post(
                DOCS,
                json!({"type": doc_type, "data": {"title": "streamed"}, "publish": true}),
            )
            .cookie(who)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
        res.body["data"]["id"].as_str().unwrap().to_string()
    }
}

/// The payload of the next event, which must be about `id`.
async fn next_is(stream: &mut SseReader, id: &str, what: &str) -> Value {
    let (_, _, data) = stream.event().await;
    assert_eq!(data["payload"]["documentId"], id, "{what}: {data}");
    data["payload"].clone()
}

pub(super) async fn event_stream_refuses_anonymous_readers_and_preview_tokens(fx: Arc<Fx>) {
    let app = &fx.app;
    // The parent's `public` role may read (as its rows grant it): still no stream.
    let res = app
        .req(Method::PATCH, "/api/roles/public")
        .json(json!({"capabilities": ["document.read", "asset.read"]}))
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let org = fx
        .get(&fx.ada, &format!("/api/organizations/{}", fx.parent))
        .await;
    let slug = org.body["data"]["slug"].as_str().unwrap().to_string();
    unauthorized(
        "x-cms-organization",
        &app.get(STREAM)
            .header("x-cms-organization", &slug)
            .send()
            .await,
    );
    unauthorized(
        "?organization=",
        &app.get(&format!("{STREAM}?organization={slug}"))
            .send()
            .await,
    );
    unauthorized("no credential", &app.get(STREAM).send().await);
    // A preview link's token reads one draft and nothing else.
    let res = app
        .req(Method::POST, &format!("{DOCS}/{}/preview", fx.beta))
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let token = res.body["data"]["token"].as_str().unwrap().to_string();
    unauthorized(
        "x-cms-preview",
        &app.get(STREAM).header("x-cms-preview", &token).send().await,
    );
    unauthorized(
        "?preview=",
        &app.get(&format!("{STREAM}?preview={token}")).send().await,
    );
}

pub(super) async fn event_stream_needs_document_read(fx: Arc<Fx>) {
    let assets_only = fx
        .app
        .create_key(
            &fx.admin,
            json!({"name": "assets", "permissions": ["write"], "capabilities": ["asset.read"]}),
        )
        .await;
    forbidden(
        "a key without document.read",
        &fx.app.get(STREAM).key(&assets_only).send().await,
    );
    // The read key of the same organization may.
    let (status, _, _) = fx.app.get(STREAM).key(&fx.read_key).open().await;
    assert_eq!(status, StatusCode::OK);
}

pub(super) async fn event_stream_never_sends_another_organizations_events(fx: Arc<Fx>) {
    let mut parent = fx.stream_as(&fx.editor).await;
    let mut outsider = fx.stream_as(&fx.stranger).await;
    // The child's and the outsider's publishes, then one in the parent: the parent's stream
    // gets the parent's first (its child's is not its own), the outsider's its own only.
    fx.publish_with_key(&fx.child_key, "note").await;
    let theirs = fx.publish_with_key(&fx.stranger_key, "note").await;
    let ours = fx.publish_as(&fx.admin, "note").await;
    next_is(&mut parent, &ours, "the parent's stream").await;
    next_is(&mut outsider, &theirs, "the outsider's stream").await;
    let theirs = fx.publish_with_key(&fx.stranger_key, "note").await;
    next_is(&mut outsider, &theirs, "the outsider's stream, again").await;
}

pub(super) async fn event_stream_leaves_out_hidden_types(fx: Arc<Fx>) {
    let mut editor = fx.stream_as(&fx.editor).await;
    let mut admin = fx.stream_as(&fx.admin).await;
    // Memos are the admin's alone; notes hide a field from the editor.
    let memo = fx.publish_as(&fx.admin, "memo").await;
    let note = fx.publish_as(&fx.admin, "note").await;
    let seen = next_is(&mut editor, &note, "the editor's stream skips the memo").await;
    assert!(seen.get("publishedHash").is_none(), "{seen}");
    let seen = next_is(&mut admin, &memo, "the admin's stream").await;
    assert!(seen["publishedHash"].is_string(), "{seen}");
    let seen = next_is(&mut admin, &note, "the admin's stream").await;
    assert!(seen["publishedHash"].is_string(), "{seen}");
}
