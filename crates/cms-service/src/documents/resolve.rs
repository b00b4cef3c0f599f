//! Reference resolution (`depth`, CONTRACT.md section 5): `{ "_ref": id }` replaced by the
//! referenced document's data in the same perspective, plus `_id` and `_type`, `depth` levels
//! deep.
//!
//! The work of one response is bounded (issue 21, point 6):
//! - each level is loaded in one batched read of its distinct ids (the store chunks it under
//!   both engines' bind limits), so a page costs at most `depth` lookups however many of its
//!   documents hold references;
//! - a target is loaded once per response and shared: twenty documents of a page naming the
//!   same author load it once, and a target met again deeper is not loaded again;
//! - at most [`MAX_EXPANDED_NODES`] references are expanded in one response, and at most as
//!   many distinct targets looked up: past either, the request is a 400 naming the limit,
//!   never a silently truncated answer.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use cms_core::schema::{RefTarget, Schemas};
use cms_store::Tx;
use cms_store::documents::DocumentRecord;
use serde_json::Value;

use super::access::Gate;
use super::localization::Localization;
use super::{DocumentView, Perspective, ReadOptions};
use crate::error::{Error, Result};

/// The most references one response may expand (every place a `{ "_ref" }` is replaced
/// counts, a target shown twice counts twice), and the most distinct targets it may look up.
/// A page of 100 documents with 5 references each, whose targets hold 5 each, expands 3000 at
/// depth 2; past ten thousand the answer is a 400 asking for a smaller `depth` or page.
pub const MAX_EXPANDED_NODES: usize = 10_000;

/// Where targets are read from: the unit of work of the read (and a counting fake in tests).
#[async_trait]
trait TargetSource: Send {
    /// The documents with these (distinct) ids in `orgs`, in no given order.
    async fn load(&mut self, orgs: &[String], ids: &[String]) -> Result<Vec<DocumentRecord>>;
}

struct FromTx<'t>(&'t mut dyn Tx);

#[async_trait]
impl TargetSource for FromTx<'_> {
    async fn load(&mut self, orgs: &[String], ids: &[String]) -> Result<Vec<DocumentRecord>> {
        Ok(self.0.documents_by_ids(orgs, ids).await?)
    }
}

/// How the caller sees a loaded target: `None` when they may not read it (it then stays a
/// reference), else its data in the perspective with the fields they may not read stripped.
trait Visibility: Sync {
    fn show(&self, record: DocumentRecord, perspective: Perspective) -> Option<Target>;
}

impl Visibility for Gate<'_> {
    fn show(&self, record: DocumentRecord, perspective: Perspective) -> Option<Target> {
        let view = DocumentView::from(record);
        if !self.may_read(&view) {
            return None;
        }
        let mut data = match perspective {
            Perspective::Draft => view.draft_data,
            Perspective::Published => view.published_data?,
        };
        self.strip_data(&view.doc_type, &mut data);
        Some(Target {
            id: view.id,
            doc_type: view.doc_type,
            data,
        })
    }
}

/// A readable target, as the caller may see it.
#[derive(Debug, Clone)]
struct Target {
    id: String,
    doc_type: String,
    data: Value,
}

impl super::DocumentService<'_> {
    /// Resolves the references of `views` (a page, or one document) `read.depth` levels deep.
    /// References the actor may not read, and missing ones, stay as they are.
    pub(super) async fn resolve(
        &self,
        tx: &mut dyn Tx,
        orgs: &[String],
        views: &mut [DocumentView],
        read: &ReadOptions,
        gate: &Gate<'_>,
        localization: &Localization,
    ) -> Result<()> {
        let resolver = Resolver {
            schemas: self.schemas(),
            visibility: gate,
            perspective: read.perspective,
            depth: read.resolution_depth(),
            limit: MAX_EXPANDED_NODES,
            localization: Some(localization),
        };
        resolver.resolve(&mut FromTx(tx), orgs, views).await
    }
}

/// One response's resolution: what it reads, how deep, and how much it may expand.
struct Resolver<'a, V: Visibility> {
    schemas: &'a Schemas,
    visibility: &'a V,
    perspective: Perspective,
    depth: u8,
    limit: usize,
    /// The locale targets are shown in, like the documents that reference them.
    localization: Option<&'a Localization>,
}

