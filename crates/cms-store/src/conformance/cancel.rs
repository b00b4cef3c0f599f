//! Cancelled units of work never leak into the next one, on either engine.
//!
//! A client that hangs up drops its handler at whatever round trip it awaits. Here units are
//! dropped at every point where they wait (their `BEGIN`, a statement, their `COMMIT`), many at
//! once on one store, while other units run to completion beside them. Afterwards no write of an
//! abandoned unit may be committed, and no unit may have started inside a transaction left
//! behind: on PostgreSQL that shows as the server's notice "there is already a transaction in
//! progress" when the next unit's `BEGIN` lands in it, or as a pooled connection idle in a
//! transaction; on SQLite as the writer refusing the next `BEGIN IMMEDIATE`.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;
use std::time::Duration;

use crate::users::UserRecord;
use crate::{Dialect, Store, Tx};

/// Concurrent tasks dropping units, and how often each walks through every wait of a unit.
const CANCELLERS: usize = 6;
const ROUNDS: usize = 4;
/// More waits than any unit here has: a unit with fewer simply finishes, so every one of its
/// await points gets its cancellation.
const MAX_WAITS: usize = 10;
const ORGANIZATION: &str = "0190a0c0-0000-7000-8000-00000000c0de";

/// Drives `unit` until it has waited `waits` times, then drops it right where it waits, as a
/// hung-up client's handler is dropped. `None` when it was dropped, its output when it finished
/// first.
pub(super) async fn cancel_at_wait<F: Future>(unit: F, waits: usize) -> Option<F::Output> {
    let mut unit = pin!(unit);
    let mut waited = 0;
    std::future::poll_fn(|cx| match unit.as_mut().poll(cx) {
        Poll::Ready(output) => Poll::Ready(Some(output)),
        Poll::Pending => {
            waited += 1;
            if waited >= waits {
                Poll::Ready(None)
            } else {
                Poll::Pending
            }
        }
    })
    .await
}

/// Every way the service opens a unit of work.
#[derive(Clone, Copy, Debug)]
enum Opening {
    Read,
    Write,
    ReadFor,
    WriteFor,
    Delivery,
}

impl Opening {
    const ALL: [Opening; 5] = [
        Opening::Write,
        Opening::ReadFor,
        Opening::WriteFor,
        Opening::Delivery,
        Opening::Read,
    ];

    async fn open(self, store: &dyn Store) -> crate::Result<Box<dyn Tx>> {
        match self {
            Opening::Read => store.read().await,
            Opening::Write => store.write().await,
            Opening::ReadFor => store.read_for(ORGANIZATION).await,
            Opening::WriteFor => store.write_for(ORGANIZATION).await,
            Opening::Delivery => store.read_for_delivery().await,
        }
    }

    /// SQLite's read units run on read-only connections.
    fn writes(self) -> bool {
        matches!(self, Opening::Write | Opening::WriteFor)
    }
}

fn marker(id: &str) -> UserRecord {
    UserRecord {
        id: id.into(),
        email: format!("{id}@example.com"),
        name: "Marker".into(),
        password_hash: None,
        email_verified: false,
        role: "editor".into(),
        image: None,
        created_at: 1,
        updated_at: 1,
    }
}

/// A unit that writes its marker and is then given up without a commit, wherever it is dropped.
async fn abandoned(store: &dyn Store, opening: Opening, id: &str) -> crate::Result<()> {
    let mut tx = opening.open(store).await?;
    if opening.writes() {
        tx.insert_user(&marker(id)).await?;
    }
    tx.user_by_id(id).await?;
    drop(tx);
    Ok(())
}

/// A unit that commits its row: dropped during its `COMMIT`, the row may or may not be there
/// (the server may have committed), but the connection must come back clean either way.
async fn committing(store: &dyn Store, opening: Opening, id: &str) -> crate::Result<()> {
    let mut tx = opening.open(store).await?;
    tx.insert_user(&marker(id)).await?;
    tx.commit().await
}

/// Counts the notices PostgreSQL sends when a `BEGIN` arrives inside a transaction already open.
mod notices {
    use std::fmt::Write;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::subscriber::Interest;
    use tracing::{Event, Metadata};

    static LEFTOVER_TRANSACTIONS: AtomicUsize = AtomicUsize::new(0);

    /// The notices counted so far in this process. The subscriber is process-wide because
    /// units of work spawn tasks of their own (sqlx returns connections on one).
    pub(super) fn leftover_transactions() -> usize {
        static INSTALL: std::sync::Once = std::sync::Once::new();
        INSTALL.call_once(|| {
            tracing::subscriber::set_global_default(NoticeCounter)
                .expect("no other global subscriber in the store's tests");
        });
        LEFTOVER_TRANSACTIONS.load(Ordering::SeqCst)
    }

    struct NoticeCounter;

    const TARGET: &str = "sqlx::postgres::notice";

    impl tracing::Subscriber for NoticeCounter {
        fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
            match metadata.target() == TARGET {
                true => Interest::always(),
                false => Interest::never(),
            }
        }

