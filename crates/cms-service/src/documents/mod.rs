//! Documents: drafts and published copies, versions, references, singletons (SPEC.md
//! "Document", "States and transitions: Document", "Endpoints: Documents"; CONTRACT.md
//! sections 5 and 12).
//!
//! Every operation checks the actor's capability first, then reads and writes in one unit of
//! work: the document row, its version, its references and its built-in event
//! (`document.created`, `.updated`, `.published`, `.unpublished`, `.deleted`; see `write.rs`)
//! commit together or not at all; `create_emitting` adds custom events to that unit of work.
//!
//! The operations of [`DocumentService`] are spread over the files of this module: `write.rs`
//! (create, update, publish, unpublish, delete and the unit-of-work steps they share),
//! `read.rs` (get, list and query, by ids, back references, singletons), `versions.rs`
//! (versions and restore), `import.rs` (bulk creation), `validation.rs` (what a save would
//! report), `records.rs` (the rows a new document is written as), `schedules.rs` and
//! `search.rs` (full-text search: the search rows every write keeps, a list's `search`, the
//! rebuild of a type's rows), `preview.rs` (preview links, CONTRACT.md section 15) and
//! `presence.rs` (who else has a document open in the admin).

mod access;
mod import;
mod localization;
mod migrate;
mod presence;
mod preview;
mod read;
mod records;
mod references;
mod resolve;
mod schedules;
mod search;
mod slugs;
mod validation;
mod validator;
mod versions;
mod view;
mod write;

use cms_core::schema::Schemas;
use serde_json::Value;

pub(crate) use access::AccessRules;
pub use access::{AccessPolicies, Policy, PolicyAuth, PolicyDocument};
pub use cms_store::documents::Publication;
pub use migrate::{ContentMigration, EXAMPLES, Leftover, MigratedDocument};
pub use presence::{PRESENCE_WINDOW_MILLIS, PresentPerson};
pub use preview::{PREVIEW_TOKEN_PREFIX, PreviewLink, RevokedPreviews};
pub use read::{DocumentLocation, ListRequest, Page};
pub use references::MAX_LISTED_REFERRERS;
pub use resolve::MAX_EXPANDED_NODES;
pub use schedules::{ScheduleAction, ScheduleView};
pub(crate) use schedules::{ScheduleStatus, schedule_follows_job};
pub use search::search_signature;
pub use validator::RevisionTag;
pub(crate) use validator::schema_fingerprint;
pub use view::{DocumentView, Meta, Perspective, Validation, VersionView};
pub use write::DraftUpdate;

pub use crate::input::merge_fields;
pub use crate::paging::{MAX_BY_IDS, Pagination};

use crate::Inner;
use crate::actor::Actor;
use crate::events::TypeVisibility;

/// The deepest reference resolution.
pub const MAX_DEPTH: u8 = 5;
/// The reference resolution depth when a read asks for none: references stay references.
pub const DEFAULT_DEPTH: u8 = 0;

/// A new document as received.
#[derive(Debug)]
pub struct NewDocument {
    pub doc_type: String,
    pub data: Value,
    pub publish: bool,
    /// The locale `data`'s localized values are in (CONTRACT.md section 17): a tag, `*` for
    /// values keyed by locale, `None` for the default locale.
    pub locale: Option<String>,
}

/// How a read looks at documents.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    pub perspective: Perspective,
    /// Reference resolution depth, 0 to [`MAX_DEPTH`]; [`DEFAULT_DEPTH`] when `None`.
    pub depth: Option<u8>,
    /// Also read the children of the actor's organization.
    pub include_children: bool,
    /// The locale localized fields are read (and `where` and `sort` compare) in: a tag, `*`
    /// for every locale, `None` for the default locale (CONTRACT.md section 17).
    pub locale: Option<String>,
}

impl ReadOptions {
    /// The depth references are resolved to: the one asked for, or [`DEFAULT_DEPTH`].
    pub(crate) fn resolution_depth(&self) -> u8 {
        self.depth.unwrap_or(DEFAULT_DEPTH)
    }
}

pub struct DocumentService<'a> {
    inner: &'a Inner,
}

/// How much of `doc_type` `actor` may read, as the event log shows its events
/// ([`crate::events::visible`]): `Hidden` when the schema's read rule refuses the whole type,
/// or when a read policy rules it (a policy decides per document, and an event is not the
/// document: what it would decide cannot be known from the event, so none is shown);
/// `Partial` when field rules hide some of its fields (so digests of its data are not shown);
/// `Whole` otherwise.
pub(crate) fn type_visibility(inner: &Inner, actor: &Actor, doc_type: &str) -> TypeVisibility {
    let gate = access::Gate::new(&inner.access, &inner.schemas, actor);
    match gate.list_read(doc_type) {
        access::ListRead::Refused | access::ListRead::PerDocument => TypeVisibility::Hidden,
        access::ListRead::All if gate.sees_whole(doc_type) => TypeVisibility::Whole,
        access::ListRead::All => TypeVisibility::Partial,
    }
}

impl<'a> DocumentService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        DocumentService { inner }
    }

    fn schemas(&self) -> &Schemas {
        &self.inner.schemas
    }
}
