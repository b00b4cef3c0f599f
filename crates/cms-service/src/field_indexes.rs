//! The indexes behind `where` and `sort` (CONTRACT.md section 14), built beside the service:
//! on a large table they take minutes, and the service answers meanwhile (queries are only
//! slower until then, never different). What the build has done is in the health report.

use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

use crate::Inner;

/// Whether the field indexes of every document type are in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum IndexingState {
    /// Being built: lists filtered or sorted on a type not yet done read without them.
    Building,
    Ready,
    /// The last attempt failed (see the log); queries still answer, without the missing ones.
    Failed,
}

/// The `indexes` part of /api/cms-health.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexingReport {
    pub state: IndexingState,
    /// Document types whose field indexes are in place, of all of them.
    pub types_ready: usize,
    pub types_total: usize,
    /// Indexes built by this start (those found in place are not counted).
    pub built: usize,
    /// Why the last attempt failed, in operator terms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The progress of the build, shared with the health report.
#[derive(Debug)]
pub(crate) struct FieldIndexing(Mutex<IndexingReport>);

impl Default for FieldIndexing {
    fn default() -> Self {
        FieldIndexing(Mutex::new(IndexingReport {
            state: IndexingState::Building,
            types_ready: 0,
            types_total: 0,
            built: 0,
            error: None,
        }))
    }
}

impl FieldIndexing {
    pub(crate) fn report(&self) -> IndexingReport {
        self.update(|report| report.clone())
    }

    fn update<T>(&self, f: impl FnOnce(&mut IndexingReport) -> T) -> T {
        let mut report = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut report)
    }
}

/// Attempts before the build gives up until the next start (a catalog change waits a few
/// seconds for the table's lock at most, and may lose to a long transaction).
const ATTEMPTS: u32 = 3;

/// Builds every type's field indexes and drops those no schema wants, retrying a failed
/// attempt; the outcome goes to the log and the health report.
pub(crate) async fn build(inner: &Inner) {
    let types: Vec<cms_store::field_indexes::IndexedType> = inner
        .schemas
        .documents()
        .filter_map(|schema| {
            let fields = inner.schemas.fields(&schema.name)?.indexed_paths();
            Some((schema.name.clone(), fields))
        })
        .collect();
    inner.field_indexing.update(|r| r.types_total = types.len());
    tracing::info!(
        types = types.len(),
        "building field indexes in the background"
    );
    for attempt in 1..=ATTEMPTS {
        match build_once(inner, &types).await {
            Ok(()) => {
                let built = inner.field_indexing.update(|r| {
                    r.state = IndexingState::Ready;
                    r.error = None;
                    r.built
                });
                tracing::info!(built, "field indexes ready");
                return;
            }
            Err(e) => {
                tracing::warn!(error = %e, attempt, "building field indexes failed");
                inner.field_indexing.update(|r| {
                    r.state = if attempt == ATTEMPTS {
                        IndexingState::Failed
                    } else {
                        IndexingState::Building
                    };
                    r.error = Some("building field indexes failed: see the log".into());
                });
                if attempt < ATTEMPTS {
                    tokio::time::sleep(Duration::from_secs(2 * u64::from(attempt))).await;
                }
            }
        }
    }
}

async fn build_once(
    inner: &Inner,
    types: &[cms_store::field_indexes::IndexedType],
) -> cms_store::Result<()> {
    inner.field_indexing.update(|r| r.types_ready = 0);
    for (doc_type, fields) in types {
        let build = inner.store.ensure_field_indexes(doc_type, fields).await?;
        inner.field_indexing.update(|r| {
            r.types_ready += 1;
            r.built += build.built;
        });
    }
    let dropped = inner.store.drop_unwanted_field_indexes(types).await?;
    if dropped > 0 {
        tracing::info!(dropped, "field indexes no schema wants were dropped");
    }
    Ok(())
}
