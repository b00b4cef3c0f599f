//! Export and import (CONTRACT.md section 19): everything an instance, or some of its
//! organizations, holds, written to one archive and loaded into an empty database of either
//! engine, asset files included from either storage back end.
//!
//! These are an operator's commands (`cms export`, `cms import`): whoever runs them holds the
//! configuration, and so the database itself. No actor is involved and no access rule is
//! asked; what an archive carries is decided here, by [`ExportRequest`] (docs/DECISIONS.md,
//! "Export and import").
//!
//! The rows are the store's archive catalogue ([`cms_store::archive::PARTS`]) read in one
//! snapshot, organization by organization (PostgreSQL's row-level security sees one at a
//! time), page by page; files stream from storage into the archive and back. Memory holds a
//! page of rows and a few entries, whatever the archive's size.

mod archive;
mod export;
mod import;

use std::collections::BTreeMap;
use std::sync::Arc;

use cms_store::Store;

pub use archive::Manifest;

use crate::storage::BlobStore;

/// What `cms export` writes.
#[derive(Debug, Clone, Default)]
pub struct ExportRequest {
    /// Organization slugs (their child organizations come with them); empty for the whole
    /// instance, instance-wide rows (the instance's settings, its events and jobs of no
    /// organization) included.
    pub organizations: Vec<String>,
    /// Password hashes, API keys, two-factor secrets and invitation tokens too. Without them
    /// people set a new password on the new instance and keys are made again.
    pub with_credentials: bool,
}

/// What an export wrote or an import loaded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransferSummary {
    /// Rows by table.
    pub rows: BTreeMap<String, u64>,
    /// Asset files, and their bytes.
    pub files: u64,
    pub file_bytes: u64,
    /// Assets whose record was carried but whose file the storage did not have.
    pub missing_files: Vec<String>,
}

/// Where a transfer stands, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferProgress {
    /// Rows and files done, of `total`.
    pub done: u64,
    pub total: u64,
    /// The part (table) being read or loaded, or `files`.
    pub stage: &'static str,
}

/// Rows and files done of a known total, reported as each step ends.
struct Progress<'p> {
    done: u64,
    total: u64,
    report: &'p (dyn Fn(TransferProgress) + Send + Sync),
}

impl<'p> Progress<'p> {
    fn new(total: u64, report: &'p (dyn Fn(TransferProgress) + Send + Sync)) -> Progress<'p> {
        Progress {
            done: 0,
            total,
            report,
        }
    }

    fn advance(&mut self, by: u64, stage: &'static str) {
        self.done += by;
        (self.report)(TransferProgress {
            done: self.done,
            total: self.total,
            stage,
        });
    }
}

/// Export and import over one store and one storage.
pub struct Transfer {
    store: Arc<dyn Store>,
    storage: Arc<dyn BlobStore>,
}

impl Transfer {
    pub fn new(store: Arc<dyn Store>, storage: Arc<dyn BlobStore>) -> Transfer {
        Transfer { store, storage }
    }
}
