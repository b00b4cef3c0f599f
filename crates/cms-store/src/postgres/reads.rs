//! Read units on PostgreSQL: one round trip per statement, no transaction around them.
//!
//! A read unit runs its statements outside a transaction (each sees a snapshot of its own, as a
//! SQLite read unit does) on a connection of a pool of its own, where the settings row-level
//! security reads are session settings. Each connection remembers the settings its session
//! holds, and a unit sets them, in one statement, only when they differ from the ones it
//! declared, before its first statement; the pool lends a connection whose session already holds
//! the unit's settings when one is idle. A point read whose connection matches is therefore one
//! round trip, and there is no `BEGIN`, `COMMIT` or return ping around it.
//!
//! Why no unit can observe another's settings (docs/DECISIONS.md, "PostgreSQL reads in one round
//! trip"): every unit declares all three settings (an empty one included), and its first
//! statement runs only after the connection's remembered settings equal its own; a connection
//! whose settings statement was sent but never answered (a cancelled unit) remembers nothing, so
//! the next unit sets them again, after the stale statement (the protocol answers in order).
//! Write units never borrow these connections: they keep their transactions, with
//! transaction-local settings, on the store's other pool.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{ACTING_ORGANIZATION, DELIVERY, SCOPE};
use crate::Result;

/// A connection idle longer than this is closed rather than lent: the server or a firewall may
/// have dropped it, and an idle backend holds memory on the server.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// Connections are renewed after this long, as sqlx's own pool does by default.
const MAX_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// Sets all three settings of a session in one statement (prepared once per connection).
const SET_SESSION: &str = "SELECT set_config($1, $2, false), set_config($3, $4, false), \
     set_config($5, $6, false)";

/// What a unit declares to row-level security: the three settings the policies read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Declared {
    /// `cms.organization_id`; empty when the unit acts for no organization.
    pub(super) organization_id: String,
    /// `cms.scope` = `instance` (see `Tx::act_instance_wide`).
    pub(super) instance_wide: bool,
    /// `cms.delivery` = `on` (see `Tx::act_for_delivery`).
    pub(super) delivery: bool,
}

impl Declared {
    pub(super) fn acting_for(organization_id: &str) -> Declared {
        Declared {
            organization_id: organization_id.to_string(),
            ..Declared::default()
        }
    }

    pub(super) fn instance_wide() -> Declared {
        Declared {
            instance_wide: true,
            ..Declared::default()
        }
    }

    pub(super) fn delivery() -> Declared {
        Declared {
            delivery: true,
            ..Declared::default()
        }
    }
}

/// A connection of the read pool and what its session holds.
struct Slot {
    conn: PgConnection,
    /// The settings the session holds; `None` when unknown (a settings statement whose answer
    /// never arrived).
    settings: Option<Declared>,
    opened: Instant,
    idle_since: Instant,
    /// Counts the connection among the pool's open ones while it exists.
    _open: Opened,
}

/// One of the pool's open connections: counted from its reservation to its drop.
struct Opened(Arc<AtomicU32>);

impl Opened {
    /// Counts one more, whatever the count: for a unit that holds a permit and finds neither
    /// an idle connection nor room (connections still closing are counted until they are).
    fn counted(open: Arc<AtomicU32>) -> Opened {
        open.fetch_add(1, Ordering::SeqCst);
        Opened(open)
    }
}

/// Where a unit's connection comes from.
enum Take {
    Idle(Slot),
    Open(Opened),
}

impl Drop for Opened {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The pool read units borrow from: at most `size` connections, lent one per unit.
pub(super) struct ReadPool {
    options: PgConnectOptions,
    permits: Arc<Semaphore>,
    idle: Mutex<Vec<Slot>>,
    size: u32,
    /// Connections open now (lent or idle), at most `size`.
    open: Arc<AtomicU32>,
    closed: AtomicBool,
}

impl ReadPool {
    /// Connections open lazily, at the first unit that finds none idle. They are read-only
    /// (`default_transaction_read_only`): a read unit that tried to write would fail, as on a
    /// SQLite reader, instead of committing statement by statement.
    pub(super) fn new(options: PgConnectOptions, size: u32) -> ReadPool {
        ReadPool {
            options: options.options([("default_transaction_read_only", "on")]),
            permits: Arc::new(Semaphore::new(size as usize)),
            idle: Mutex::new(Vec::new()),
            size,
            open: Arc::new(AtomicU32::new(0)),
            closed: AtomicBool::new(false),
        }
    }

    /// Connections lent to a unit now, idle ones, and the pool's size.
    pub(super) fn usage(&self) -> (u32, u32, u32) {
        let idle = self.idle.lock().map_or(0, |idle| idle.len()) as u32;
        let open = self.open.load(Ordering::SeqCst);
        (open.saturating_sub(idle), idle, self.size)
    }

