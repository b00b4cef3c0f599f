//! Reading the log (GET /api/events), for people and keys: read only.

use cms_store::events::EventQuery;
use serde_json::Value;

use super::{DOCUMENT_PUBLISHED, EventView};
use crate::Inner;
use crate::actor::Actor;
use crate::error::Result;
use crate::paging::{Pagination, page_or_default, page_window};
use crate::scope::{Scope, reading_scope};

#[derive(Debug, Clone, Default)]
pub struct EventListRequest {
    pub event_type: Option<String>,
    pub after: Option<String>,
    /// From 1; the first page when absent.
    pub page: Option<i64>,
    /// 1 to `MAX_PAGE_SIZE`; `DEFAULT_PAGE_SIZE` when absent.
    pub page_size: Option<i64>,
    pub scope: Scope,
}

/// GET /api/events: the log, read only. `sees_whole_type` says whether the actor may read every
/// field of a document type (the documents' access rules decide it, above this module).
pub(crate) async fn list_events(
    inner: &Inner,
    actor: &Actor,
    request: EventListRequest,
    sees_whole_type: impl Fn(&str) -> bool,
) -> Result<(Vec<EventView>, Pagination)> {
    let organization = reading_scope(actor, request.scope)?;
    let (page, page_size) = page_or_default(request.page, request.page_size);
    let (limit, offset) = page_window(page, page_size)?;
    let mut tx = inner.store.read_instance_wide().await?;
    let (events, total) = tx
        .events(&EventQuery {
            organization,
            event_type: request.event_type,
            after: request.after,
            limit,
            offset,
        })
        .await?;
    let views = events
        .into_iter()
        .map(|e| without_hidden_digest(&sees_whole_type, e.into()))
        .collect();
    Ok((views, Pagination::new(total, page, page_size)))
}

/// A `document.published` event's `publishedHash` digests the whole published copy: a
/// reader who may not read every field of the type does not get it (it would confirm
/// guesses of the hidden values), as document reads leave it out for them.
fn without_hidden_digest(
    sees_whole_type: impl Fn(&str) -> bool,
    mut event: EventView,
) -> EventView {
    if event.event_type == DOCUMENT_PUBLISHED {
        let hidden = event
            .payload
            .get("documentType")
            .and_then(Value::as_str)
            .is_some_and(|t| !sees_whole_type(t));
        if let (true, Some(payload)) = (hidden, event.payload.as_object_mut()) {
            payload.remove("publishedHash");
        }
    }
    event
}
