//! Stored data under the current schema (CONTRACT.md section 19). Schemas change while data
//! stays: a field renamed with `renamedFrom` still has its values under the old key, and a
//! removed field still has its values in drafts and published copies written before. Reads show
//! data as the schema now declares it, saves start from that, and `cms migrate-content` writes
//! it back so the stored data matches again.
//!
//! Objects are followed into their declared object fields (in every locale of a localized one);
//! array items are left as they are.

use serde_json::{Map, Value};

use super::Schemas;
use super::localize::Stored;
use super::model::Field;

/// What to do with keys no field declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undeclared {
    /// Leave them: a version is a record of what was stored.
    Keep,
    /// Leave them out: a document is read and saved as its schema declares it.
    Drop,
}

/// What conforming a value changed, by path (`seo.title`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conformed {
    /// `old → new` of each key moved to its field's current name.
    pub renamed: Vec<String>,
    /// Each undeclared key left out.
    pub dropped: Vec<String>,
}

impl Conformed {
    pub fn is_empty(&self) -> bool {
        self.renamed.is_empty() && self.dropped.is_empty()
    }
}

impl Schemas {
    /// Moves the values of renamed fields of `type_name` in `data` to their current names
    /// (when the current name holds nothing yet) and, with [`Undeclared::Drop`], leaves out
    /// keys no field declares. A type that is not declared is left alone.
    pub fn conform(&self, type_name: &str, data: &mut Value, undeclared: Undeclared) -> Conformed {
        let mut changes = Conformed::default();
        if let (Some(schema), Some(map)) = (self.get(type_name), data.as_object_mut()) {
            self.conform_object(&schema.fields, map, "", undeclared, &mut changes);
        }
        changes
    }

    fn conform_object(
        &self,
        fields: &[Field],
        map: &mut Map<String, Value>,
        prefix: &str,
        undeclared: Undeclared,
        changes: &mut Conformed,
    ) {
        for field in fields {
            if let Some(old) = &field.renamed_from
                && !map.contains_key(&field.name)
                && let Some(value) = map.remove(old)
            {
                map.insert(field.name.clone(), value);
                changes
                    .renamed
                    .push(format!("{prefix}{old} → {prefix}{}", field.name));
            }
        }
        if undeclared == Undeclared::Drop && map.keys().any(|k| !declares(fields, k)) {
            map.retain(|key, _| {
                let keep = declares(fields, key);
                if !keep {
                    changes.dropped.push(format!("{prefix}{key}"));
                }
                keep
            });
        }
        for field in fields {
            let Some(children) = self.children(&field.ty) else {
                continue;
            };
            let Some(value) = map.get_mut(&field.name) else {
                continue;
            };
            let path = format!("{prefix}{}.", field.name);
            let keyed =
                field.localized && matches!(self.stored(&field.ty, value), Stored::Keyed(_));
            match value {
                Value::Object(locales) if keyed => {
                    for value in locales.values_mut() {
                        if let Some(inner) = value.as_object_mut() {
                            self.conform_object(children, inner, &path, undeclared, changes);
                        }
                    }
                }
                Value::Object(inner) => {
                    self.conform_object(children, inner, &path, undeclared, changes)
                }
                _ => {}
            }
        }
    }
}

fn declares(fields: &[Field], key: &str) -> bool {
    fields.iter().any(|f| f.name == key)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Conformed, Undeclared};
    use crate::schema::{Schemas, parse_schemas};

    fn schemas() -> Schemas {
        let parsed = parse_schemas(&json!([
            {"type": "object", "name": "seo", "fields": [
                {"name": "metaTitle", "type": "string", "renamedFrom": "title"}
            ]},
            {"type": "document", "name": "post", "fields": [
                {"name": "title", "type": "string"},
                {"name": "summary", "type": "text", "renamedFrom": "teaser"},
                {"name": "seo", "type": "seo"},
                {"name": "tags", "type": "array", "of": [{"type": "string"}]}
            ]}
        ]))
        .unwrap();
        Schemas::new(parsed).unwrap()
    }

    #[test]
    fn renamed_keys_move_and_undeclared_ones_go_when_asked() {
        let schemas = schemas();
        let stored = json!({"title": "T", "teaser": "old", "subtitle": "gone",
                            "seo": {"title": "S", "robots": "x"}, "tags": [{"keep": 1}]});
        let mut read = stored.clone();
        let changes = schemas.conform("post", &mut read, Undeclared::Drop);
        assert_eq!(
            read,
            json!({"title": "T", "summary": "old", "seo": {"metaTitle": "S"}, "tags": [{"keep": 1}]})
        );
        assert_eq!(
            changes,
            Conformed {
                renamed: vec![
                    "teaser → summary".into(),
                    "seo.title → seo.metaTitle".into()
                ],
                dropped: vec!["subtitle".into(), "seo.robots".into()],
            }
        );
        let mut version = stored.clone();
        let changes = schemas.conform("post", &mut version, Undeclared::Keep);
        assert_eq!(version["summary"], "old");
        assert_eq!(version["subtitle"], "gone", "kept");
        assert!(changes.dropped.is_empty());
    }

    #[test]
    fn the_current_name_wins_and_conformed_data_is_left_alone() {
        let schemas = schemas();
        // Both keys: the current one is the value; the old one is undeclared.
        let mut both = json!({"summary": "new", "teaser": "old"});
        let changes = schemas.conform("post", &mut both, Undeclared::Drop);
        assert_eq!(both, json!({"summary": "new"}));
        assert_eq!(changes.dropped, ["teaser"]);
        let mut current = json!({"title": "T", "summary": "s"});
        assert!(
            schemas
                .conform("post", &mut current, Undeclared::Drop)
                .is_empty()
        );
        assert_eq!(current, json!({"title": "T", "summary": "s"}));
        let mut other = json!({"anything": 1});
        assert!(
            schemas
                .conform("nope", &mut other, Undeclared::Drop)
                .is_empty()
        );
    }

    #[test]
    fn renamed_from_is_checked() {
        for (fields, message) in [
            (
                json!([{"name": "a", "type": "string", "renamedFrom": "b"},
                    {"name": "b", "type": "string"}]),
                "still a field",
            ),
            (
                json!([{"name": "a", "type": "string", "renamedFrom": "c"},
                    {"name": "b", "type": "string", "renamedFrom": "c"}]),
                "more than one",
            ),
            (
                json!([{"name": "a", "type": "string", "renamedFrom": "no-good"}]),
                "must match",
            ),
        ] {
            let parsed =
                parse_schemas(&json!({"type": "document", "name": "d", "fields": fields})).unwrap();
            let error = Schemas::new(parsed).unwrap_err().to_string();
            assert!(error.contains(message), "{error}");
        }
    }
}