        fn enabled(&self, metadata: &Metadata<'_>) -> bool {
            metadata.target() == TARGET
        }

        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }

        fn record(&self, _: &Id, _: &Record<'_>) {}

        fn record_follows_from(&self, _: &Id, _: &Id) {}

        fn event(&self, event: &Event<'_>) {
            let mut message = Message(String::new());
            event.record(&mut message);
            if message.0.contains("already a transaction in progress") {
                LEFTOVER_TRANSACTIONS.fetch_add(1, Ordering::SeqCst);
            }
        }

        fn enter(&self, _: &Id) {}

        fn exit(&self, _: &Id) {}
    }

    struct Message(String);

    impl Visit for Message {
        fn record_str(&mut self, field: &Field, value: &str) {
            if field.name() == "message" {
                self.0.push_str(value);
            }
        }

        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                let _ = write!(self.0, "{value:?}");
            }
        }
    }
}

/// What one cancelling task did: the rows it must never see committed, and those it must.
#[derive(Default)]
struct Outcome {
    abandoned: Vec<String>,
    committed: Vec<String>,
}

/// Walks through every wait of both kinds of unit, dropping each at its `waits`-th wait.
async fn cancel_everywhere(store: Arc<dyn Store>, task: usize) -> Outcome {
    let mut outcome = Outcome::default();
    let mut openings = Opening::ALL.iter().cycle().skip(task);
    for round in 0..ROUNDS {
        for waits in 1..=MAX_WAITS {
            let opening = *openings.next().expect("cycled");
            let id = format!("abandoned-{task}-{round}-{waits}");
            if let Some(done) = cancel_at_wait(abandoned(&*store, opening, &id), waits).await {
                done.unwrap_or_else(|e| panic!("{opening:?} unit {id} failed: {e}"));
            }
            outcome.abandoned.push(id);

            let opening = if opening.writes() {
                opening
            } else {
                Opening::Write
            };
            let id = format!("committing-{task}-{round}-{waits}");
            if let Some(done) = cancel_at_wait(committing(&*store, opening, &id), waits).await {
                done.unwrap_or_else(|e| panic!("{opening:?} unit {id} failed: {e}"));
                outcome.committed.push(id);
            }
        }
    }
    outcome
}

/// Units run to completion beside the cancelled ones, each in a fresh transaction: on SQLite
/// a writer left inside a transaction refuses their `BEGIN IMMEDIATE`.
async fn complete_units(store: Arc<dyn Store>, task: usize, stop: Arc<AtomicBool>) -> Vec<String> {
    let mut committed = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        let id = format!("complete-{task}-{}", committed.len());
        committing(&*store, Opening::WriteFor, &id)
            .await
            .unwrap_or_else(|e| panic!("complete unit {id} failed: {e}"));
        committed.push(id);
    }
    committed
}

/// PostgreSQL: the store's connections sitting idle inside a transaction. Between units every
/// pooled connection must be idle outside one.
async fn idle_in_transaction(url: &str) -> i64 {
    use sqlx::Connection;
    let options: sqlx::postgres::PgConnectOptions = url.parse().expect("test URL");
    let application = options
        .get_application_name()
        .expect("test URL names its application");
    let mut conn = sqlx::PgConnection::connect(&crate::testing::postgres_url())
        .await
        .expect("connect to the test server");
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity \
         WHERE application_name = $1 AND state LIKE 'idle in transaction%'",
    )
    .bind(application)
    .fetch_one(&mut conn)
    .await
    .expect("pg_stat_activity")
}

async fn cancelled_units_never_leak_into_the_next_one(url: String) {
    let store = crate::connect(&url).await.expect("connect");
    store.migrate().await.expect("migrate");
    let notices_before = notices::leftover_transactions();

    let stop = Arc::new(AtomicBool::new(false));
    let completers: Vec<_> = (0..2)
        .map(|task| tokio::spawn(complete_units(store.clone(), task, stop.clone())))
        .collect();
    let cancellers: Vec<_> = (0..CANCELLERS)
        .map(|task| tokio::spawn(cancel_everywhere(store.clone(), task)))
        .collect();
    let mut outcome = Outcome::default();
    for canceller in cancellers {
        let done = canceller.await.expect("cancelling task");
        outcome.abandoned.extend(done.abandoned);
        outcome.committed.extend(done.committed);
    }
    stop.store(true, Ordering::SeqCst);
    for completer in completers {
        outcome
            .committed
            .extend(completer.await.expect("completing task"));
    }

    let mut tx = store.read().await.unwrap();
    let mut leaked = Vec::new();
    for id in &outcome.abandoned {
        if tx.user_by_id(id).await.unwrap().is_some() {
            leaked.push(id.clone());
        }
    }
    assert!(
        leaked.is_empty(),
        "abandoned writes were committed: {leaked:?}"
    );
    for id in &outcome.committed {
        assert!(
            tx.user_by_id(id).await.unwrap().is_some(),
            "{id} was committed but is missing"
        );
    }
    drop(tx);

    if store.dialect() == Dialect::Postgres {
        // Connections come back to the pool on tasks of their own: give them a moment. A
        // connection left inside a transaction stays there, so waiting longer changes nothing.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        let mut idle = idle_in_transaction(&url).await;
        while idle > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
            idle = idle_in_transaction(&url).await;
        }
        assert_eq!(idle, 0, "pooled connections left inside a transaction");
        let notices = notices::leftover_transactions() - notices_before;
        assert_eq!(
            notices, 0,
            "units began inside a transaction left behind by a cancelled one"
        );
    }
    store.close().await;
}

crate::both_engines!(cancelled_units_never_leak_into_the_next_one);
