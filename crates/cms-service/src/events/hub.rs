//! One reader of the event feed per process, fanning new events out to the open streams
//! (CONTRACT.md section 16; docs/DECISIONS.md, "The event stream").
//!
//! The hub runs while at least one stream is open. It reads the feed instance-wide once per
//! wake-up, in position order ([`cms_store::event_feed`]): after a commit in this process that
//! appended events, after any process's commit on PostgreSQL (its listener), and at least every
//! `poll` (which alone serves other processes on SQLite, and covers a lost notification). Each
//! new event goes to the streams of its organization that want its type, through a bounded
//! channel per stream: a stream whose channel is full is ended (its client reconnects with
//! `Last-Event-ID`), so a slow reader never holds the hub or the others.
//!
//! The [`Cursor`] remembers the newest position read and the positions below it that were
//! still empty (a transaction that took a position and has not committed, on PostgreSQL), and
//! asks for those again until they fill or [`LATE_COMMIT_WINDOW`] has passed: a late commit with
//! a smaller id is delivered once, and nothing is delivered twice.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cms_store::Store;
use cms_store::event_feed::{FeedEvent, FeedHead};
use cms_store::events::EventRecord;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use crate::error::{Error, Result};

/// How long an empty position below the newest one is waited for: longer than any unit of work
/// runs from its insert into `events` to its commit. Past it the position is taken for a
/// rolled-back insert (or the event is left to the log: GET /api/events still lists it).
pub(crate) const LATE_COMMIT_WINDOW: Duration = Duration::from_secs(60);

/// The empty positions the hub remembers at most: a sequence that jumps far ahead (PostgreSQL
/// after a crash skips up to 32; a restarted sequence could skip millions) costs no more.
const MAX_PENDING: usize = 1000;

/// Events read per statement; a full batch is followed at once by the next.
const BATCH: i64 = 500;

/// `Retry-After` of a stream refused for the cap: streams end when their clients leave, which
/// the server learns at its next write to them, at the latest a keep-alive later.
const RETRY_AFTER_SECS: u64 = 15;

/// The bounds of the live event stream.
#[derive(Debug, Clone)]
pub struct EventStreamSettings {
    /// Open streams one organization may hold on this instance (`events.maxStreams`); past it
    /// a new stream is refused (429).
    pub max_streams: usize,
    /// How often an idle stream sends a comment line, so proxies keep it open.
    pub keep_alive: Duration,
    /// The hub reads the feed at least this often (other processes on SQLite, a lost
    /// notification on PostgreSQL).
    pub poll: Duration,
    /// Events waiting for a stream's client before the stream is ended as too slow.
    pub buffer: usize,
}

impl Default for EventStreamSettings {
    fn default() -> Self {
        EventStreamSettings {
            max_streams: 100,
            keep_alive: Duration::from_secs(15),
            poll: Duration::from_millis(250),
            buffer: 256,
        }
    }
}

/// Where the hub stands in the feed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cursor {
    /// The newest position read.
    head: i64,
    /// Empty positions below `head`, with when they were first seen empty.
    pending: BTreeMap<i64, Instant>,
}

impl Cursor {
    /// Starts at the feed's head, waiting for the positions still empty below it.
    pub(crate) fn start(head: FeedHead, now: Instant) -> Cursor {
        let mut cursor = Cursor {
            head: head.head,
            pending: head.missing.into_iter().map(|p| (p, now)).collect(),
        };
        cursor.bound();
        cursor
    }

    pub(crate) fn head(&self) -> i64 {
        self.head
    }

    /// The positions still awaited, ascending.
    pub(crate) fn pending(&self) -> Vec<i64> {
        self.pending.keys().copied().collect()
    }

    /// Takes in what the feed answered for [`Cursor::head`] and [`Cursor::pending`] (in
    /// position order) and keeps the events not taken in before: those past the head, and
    /// those filling an awaited position. Positions skipped on the way become awaited; awaited
    /// ones older than `window` are given up.
    pub(crate) fn advance(
        &mut self,
        read: Vec<FeedEvent>,
        now: Instant,
        window: Duration,
    ) -> Vec<EventRecord> {
        let mut fresh = Vec::with_capacity(read.len());
        for FeedEvent { position, event } in read {
            if position > self.head {
                let skipped_from = (self.head + 1).max(position - MAX_PENDING as i64);
                self.pending
                    .extend((skipped_from..position).map(|p| (p, now)));
                self.head = position;
                fresh.push(event);
            } else if self.pending.remove(&position).is_some() {
                fresh.push(event);
            }
        }
        self.pending
            .retain(|_, since| now.saturating_duration_since(*since) < window);
        self.bound();
        fresh
    }

