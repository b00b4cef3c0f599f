//! What a unit of work must offer for the shared SQL.
//!
//! The SQL of each concept is written once, in a macro of its module (`impl_users!`,
//! `impl_documents!`, ...), and instantiated for both engines' units of work by
//! [`impl_repositories!`](crate::impl_repositories). Everything that SQL asks of the unit is
//! this trait, implemented by `SqliteTx` and `PgTx`: a unit that lacks a method fails to compile
//! at its `impl UnitOfWork` with the trait's own error, not inside a macro expansion. The macros
//! only ever call it on the concrete unit type: static dispatch, nothing boxed.

use std::future::Future;

use crate::filter_sql::{Bind, GeneratedColumns};
use crate::sqlite::{Direct, PointReads};
use crate::{Dialect, Result};

/// What a unit of work must offer for the shared SQL (see the module documentation).
pub(crate) trait UnitOfWork {
    /// The engine's connection, which the shared SQL executes on.
    type Connection;
    /// The engine's arguments for compiled SQL ([`UnitOfWork::arguments`]).
    type Arguments;

    /// The engine, for the few statements that differ per dialect.
    const DIALECT: Dialect;

    /// The SQL of `Documents::locate_document`, the one lookup across organizations.
    const LOCATE_DOCUMENT: &'static str;

    /// The arguments for compiled SQL, in placeholder order.
    fn arguments(binds: Vec<Bind>) -> Result<Self::Arguments>;

    /// The unit's connection (a read unit may borrow one at its first statement).
    fn conn(&mut self) -> impl Future<Output = Result<&mut Self::Connection>> + Send;

    /// The generated columns list queries may use; `None` on an engine without them.
    fn generated_columns(&self) -> Option<&GeneratedColumns>;

    /// The point lookups answered off sqlx, when this unit may use them (a SQLite read unit);
    /// `None` when every statement goes through the unit's connection.
    fn point_reads(&self) -> Option<&PointReads>;

    /// The statements a SQLite write unit runs on the calling thread, on its writer's handle
    /// (taken from sqlx's thread when sqlx has it); `None` when every statement goes through
    /// the unit's connection. A repository method with a direct form asks for it first.
    fn direct(&mut self) -> impl Future<Output = Result<Option<Direct<'_>>>> + Send;

    /// Marks the unit as having appended events, so that its commit wakes the readers of the
    /// event feed ([`crate::event_feed`]). Every statement inserting into `events` calls it
    /// (SQLite's writer notices such inserts by itself: there it does nothing).
    fn appended_events(&mut self);
}
