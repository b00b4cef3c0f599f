//! Published slugs are unique per type and organization (CONTRACT.md section 2), checked in
//! the unit of work that publishes them, with the slug held until that unit ends.

use cms_core::filter;
use cms_core::schema::FieldType;
use cms_core::{Issue, LocaleTag};
use cms_store::Tx;
use cms_store::documents::ListSpec;
use cms_store::filter_sql::DataColumn;
use serde_json::{Value, json};

use super::DocumentService;
use crate::error::Result;

impl DocumentService<'_> {
    /// Slugs are unique per type and organization (CONTRACT.md section 2): a top-level slug that
    /// another document of the type has published is an issue. Drafts do not reserve slugs, so
    /// a half-written draft never blocks the document that publishes the slug first. Each slug
    /// is held until the unit ends before it is looked up (`Tx::hold_until_end`), so of two
    /// units publishing one slug at once, the second looks only after the first committed and
    /// finds its copy: the check and the write it guards are one step.
    pub(super) async fn slug_clashes(
        &self,
        tx: &mut dyn Tx,
        orgs: &[String],
        doc_type: &str,
        data: &Value,
        except: Option<&str>,
    ) -> Result<Vec<Issue>> {
        let Some(fields) = self.schemas().fields(doc_type) else {
            return Ok(Vec::new());
        };
        let slugs = self.slug_values(doc_type, data);
        let mut keys: Vec<String> = slugs
            .iter()
            .map(|slug| slug_key(&orgs[0], doc_type, &slug.path(), &slug.current))
            .collect();
        keys.sort();
        for key in &keys {
            tx.hold_until_end(key).await?;
        }
        let mut issues = Vec::new();
        for slug in slugs {
            let fields = match &slug.locale {
                Some(tag) => fields.in_locale(tag),
                None => fields,
            };
            let clause = json!({ slug.field.as_str(): { "equals": slug.current } });
            let filter = filter::parse(&clause, &fields);
            let spec = ListSpec {
                organizations: orgs,
                doc_type,
                column: DataColumn::Published,
                published: Some(cms_store::documents::Publication::Published),
                filter: &filter,
                sort: &[],
                limit: 2,
                offset: 0,
            };
            let (same, _) = tx.list_documents(&spec).await?;
            if same.iter().any(|d| Some(d.id.as_str()) != except) {
                issues.push(slug_taken(&slug.path(), &slug.current));
            }
        }
        Ok(issues)
    }

    /// The non-empty top-level slugs of `data`; a localized slug field gives one per locale
    /// (unique per locale: `/de/ueber-uns` and `/en/about` are two pages' slugs, or one's).
    pub(super) fn slug_values(&self, doc_type: &str, data: &Value) -> Vec<SlugValue> {
        let Some(schema) = self.schemas().get(doc_type) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for field in &schema.fields {
            if !matches!(field.ty, FieldType::Slug { .. }) {
                continue;
            }
            let Some(value) = data.get(&field.name) else {
                continue;
            };
            for (locale, value) in self.schemas().values_by_locale(field, value) {
                if let Some(current) = value
                    .get("current")
                    .and_then(Value::as_str)
                    .filter(|c| !c.is_empty())
                {
                    out.push(SlugValue {
                        field: field.name.clone(),
                        locale: locale.cloned(),
                        current: current.to_string(),
                    });
                }
            }
        }
        out
    }
}

/// One published slug value: its field, its locale when the field is localized, `current`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct SlugValue {
    pub(super) field: String,
    pub(super) locale: Option<LocaleTag>,
    pub(super) current: String,
}

impl SlugValue {
    /// Where an issue about it points: `slug`, or `slug.de` for a localized one.
    pub(super) fn path(&self) -> String {
        match &self.locale {
            Some(tag) => format!("{}.{tag}", self.field),
            None => self.field.clone(),
        }
    }
}

/// What a unit holds while it checks and writes one published slug. The parts are joined by
/// a character no name holds, so no two slugs share a key.
fn slug_key(org: &str, doc_type: &str, field: &str, current: &str) -> String {
    format!("slug\u{1f}{org}\u{1f}{doc_type}\u{1f}{field}\u{1f}{current}")
}

pub(super) fn slug_taken(field: &str, current: &str) -> Issue {
    Issue::new(
        field,
        "unique",
        format!("{field} `{current}` is already used"),
    )
}