    /// Forgets the oldest awaited positions past [`MAX_PENDING`].
    fn bound(&mut self) {
        while self.pending.len() > MAX_PENDING {
            self.pending.pop_first();
        }
    }
}

/// One open stream, as the hub routes to it.
struct Slot {
    organization: String,
    /// Only these types; every type when empty.
    types: Vec<String>,
    sender: mpsc::Sender<Arc<EventRecord>>,
}

impl Slot {
    fn wants(&self, event: &EventRecord) -> bool {
        event.organization_id.as_deref() == Some(self.organization.as_str())
            && (self.types.is_empty() || self.types.contains(&event.event_type))
    }
}

#[derive(Default)]
struct State {
    /// A task reads the feed (exactly while streams are open, give or take its last wake-up).
    running: bool,
    /// The server drains: no stream any more, and none is opened.
    closed: bool,
    next_id: u64,
    streams: HashMap<u64, Slot>,
    per_organization: HashMap<String, usize>,
    cursor: Cursor,
}

impl State {
    /// Opens a stream's slot, within the organization's cap.
    fn join(
        &mut self,
        shared: &Arc<Shared>,
        organization: &str,
        types: Vec<String>,
    ) -> Result<Subscription> {
        if self.closed {
            return Err(Error::Unavailable("the server is shutting down".into()));
        }
        let open = self
            .per_organization
            .entry(organization.to_string())
            .or_default();
        if *open >= shared.settings.max_streams {
            return Err(Error::TooManyStreams {
                retry_after_secs: RETRY_AFTER_SECS,
            });
        }
        *open += 1;
        let (sender, receiver) = mpsc::channel(shared.settings.buffer.max(1));
        let id = self.next_id;
        self.next_id += 1;
        self.streams.insert(
            id,
            Slot {
                organization: organization.to_string(),
                types,
                sender,
            },
        );
        Ok(Subscription {
            receiver,
            through: self.cursor.head(),
            pending: self.cursor.pending(),
            _slot: SlotGuard {
                shared: shared.clone(),
                id,
            },
        })
    }

    /// Closes a stream's slot (its sender goes: the stream ends after what it holds).
    fn leave(&mut self, id: u64) {
        if let Some(slot) = self.streams.remove(&id)
            && let Some(open) = self.per_organization.get_mut(&slot.organization)
        {
            *open -= 1;
            if *open == 0 {
                self.per_organization.remove(&slot.organization);
            }
        }
    }

    /// Hands each event to the streams that want it; ends those that cannot take it.
    fn fan_out(&mut self, events: Vec<EventRecord>) {
        let mut ended = Vec::new();
        for event in events {
            let event = Arc::new(event);
            for (id, slot) in &self.streams {
                if !slot.wants(&event) {
                    continue;
                }
                match slot.sender.try_send(event.clone()) {
                    Ok(()) => {}
                    Err(TrySendError::Full(_)) => {
                        tracing::info!(
                            organization = %slot.organization,
                            "an event stream fell too far behind and was ended"
                        );
                        ended.push(*id);
                    }
                    Err(TrySendError::Closed(_)) => ended.push(*id),
                }
            }
            for id in ended.drain(..) {
                self.leave(id);
            }
        }
    }
}

struct Shared {
    store: Arc<dyn Store>,
    settings: EventStreamSettings,
    state: Mutex<State>,
    /// Held while a reader task starts, so two first streams start one.
    starting: tokio::sync::Mutex<()>,
    /// Tells the reader task to look at the streams again (one left, or the server drains).
    wake: tokio::sync::Notify,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind: keep using it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The process's reader of the feed (see the module documentation). Cheap to clone.
#[derive(Clone)]
pub(crate) struct Hub {
    shared: Arc<Shared>,
}

/// A stream's place at the hub: the live events of its organization and types, and where the
/// hub stood when it joined, which its replay of the log stops at (positions up to `through`
/// and not `pending`: every later one comes live).
pub(crate) struct Subscription {
    pub(crate) receiver: mpsc::Receiver<Arc<EventRecord>>,
    pub(crate) through: i64,
    pub(crate) pending: Vec<i64>,
    _slot: SlotGuard,
}

/// Leaves the hub when the stream is dropped.
struct SlotGuard {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        let mut state = self.shared.state();
        state.leave(self.id);
        if state.streams.is_empty() {
            self.shared.wake.notify_one();
        }
    }
}

