//! Reading the log (GET /api/events), for people and keys: read only.

use cms_store::events::EventQuery;

use super::{EventView, TypeVisibility, left_out, visible};
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

/// GET /api/events: the log, read only. `readable_type` says how much of a document type the
/// actor may read (the documents' access rules decide it, above this module); each event is
/// shown as [`visible`] decides. The events it leaves out are left out by the store already
/// ([`left_out`]), so pages are full and `total` counts only what the reader may see.
pub(crate) async fn list_events(
    inner: &Inner,
    actor: &Actor,
    request: EventListRequest,
    readable_type: impl Fn(&str) -> TypeVisibility,
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
            left_out: left_out(
                inner.schemas.documents().map(|s| s.name.as_str()),
                &readable_type,
            ),
            limit,
            offset,
        })
        .await?;
    let views = events
        .into_iter()
        .filter_map(|e| visible(e.into(), &readable_type))
        .collect();
    Ok((views, Pagination::new(total, page, page_size)))
}