/// Every target a response reached: `None` for an id missing or unreadable.
type Targets = HashMap<String, Option<Target>>;

impl<V: Visibility> Resolver<'_, V> {
    async fn resolve(
        &self,
        source: &mut dyn TargetSource,
        orgs: &[String],
        views: &mut [DocumentView],
    ) -> Result<()> {
        if self.depth == 0 {
            return Ok(());
        }
        let targets = self.load_levels(source, orgs, views).await?;
        let mut budget = self.limit;
        for view in views.iter_mut() {
            let doc_type = view.doc_type.clone();
            if let Some(data) = view.data_mut(self.perspective) {
                self.expand(&doc_type, data, &targets, self.depth, &mut budget)?;
            }
        }
        Ok(())
    }

    /// Loads the targets level by level: level 1 is what the page references, level `k + 1`
    /// what the targets first reached at level `k` reference. A target is loaded at the first
    /// level it is met (where it has the most levels left below it) and never again.
    async fn load_levels(
        &self,
        source: &mut dyn TargetSource,
        orgs: &[String],
        views: &[DocumentView],
    ) -> Result<Targets> {
        let mut targets: Targets = HashMap::new();
        let mut frontier: Vec<String> = views
            .iter()
            .filter_map(|v| Some((v.doc_type.as_str(), v.data(self.perspective)?)))
            .flat_map(|(doc_type, data)| document_refs(self.schemas, doc_type, data))
            .collect();
        for level in 1..=self.depth {
            let wanted = new_ids(frontier, &targets);
            if wanted.is_empty() {
                break;
            }
            if targets.len() + wanted.len() > self.limit {
                return Err(too_many(self.limit));
            }
            let mut next = Vec::new();
            for record in source.load(orgs, &wanted).await? {
                let Some(mut target) = self.visibility.show(record, self.perspective) else {
                    continue;
                };
                if let Some(localization) = self.localization {
                    localization.show_data(self.schemas, &target.doc_type, &mut target.data);
                }
                if level < self.depth {
                    next.extend(document_refs(self.schemas, &target.doc_type, &target.data));
                }
                targets.insert(target.id.clone(), Some(target));
            }
            for id in wanted {
                targets.entry(id).or_insert(None);
            }
            frontier = next;
        }
        Ok(targets)
    }

    /// Replaces the document references of `data` (of type `doc_type`) by their targets,
    /// `remaining` levels deep, each replacement taken from `budget`.
    fn expand(
        &self,
        doc_type: &str,
        data: &mut Value,
        targets: &Targets,
        remaining: u8,
        budget: &mut usize,
    ) -> Result<()> {
        let ids: HashSet<String> = document_refs(self.schemas, doc_type, data)
            .into_iter()
            .collect();
        if ids.is_empty() {
            return Ok(());
        }
        self.replace(data, &ids, targets, remaining, budget)
    }

    /// Replaces every object `{ "_ref": id, ... }` of `value` whose id is one of `ids` (the
    /// references the schema found in the data being expanded) and was resolved.
    fn replace(
        &self,
        value: &mut Value,
        ids: &HashSet<String>,
        targets: &Targets,
        remaining: u8,
        budget: &mut usize,
    ) -> Result<()> {
        match value {
            Value::Object(map) => {
                let target = map
                    .get("_ref")
                    .and_then(Value::as_str)
                    .filter(|id| ids.contains(*id))
                    .and_then(|id| targets.get(id))
                    .and_then(Option::as_ref);
                if let Some(target) = target {
                    *budget = budget.checked_sub(1).ok_or_else(|| too_many(self.limit))?;
                    let mut shown = target.data.clone();
                    if remaining > 1 {
                        self.expand(&target.doc_type, &mut shown, targets, remaining - 1, budget)?;
                    }
                    if let Value::Object(fields) = &mut shown {
                        fields.insert("_id".into(), Value::String(target.id.clone()));
                        fields.insert("_type".into(), Value::String(target.doc_type.clone()));
                    }
                    *value = shown;
                    return Ok(());
                }
                for child in map.values_mut() {
                    self.replace(child, ids, targets, remaining, budget)?;
                }
                Ok(())
            }
            Value::Array(items) => items
                .iter_mut()
                .try_for_each(|item| self.replace(item, ids, targets, remaining, budget)),
            _ => Ok(()),
        }
    }
}