impl Hub {
    pub(crate) fn new(store: Arc<dyn Store>, settings: EventStreamSettings) -> Hub {
        Hub {
            shared: Arc::new(Shared {
                store,
                settings,
                state: Mutex::default(),
                starting: tokio::sync::Mutex::new(()),
                wake: tokio::sync::Notify::new(),
            }),
        }
    }

    /// Opens a stream of `organization`'s events (of `types`, or all), starting the reader when
    /// it is the only one. 429 past the organization's cap, 503 once the server drains.
    pub(crate) async fn subscribe(
        &self,
        organization: &str,
        types: Vec<String>,
    ) -> Result<Subscription> {
        let shared = &self.shared;
        {
            let mut state = shared.state();
            if state.running || state.closed {
                return state.join(shared, organization, types);
            }
        }
        let _starting = shared.starting.lock().await;
        {
            let mut state = shared.state();
            if state.running || state.closed {
                return state.join(shared, organization, types);
            }
        }
        let head = shared
            .store
            .read_instance_wide()
            .await?
            .feed_head(MAX_PENDING as i64)
            .await?;
        let mut state = shared.state();
        state.cursor = Cursor::start(head, Instant::now());
        let subscription = state.join(shared, organization, types)?;
        state.running = true;
        tokio::spawn(read_feed(shared.clone()));
        Ok(subscription)
    }

    /// The streams open on this instance now (GET /metrics).
    pub(crate) fn open_streams(&self) -> usize {
        self.shared.state().streams.len()
    }

    /// Ends every stream and refuses new ones: the server drains, and an open stream must not
    /// hold it.
    pub(crate) fn close(&self) {
        let mut state = self.shared.state();
        state.closed = true;
        let ids: Vec<u64> = state.streams.keys().copied().collect();
        for id in ids {
            state.leave(id);
        }
        self.shared.wake.notify_one();
    }
}

/// The reader task: reads what is new at every wake-up and fans it out, until no stream is open.
async fn read_feed(shared: Arc<Shared>) {
    let mut commits = shared.store.watch_event_commits();
    loop {
        if !still_wanted(&shared) {
            return;
        }
        read_new(&shared).await;
        tokio::select! {
            () = commits.changed() => {}
            () = tokio::time::sleep(shared.settings.poll) => {}
            () = shared.wake.notified() => {}
        }
    }
}

/// Whether streams are open; when none is, the task stops (under the lock, so a stream
/// joining meanwhile starts a new one).
fn still_wanted(shared: &Shared) -> bool {
    let mut state = shared.state();
    if state.streams.is_empty() {
        state.running = false;
        return false;
    }
    true
}

/// Reads the feed from the cursor until it is caught up, fanning out what is new.
async fn read_new(shared: &Shared) {
    loop {
        let (after, missing) = {
            let state = shared.state();
            (state.cursor.head(), state.cursor.pending())
        };
        let read = match read_batch(shared, after, &missing).await {
            Ok(read) => read,
            Err(e) => {
                // The next wake-up tries again; the streams keep waiting meanwhile.
                tracing::warn!(error = %e, "reading new events failed");
                return;
            }
        };
        let full = read.len() as i64 == BATCH;
        let mut state = shared.state();
        let fresh = state
            .cursor
            .advance(read, Instant::now(), LATE_COMMIT_WINDOW);
        state.fan_out(fresh);
        if !full {
            return;
        }
    }
}

async fn read_batch(shared: &Shared, after: i64, missing: &[i64]) -> Result<Vec<FeedEvent>> {
    let mut tx = shared.store.read_instance_wide().await?;
    Ok(tx.feed_after(after, missing, BATCH).await?)
}

#[cfg(test)]
mod tests {
    use cms_store::Json;
    use serde_json::json;

    use super::*;

    fn at(position: i64, id: &str) -> FeedEvent {
        FeedEvent {
            position,
            event: EventRecord {
                id: id.into(),
                organization_id: Some("o1".into()),
                event_type: "a.b".into(),
                payload: Json(json!({})),
                created_at: 0,
            },
        }
    }

