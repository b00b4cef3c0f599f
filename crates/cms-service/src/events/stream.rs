//! The live event stream of one caller (GET /api/events/stream, `cms events tail`; CONTRACT.md
//! section 16): the events of the caller's organization after a given id replayed from the log
//! first, then the new ones as the hub hands them over, each as the caller may see it.
//!
//! No gap and no duplicate between the two: the stream joins the hub before it replays, and
//! replays only positions the hub had read when it joined ([`Subscription::through`], less the
//! positions the hub still awaited); every later event reaches it live.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use cms_core::CoreCapability;
use cms_store::Store;
use cms_store::event_feed::ReplayQuery;
use cms_store::events::EventRecord;

use super::EventView;
use super::hub::Subscription;
use super::visibility::{TypeVisibility, visible};
use crate::Inner;
use crate::actor::Actor;
use crate::error::{Error, Result};

/// Events replayed per read of the log.
const REPLAY_PAGE: i64 = 100;

/// What a stream asks for.
#[derive(Debug, Clone, Default)]
pub struct EventStreamRequest {
    /// Replay the events of the log after this event id first (`Last-Event-ID`, `?after=`).
    pub after: Option<String>,
    /// Only events of these types; every type when empty. Each must be built in or declared.
    pub types: Vec<String>,
}

/// An open stream: [`EventStream::next`] yields its events. Dropping it closes it.
pub struct EventStream {
    store: Arc<dyn Store>,
    /// The rest of the replay; `None` once it is done.
    replay: Option<Replay>,
    subscription: Subscription,
    /// How far the caller may read each document type, decided when the stream opened.
    visibility: HashMap<String, TypeVisibility>,
}

struct Replay {
    query: ReplayQuery,
    page: VecDeque<EventRecord>,
    /// The log may hold more: the last page read was full.
    more: bool,
}

/// Opens a stream for `actor` (document.read in its active organization). `readable_type`
/// says how far the actor may read each document type (the documents' access rules decide,
/// above this module); it is asked once per registered type, here.
pub(crate) async fn open(
    inner: &Inner,
    actor: &Actor,
    request: EventStreamRequest,
    readable_type: impl Fn(&str) -> TypeVisibility,
) -> Result<EventStream> {
    let organization = actor.require(CoreCapability::DocumentRead)?.to_string();
    check_request(inner, &request)?;
    let visibility = inner
        .schemas
        .documents()
        .map(|schema| (schema.name.clone(), readable_type(&schema.name)))
        .collect();
    let subscription = inner
        .event_hub
        .subscribe(&organization, request.types.clone())
        .await?;
    let replay = request.after.map(|after| Replay {
        query: ReplayQuery {
            organization,
            after: Some(after),
            through: subscription.through,
            pending: subscription.pending.clone(),
            types: request.types,
            limit: REPLAY_PAGE,
        },
        page: VecDeque::new(),
        more: true,
    });
    Ok(EventStream {
        store: inner.store.clone(),
        replay,
        subscription,
        visibility,
    })
}

/// 400 for an `after` that is no event id and for a type nobody declared.
fn check_request(inner: &Inner, request: &EventStreamRequest) -> Result<()> {
    if let Some(after) = &request.after
        && uuid::Uuid::try_parse(after).is_err()
    {
        return Err(Error::bad_request(
            "`after` (or `Last-Event-ID`) is an event id",
        ));
    }
    if let Some(unknown) = request
        .types
        .iter()
        .find(|t| !inner.event_types.is_known(t))
    {
        return Err(Error::bad_request(format!(
            "`types`: `{unknown}` is not an event type (built in or declared)"
        )));
    }
    Ok(())
}

impl EventStream {
    /// The next event the caller may see, replayed or live; waits for one. `None` when the
    /// stream has ended: the server drains, or the stream fell too far behind (the client
    /// reconnects with the last id it got).
    pub async fn next(&mut self) -> Result<Option<EventView>> {
        loop {
            let Some(record) = self.next_record().await? else {
                return Ok(None);
            };
            let visibility = &self.visibility;
            let readable =
                |doc_type: &str| *visibility.get(doc_type).unwrap_or(&TypeVisibility::Whole);
            if let Some(view) = visible(record.into(), readable) {
                return Ok(Some(view));
            }
        }
    }

    async fn next_record(&mut self) -> Result<Option<EventRecord>> {
        if let Some(record) = self.next_replayed().await? {
            return Ok(Some(record));
        }
        Ok(self
            .subscription
            .receiver
            .recv()
            .await
            .map(Arc::unwrap_or_clone))
    }

    /// The next event of the replay, reading the log a page at a time; `None` once done.
    async fn next_replayed(&mut self) -> Result<Option<EventRecord>> {
        let Some(replay) = &mut self.replay else {
            return Ok(None);
        };
        if replay.page.is_empty() && replay.more {
            let mut tx = self.store.read_for(&replay.query.organization).await?;
            replay.page = tx.feed_replay(&replay.query).await?.into();
            replay.more = replay.page.len() as i64 == replay.query.limit;
            if let Some(last) = replay.page.back() {
                replay.query.after = Some(last.id.clone());
            }
        }
        let next = replay.page.pop_front();
        if next.is_none() {
            self.replay = None;
        }
        Ok(next)
    }
}