/// The ids of the document references the schema finds in `data`.
fn document_refs(schemas: &Schemas, doc_type: &str, data: &Value) -> Vec<String> {
    schemas
        .references(doc_type, data)
        .into_iter()
        .filter(|r| r.target == RefTarget::Document)
        .map(|r| r.id)
        .collect()
}

/// The distinct ids of `ids` not reached yet, sorted (a stable order for the store).
fn new_ids(ids: Vec<String>, reached: &Targets) -> Vec<String> {
    let mut fresh: Vec<String> = ids
        .into_iter()
        .filter(|id| !reached.contains_key(id))
        .collect();
    fresh.sort_unstable();
    fresh.dedup();
    fresh
}

fn too_many(limit: usize) -> Error {
    Error::bad_request(format!(
        "the response would expand more than {limit} references (MAX_EXPANDED_NODES): \
         ask for a smaller `depth` or page"
    ))
}

#[cfg(test)]
mod tests {
    use cms_core::schema::parse_schemas;
    use cms_store::Json;
    use serde_json::json;

    use super::*;

    /// Every target readable and shown whole.
    struct Everyone;

    impl Visibility for Everyone {
        fn show(&self, record: DocumentRecord, perspective: Perspective) -> Option<Target> {
            let data = match perspective {
                Perspective::Draft => record.draft_data.0,
                Perspective::Published => record.published_data?.0,
            };
            Some(Target {
                id: record.id,
                doc_type: record.doc_type,
                data,
            })
        }
    }

    /// A store of documents that records every batch it is asked for.
    struct Counting {
        documents: HashMap<String, DocumentRecord>,
        batches: Vec<Vec<String>>,
    }

    #[async_trait]
    impl TargetSource for Counting {
        async fn load(&mut self, _orgs: &[String], ids: &[String]) -> Result<Vec<DocumentRecord>> {
            self.batches.push(ids.to_vec());
            Ok(ids
                .iter()
                .filter_map(|id| self.documents.get(id).cloned())
                .collect())
        }
    }

    fn schemas() -> Schemas {
        let parsed = parse_schemas(&json!([
            {"type": "document", "name": "post", "fields": [
                {"name": "title", "type": "string"},
                {"name": "author", "type": "reference", "to": ["author"]},
                {"name": "related", "type": "array", "of": [{"type": "reference", "to": ["post"]}]}
            ]},
            {"type": "document", "name": "author", "fields": [
                {"name": "name", "type": "string"},
                {"name": "team", "type": "reference", "to": ["team"]}
            ]},
            {"type": "document", "name": "team", "fields": [
                {"name": "name", "type": "string"},
                {"name": "lead", "type": "reference", "to": ["author"]}
            ]}
        ]))
        .unwrap();
        Schemas::new(parsed).unwrap()
    }

    fn record(id: &str, doc_type: &str, data: Value) -> DocumentRecord {
        DocumentRecord {
            id: id.into(),
            organization_id: "o1".into(),
            doc_type: doc_type.into(),
            singleton: false,
            draft_data: Json(data),
            published_data: None,
            published_hash: None,
            revision: 1,
            created_by: None,
            updated_by: None,
            created_at: 1,
            updated_at: 1,
            published_at: None,
        }
    }