    /// A connection for a unit declaring `wanted`: an idle one whose session already holds
    /// those settings when there is one; else a new one while the pool may still grow (so that
    /// units of different declarations, such as a credential lookup and the read it allows,
    /// each keep connections that match them); else the most recently used idle one.
    async fn lease(self: &Arc<Self>, wanted: &Declared) -> Result<Lease> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| sqlx::Error::PoolClosed)?;
        if self.closed.load(Ordering::SeqCst) {
            return Err(sqlx::Error::PoolClosed.into());
        }
        loop {
            let mut slot = match self.take_idle(wanted) {
                Take::Idle(slot) => slot,
                Take::Open(opened) => self.open(opened).await?,
            };
            // Nothing to do, and no round trip, when the last unit read every answer; else this
            // waits for what a cancelled unit left in flight, or finds the connection broken
            // (then it is dropped and the next one tried).
            if slot.conn.flush().await.is_err() {
                continue;
            }
            return Ok(Lease {
                slot: Some(slot),
                pool: self.clone(),
                _permit: permit,
            });
        }
    }

    /// An idle connection for `wanted`, or the reservation of a new one.
    fn take_idle(&self, wanted: &Declared) -> Take {
        let now = Instant::now();
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let stale: Vec<Slot> = idle
            .extract_if(.., |slot| {
                now - slot.idle_since >= IDLE_TIMEOUT || now - slot.opened >= MAX_LIFETIME
            })
            .collect();
        let matching = idle
            .iter()
            .rposition(|slot| slot.settings.as_ref() == Some(wanted));
        let taken = if let Some(at) = matching {
            Take::Idle(idle.remove(at))
        } else if let Some(opened) = self.reserve() {
            Take::Open(opened)
        } else if let Some(slot) = idle.pop() {
            Take::Idle(slot)
        } else {
            Take::Open(Opened::counted(self.open.clone()))
        };
        drop(idle);
        stale.into_iter().for_each(close);
        taken
    }

    /// One more open connection counted, unless the pool is at its size.
    fn reserve(&self) -> Option<Opened> {
        self.open
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |open| {
                (open < self.size).then_some(open + 1)
            })
            .ok()
            .map(|_| Opened(self.open.clone()))
    }

    /// Opens the connection `take_idle` reserved (the reservation ends with it, or now if
    /// opening fails).
    async fn open(&self, opened: Opened) -> Result<Slot> {
        let mut conn = PgConnection::connect_with(&self.options).await?;
        super::drop_rls_bypass(&mut conn).await?;
        let now = Instant::now();
        Ok(Slot {
            conn,
            settings: None,
            opened: now,
            idle_since: now,
            _open: opened,
        })
    }

    fn put_back(&self, mut slot: Slot) {
        if self.closed.load(Ordering::SeqCst) {
            close(slot);
            return;
        }
        slot.idle_since = Instant::now();
        self.idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(slot);
    }

    /// Waits for the connections in use to come back, then closes every one.
    pub(super) async fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        if let Ok(all) = self.permits.acquire_many(self.size).await {
            self.permits.close();
            drop(all);
        }
        let idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|e| e.into_inner()));
        for slot in idle {
            let _ = slot.conn.close().await;
        }
    }
}

/// Closes a connection on a task of its own (a `Terminate` message, so the server does not log
/// a lost client), or drops its socket outside a runtime.
fn close(slot: Slot) {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(async move {
                let _ = slot.conn.close().await;
            });
        }
        Err(_) => drop(slot),
    }
}

/// A connection lent to one unit, returned to the idle list when the unit is dropped (with
/// whatever it left in flight: the next lease reads that first).
struct Lease {
    slot: Option<Slot>,
    pool: Arc<ReadPool>,
    /// Released after the slot is back (fields drop after `Drop::drop`).
    _permit: OwnedSemaphorePermit,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            self.pool.put_back(slot);
        }
    }
}

/// A read unit: borrows its connection at its first statement, like a SQLite read unit.
pub(super) struct ReadUnit {
    pool: Arc<ReadPool>,
    declared: Declared,
    lease: Option<Lease>,
}

impl ReadUnit {
    pub(super) fn new(pool: Arc<ReadPool>, declared: Declared) -> ReadUnit {
        ReadUnit {
            pool,
            declared,
            lease: None,
        }
    }

    /// The unit's connection, its session holding exactly the settings the unit declared.
    pub(super) async fn conn(&mut self) -> Result<&mut PgConnection> {
        if self.lease.is_none() {
            self.lease = Some(self.pool.lease(&self.declared).await?);
        }
        let slot = self
            .lease
            .as_mut()
            .and_then(|lease| lease.slot.as_mut())
            .expect("a lease holds its slot until it is dropped");
        if slot.settings.as_ref() != Some(&self.declared) {
            // Forgotten first: if this statement is abandoned half way, its outcome is unknown.
            slot.settings = None;
            let declared = &self.declared;
            sqlx::query(SET_SESSION)
                .bind(ACTING_ORGANIZATION)
                .bind(&declared.organization_id)
                .bind(SCOPE)
                .bind(if declared.instance_wide {
                    "instance"
                } else {
                    ""
                })
                .bind(DELIVERY)
                .bind(if declared.delivery { "on" } else { "" })
                .execute(&mut slot.conn)
                .await?;
            slot.settings = Some(declared.clone());
        }
        Ok(&mut slot.conn)
    }

    /// The settings the next statement runs under; the session catches up at that statement.
    pub(super) fn declared_mut(&mut self) -> &mut Declared {
        &mut self.declared
    }
}
