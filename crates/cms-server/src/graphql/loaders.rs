//! What a request's resolvers share: the service, the actor and the DataLoaders that batch
//! the reading of references and asset records, one set per request. Every service call a
//! GraphQL request makes is traced under [`CALL_TARGET`].

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_graphql::dataloader::{DataLoader, Loader};
use cms_service::assets::AssetView;
use cms_service::documents::{
    DocumentView, MAX_BY_IDS, MAX_EXPANDED_NODES, Perspective, ReadOptions,
};
use cms_service::{Actor, Cms};
use futures_util::future::BoxFuture;
use tracing::instrument::{Instrument, WithSubscriber};

use super::errors::{bad, gql_error};

/// The tracing target of one event per service call a GraphQL request makes (tests count them).
pub const CALL_TARGET: &str = "cms_server::graphql::call";

pub(super) fn call(name: &'static str, ids: usize) {
    tracing::debug!(target: CALL_TARGET, call = name, ids, "service call");
}

/// What a request's resolvers share: the service, the actor, and the batching reference
/// loader (one per request: the actor decides what it may see).
pub struct RequestCtx {
    pub(super) cms: Cms,
    pub(super) actor: Actor,
    pub(super) loader: DataLoader<RefLoader>,
    pub(super) assets: DataLoader<AssetLoader>,
    /// References resolved so far: a response expands at most [`MAX_EXPANDED_NODES`], as
    /// REST's `depth` does (the query's depth and complexity limits bound its shape, not the
    /// length of the reference lists it walks).
    expanded: AtomicUsize,
}

impl RequestCtx {
    pub fn new(cms: Cms, actor: Actor) -> Self {
        // Each batch runs on a task of its own: it keeps the request's span and subscriber.
        let spawn = |fut: BoxFuture<'static, ()>| {
            tokio::spawn(fut.in_current_span().with_current_subscriber())
        };
        let loader = RefLoader {
            cms: cms.clone(),
            actor: actor.clone(),
        };
        let assets = AssetLoader {
            cms: cms.clone(),
            actor: actor.clone(),
        };
        RequestCtx {
            cms,
            actor,
            loader: DataLoader::new(loader, spawn),
            assets: DataLoader::new(assets, spawn),
            expanded: AtomicUsize::new(0),
        }
    }

    /// Counts `n` more references to resolve; past [`MAX_EXPANDED_NODES`] in this request,
    /// the field is an error naming the limit (BAD_REQUEST) instead of a truncated list.
    pub(super) fn expand(&self, n: usize) -> async_graphql::Result<()> {
        let before = self.expanded.fetch_add(n, Ordering::Relaxed);
        if before + n > MAX_EXPANDED_NODES {
            return Err(bad(&format!(
                "the response would expand more than {MAX_EXPANDED_NODES} references \
                 (MAX_EXPANDED_NODES): select fewer references or documents"
            )));
        }
        Ok(())
    }
}

/// How a document was read, which its references are read the same way: the copy
/// (`perspective`), whether child organizations' documents are in reach, and the locale
/// (a tag as the request named it; `None` for the default locale): a referenced document reads
/// in its parent's locale.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reading {
    pub(super) perspective: Perspective,
    pub(super) children: bool,
    pub(super) locale: Option<Arc<str>>,
}

impl Reading {
    /// How the answer of a mutation reads: the draft, in `locale`.
    pub(super) fn draft(locale: Option<Arc<str>>) -> Reading {
        Reading {
            perspective: Perspective::Draft,
            children: false,
            locale,
        }
    }

    pub(super) fn options(&self) -> ReadOptions {
        ReadOptions {
            perspective: self.perspective,
            depth: None,
            include_children: self.children,
            locale: self.locale.as_deref().map(str::to_owned),
        }
    }
}

/// An asset by id, and whether child organizations are in reach.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AssetKey {
    pub(super) id: String,
    pub(super) children: bool,
}

/// Batches asset records: one `assets().by_ids` call per reach and 100 ids.
pub struct AssetLoader {
    cms: Cms,
    actor: Actor,
}

impl Loader<AssetKey> for AssetLoader {
    type Value = Arc<AssetView>;
    type Error = async_graphql::Error;

    async fn load(
        &self,
        keys: &[AssetKey],
    ) -> Result<HashMap<AssetKey, Arc<AssetView>>, Self::Error> {
        let mut found = HashMap::new();
        for children in [false, true] {
            let ids: Vec<String> = keys
                .iter()
                .filter(|k| k.children == children)
                .map(|k| k.id.clone())
                .collect();
            for chunk in ids.chunks(MAX_BY_IDS) {
                call("asset_by_ids", chunk.len());
                let views = self
                    .cms
                    .assets()
                    .by_ids(&self.actor, chunk, children)
                    .await
                    .map_err(gql_error)?;
                for view in views {
                    let key = AssetKey {
                        id: view.id.clone(),
                        children,
                    };
                    found.insert(key, Arc::new(view));
                }
            }
        }
        Ok(found)
    }
}

/// A referenced document, by id and how the document that references it was read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RefKey {
    pub(super) id: String,
    pub(super) reading: Reading,
}

/// Batches reference resolution: one `documents().by_ids` call per way of reading and 100 ids,
/// however many documents of a response hold references.
pub struct RefLoader {
    cms: Cms,
    actor: Actor,
}

impl Loader<RefKey> for RefLoader {
    type Value = Arc<DocumentView>;
    type Error = async_graphql::Error;

    async fn load(
        &self,
        keys: &[RefKey],
    ) -> Result<HashMap<RefKey, Arc<DocumentView>>, Self::Error> {
        let mut found = HashMap::new();
        // One group per way of reading (at most four per locale), in a stable order.
        let mut readings: Vec<&Reading> = Vec::new();
        for key in keys {
            if !readings.contains(&&key.reading) {
                readings.push(&key.reading);
            }
        }
        for reading in readings {
            let ids: Vec<String> = keys
                .iter()
                .filter(|k| &k.reading == reading)
                .map(|k| k.id.clone())
                .collect();
            for chunk in ids.chunks(MAX_BY_IDS) {
                call("by_ids", chunk.len());
                let views = self
                    .cms
                    .documents()
                    .by_ids(&self.actor, chunk, reading.options())
                    .await
                    .map_err(gql_error)?;
                for view in views {
                    let key = RefKey {
                        id: view.id.clone(),
                        reading: reading.clone(),
                    };
                    found.insert(key, Arc::new(view));
                }
            }
        }
        Ok(found)
    }
}