    fn resolver(schemas: &Schemas, depth: u8, limit: usize) -> Resolver<'_, Everyone> {
        Resolver {
            schemas,
            visibility: &Everyone,
            perspective: Perspective::Draft,
            depth,
            limit,
            localization: None,
        }
    }

    /// Two authors in one team (whose lead is one of them): the page's twenty posts all name
    /// them.
    fn store() -> Counting {
        let documents = [
            record(
                "a1",
                "author",
                json!({"name": "Ada", "team": {"_ref": "t1"}}),
            ),
            record(
                "a2",
                "author",
                json!({"name": "Bo", "team": {"_ref": "t1"}}),
            ),
            record(
                "t1",
                "team",
                json!({"name": "Core", "lead": {"_ref": "a1"}}),
            ),
        ]
        .into_iter()
        .map(|d| (d.id.clone(), d))
        .collect();
        Counting {
            documents,
            batches: Vec::new(),
        }
    }

    fn page() -> Vec<DocumentView> {
        (0..20)
            .map(|i| {
                let author = if i % 2 == 0 { "a1" } else { "a2" };
                DocumentView::from(record(
                    &format!("p{i}"),
                    "post",
                    json!({"title": format!("P{i}"), "author": {"_ref": author}, "related": [{"_ref": "gone"}]}),
                ))
            })
            .collect()
    }

    #[tokio::test]
    async fn each_level_is_one_batch_of_distinct_ids_and_targets_are_shared() {
        let schemas = schemas();
        let mut source = store();
        let mut views = page();
        resolver(&schemas, 2, MAX_EXPANDED_NODES)
            .resolve(&mut source, &["o1".into()], &mut views)
            .await
            .unwrap();
        assert_eq!(
            source.batches,
            vec![
                vec!["a1".to_string(), "a2".into(), "gone".into()],
                vec!["t1".to_string()]
            ],
            "one batch per level, each id once, never a target twice"
        );
        let first = &views[0].draft_data;
        assert_eq!(first["author"]["_id"], "a1");
        assert_eq!(first["author"]["team"]["name"], "Core");
        assert_eq!(first["author"]["team"]["_type"], "team");
        assert_eq!(
            first["author"]["team"]["lead"],
            json!({"_ref": "a1"}),
            "the third level stays a reference at depth 2"
        );
        assert_eq!(first["related"], json!([{"_ref": "gone"}]));
        assert_eq!(views[1].draft_data["author"]["name"], "Bo");
    }

    #[tokio::test]
    async fn a_cycle_is_loaded_once_and_expanded_to_the_depth() {
        let schemas = schemas();
        let mut source = store();
        let mut views = vec![DocumentView::from(record(
            "p",
            "post",
            json!({"author": {"_ref": "a1"}}),
        ))];
        resolver(&schemas, 5, MAX_EXPANDED_NODES)
            .resolve(&mut source, &["o1".into()], &mut views)
            .await
            .unwrap();
        assert_eq!(source.batches.len(), 2, "a1, then t1; a1 again is known");
        let data = &views[0].draft_data;
        assert_eq!(data["author"]["team"]["lead"]["team"]["lead"]["_id"], "a1");
        assert_eq!(
            data["author"]["team"]["lead"]["team"]["lead"]["team"],
            json!({"_ref": "t1"})
        );
    }

    #[tokio::test]
    async fn past_the_cap_the_answer_is_a_400_naming_it() {
        let schemas = schemas();
        // 20 posts x (author + team) = 40 expansions, from three targets.
        let mut source = store();
        let mut views = page();
        let refused = resolver(&schemas, 2, 39)
            .resolve(&mut source, &["o1".into()], &mut views)
            .await
            .unwrap_err();
        match refused {
            Error::BadRequest { message, .. } => {
                assert!(message.contains("39"), "{message}");
                assert!(message.contains("MAX_EXPANDED_NODES"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let mut views = page();
        resolver(&schemas, 2, 40)
            .resolve(&mut store(), &["o1".into()], &mut views)
            .await
            .unwrap();
        // More distinct ids than the cap are refused before they are read.
        let mut source = store();
        let mut views = page();
        let refused = resolver(&schemas, 1, 2)
            .resolve(&mut source, &["o1".into()], &mut views)
            .await;
        assert!(matches!(refused, Err(Error::BadRequest { .. })));
        assert!(source.batches.is_empty(), "nothing loaded past the cap");
    }

    #[tokio::test]
    async fn depth_zero_reads_nothing() {
        let schemas = schemas();
        let mut source = store();
        let mut views = page();
        resolver(&schemas, 0, MAX_EXPANDED_NODES)
            .resolve(&mut source, &["o1".into()], &mut views)
            .await
            .unwrap();
        assert!(source.batches.is_empty());
        assert_eq!(views[0].draft_data["author"], json!({"_ref": "a1"}));
    }
}