    fn ids(events: &[EventRecord]) -> Vec<&str> {
        events.iter().map(|e| e.id.as_str()).collect()
    }

    const WINDOW: Duration = Duration::from_secs(60);

    #[test]
    fn a_late_commit_is_delivered_once() {
        let now = Instant::now();
        let mut cursor = Cursor::start(
            FeedHead {
                head: 2,
                missing: vec![],
            },
            now,
        );
        // Position 3 is taken by a transaction still open; 4 commits first.
        let fresh = cursor.advance(vec![at(4, "b")], now, WINDOW);
        assert_eq!(ids(&fresh), ["b"]);
        assert_eq!((cursor.head(), cursor.pending()), (4, vec![3]));
        // 3 commits: asked for again, delivered, no longer awaited.
        let fresh = cursor.advance(vec![at(3, "a"), at(5, "c")], now, WINDOW);
        assert_eq!(ids(&fresh), ["a", "c"]);
        assert_eq!((cursor.head(), cursor.pending()), (5, vec![]));
        // Read again (a wake-up racing another): nothing twice.
        let fresh = cursor.advance(vec![at(3, "a"), at(4, "b"), at(5, "c")], now, WINDOW);
        assert!(fresh.is_empty());
    }

    #[test]
    fn empty_positions_are_given_up_after_the_window() {
        let start = Instant::now();
        let mut cursor = Cursor::start(
            FeedHead {
                head: 5,
                missing: vec![4],
            },
            start,
        );
        cursor.advance(vec![at(7, "x")], start + Duration::from_secs(30), WINDOW);
        assert_eq!(cursor.pending(), vec![4, 6]);
        cursor.advance(vec![], start + Duration::from_secs(61), WINDOW);
        assert_eq!(
            cursor.pending(),
            vec![6],
            "4 was awaited for longer than the window"
        );
        cursor.advance(vec![], start + Duration::from_secs(91), WINDOW);
        assert!(cursor.pending().is_empty());
    }

    #[test]
    fn a_jump_ahead_awaits_a_bounded_number_of_positions() {
        let now = Instant::now();
        let mut cursor = Cursor::start(FeedHead::default(), now);
        cursor.advance(vec![at(1_000_000, "far")], now, WINDOW);
        let pending = cursor.pending();
        assert_eq!(pending.len(), MAX_PENDING);
        assert_eq!(pending.last(), Some(&999_999));
    }

    #[tokio::test]
    async fn streams_get_their_organization_and_types_and_a_full_one_is_ended() {
        // Routing reads nothing: the store is only there to be held.
        let store = cms_store::connect("sqlite::memory:").await.unwrap();
        let hub = Hub::new(
            store,
            EventStreamSettings {
                max_streams: 2,
                buffer: 1,
                ..EventStreamSettings::default()
            },
        );
        let shared = hub.shared.clone();
        let mut state = shared.state();
        let mut all = state.join(&shared, "o1", vec![]).unwrap();
        let mut typed = state.join(&shared, "o1", vec!["c.d".into()]).unwrap();
        assert!(matches!(
            state.join(&shared, "o1", vec![]),
            Err(Error::TooManyStreams { .. })
        ));
        let mut other = state.join(&shared, "o2", vec![]).unwrap();
        let mut event = at(1, "e1").event;
        state.fan_out(vec![event.clone()]);
        assert_eq!(all.receiver.try_recv().unwrap().id, "e1");
        assert!(typed.receiver.try_recv().is_err(), "not its type");
        assert!(other.receiver.try_recv().is_err(), "not its organization");
        // `all` holds one event (its buffer): the next one ends it, not the others.
        state.fan_out(vec![event.clone(), event.clone()]);
        assert!(
            !state
                .streams
                .values()
                .any(|s| s.types.is_empty() && s.organization == "o1")
        );
        assert_eq!(state.per_organization.get("o1"), Some(&1));
        event.event_type = "c.d".into();
        state.fan_out(vec![event]);
        assert_eq!(typed.receiver.try_recv().unwrap().event_type, "c.d");
        drop(state);
        drop(typed);
        assert_eq!(
            shared.state().per_organization.get("o1"),
            None,
            "a dropped stream leaves"
        );
        hub.close();
        assert!(matches!(
            shared.state().join(&shared, "o1", vec![]),
            Err(Error::Unavailable(_))
        ));
        drop(other);
    }
}
