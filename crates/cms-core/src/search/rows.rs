//! The rows one copy of a document is indexed as: one per searchable field, locale and chunk.

use serde_json::Value;

use super::{CHUNK_OVERLAP, CHUNK_TOKENS, exact_key, tokenize};
use crate::locale::LocaleTag;
use crate::schema::{Field, FieldType, Schemas};

/// One indexed row of a document copy.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRow {
    /// The locale of a localized value; empty for a field that is not localized (it is read
    /// in every locale).
    pub locale: String,
    /// The field's dotted path (`title`, `seo.description`), as field access rules name it.
    pub path: String,
    /// From 0: the position of this chunk of a long value.
    pub chunk: i64,
    /// How much a match in this field counts: shorter fields count more (see [`weight`]).
    pub weight: i64,
    /// [`exact_key`] of the whole value's tokens.
    pub exact: String,
    /// The chunk's normalized tokens, in order.
    pub tokens: Vec<String>,
}

/// A match's weight in a field of `n` tokens, in thousandths: 1000 / (1 + log2(1 + n)).
/// Integers, so the sums that make a score are exact and equal on both engines.
pub fn weight(n: usize) -> i64 {
    (1000.0 / (1.0 + (1.0 + n as f64).log2())).round() as i64
}

/// The searchable fields of a document type with their dotted paths (`title`, `seo.title`):
/// at the top and inside objects and named object types, never inside arrays.
pub fn searchable_paths(schemas: &Schemas, type_name: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(schema) = schemas.get(type_name) {
        collect_paths(schemas, &schema.fields, "", &mut out);
    }
    out
}

fn collect_paths(schemas: &Schemas, fields: &[Field], prefix: &str, out: &mut Vec<String>) {
    for field in fields {
        let path = join(prefix, &field.name);
        if field.searchable {
            out.push(path.clone());
        }
        if let Some(children) = schemas.children(&field.ty) {
            collect_paths(schemas, children, &path, out);
        }
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

impl Schemas {
    /// The search rows of one stored copy (every locale) of a document of `type_name`: for
    /// each searchable field with text, per locale when it is localized (or inside a localized
    /// object), its tokens in chunks of [`CHUNK_TOKENS`] that overlap by [`CHUNK_OVERLAP`].
    pub fn search_rows(&self, type_name: &str, data: &Value) -> Vec<SearchRow> {
        let mut out = Vec::new();
        if let Some(schema) = self.get(type_name) {
            self.rows_of(&schema.fields, data, "", None, &mut out);
        }
        out
    }

    fn rows_of(
        &self,
        fields: &[Field],
        data: &Value,
        prefix: &str,
        locale: Option<&LocaleTag>,
        out: &mut Vec<SearchRow>,
    ) {
        let Some(map) = data.as_object() else {
            return;
        };
        for field in fields {
            let Some(value) = map.get(&field.name) else {
                continue;
            };
            let path = join(prefix, &field.name);
            let per_locale = match (locale, field.localized) {
                (None, true) => self.values_by_locale(field, value),
                _ => vec![(locale, value)],
            };
            for (tag, value) in per_locale {
                if field.searchable {
                    let mut text = String::new();
                    field_text(&field.ty, value, &mut text);
                    push_rows(out, tag, &path, &text);
                }
                if let Some(children) = self.children(&field.ty) {
                    self.rows_of(children, value, &path, tag, out);
                }
            }
        }
    }
}

/// The text of a searchable value: a string's, or the spans of a block field's text blocks
/// (blocks and spans separated so that no two words run together).
fn field_text(ty: &FieldType, value: &Value, text: &mut String) {
    match (ty, value) {
        (FieldType::Block, Value::Array(blocks)) => {
            for block in blocks {
                if block.get("_type").and_then(Value::as_str) != Some("block") {
                    continue;
                }
                let spans = block.get("children").and_then(Value::as_array);
                for span in spans.into_iter().flatten() {
                    if let Some(span_text) = span.get("text").and_then(Value::as_str) {
                        text.push_str(span_text);
                    }
                }
                text.push('\n');
            }
        }
        (_, Value::String(s)) => text.push_str(s),
        _ => {}
    }
}

fn push_rows(out: &mut Vec<SearchRow>, locale: Option<&LocaleTag>, path: &str, text: &str) {
    let tokens = tokenize(text);
    if tokens.is_empty() {
        return;
    }
    let weight = weight(tokens.len());
    let exact = exact_key(&tokens);
    let step = CHUNK_TOKENS - CHUNK_OVERLAP;
    let mut start = 0;
    let mut chunk = 0;
    loop {
        let end = (start + CHUNK_TOKENS).min(tokens.len());
        out.push(SearchRow {
            locale: locale.map(|t| t.to_string()).unwrap_or_default(),
            path: path.to_string(),
            chunk,
            weight,
            exact: exact.clone(),
            tokens: tokens[start..end].to_vec(),
        });
        if end == tokens.len() {
            break;
        }
        start += step;
        chunk += 1;
    }
}
