//! Collecting the references a document's data holds, so the service layer can check that
//! targets exist, answer back-references and count asset uses: the domain knows where
//! references are, only the store knows whether their targets exist.

use serde_json::{Map, Value};

use super::localize::Stored;
use super::model::{Field, FieldType};
use super::place::At;
use super::registry::Schemas;
use super::validate::candidates;

/// What a found id points to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefTarget {
    /// A `reference` field's `_ref`: a document id.
    Document,
    /// A `file` field's `asset._ref` (or a file placed in text): an asset id, of any asset.
    Asset,
    /// An `image` field's `asset._ref` (or an image placed in text): the id of an image asset.
    Image,
}

impl RefTarget {
    /// Whether the target is an asset (of any kind).
    pub fn is_asset(self) -> bool {
        matches!(self, RefTarget::Asset | RefTarget::Image)
    }
}

/// One reference in document data: where it is (the path of the reference, image or file
/// value, e.g. `author`, `gallery[2]`, and its label as validation messages name it: "Author",
/// "item 3 of Gallery") and the id it holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FoundReference {
    pub path: String,
    pub label: String,
    pub id: String,
    pub target: RefTarget,
}

impl Schemas {
    /// Every document reference and asset reference in `data`, in nested objects, arrays and
    /// named objects too, plus images and files embedded in block content. Values of the wrong
    /// shape are skipped (structure checking reports them); `json` fields are opaque.
    pub fn references(&self, type_name: &str, data: &Value) -> Vec<FoundReference> {
        let mut out = Vec::new();
        if let (Some(schema), Some(map)) = (self.get(type_name), data.as_object()) {
            self.refs_in_object(&schema.fields, map, &At::root(), &mut out);
        }
        out
    }

    fn refs_in_object(
        &self,
        fields: &[Field],
        map: &Map<String, Value>,
        at: &At,
        out: &mut Vec<FoundReference>,
    ) {
        for field in fields {
            let Some(value) = map.get(&field.name) else {
                continue;
            };
            let at = at.field(field);
            if !field.localized {
                self.refs_in_value(&field.ty, value, &at, out);
                continue;
            }
            // Every locale's references count: a target used in any locale is in use.
            match self.stored(&field.ty, value) {
                Stored::Keyed(locales) => {
                    for (tag, value) in locales {
                        self.refs_in_value(&field.ty, value, &at.locale(tag), out);
                    }
                }
                Stored::Unkeyed(value) => self.refs_in_value(&field.ty, value, &at, out),
            }
        }
    }

    fn refs_in_value(&self, ty: &FieldType, value: &Value, at: &At, out: &mut Vec<FoundReference>) {
        match ty {
            FieldType::Reference { .. } => push(out, at, value.get("_ref"), RefTarget::Document),
            FieldType::Image { .. } => push(out, at, asset_ref(value), RefTarget::Image),
            FieldType::File { .. } => push(out, at, asset_ref(value), RefTarget::Asset),
            FieldType::Object { .. } | FieldType::Named(_) => {
                if let (Some(fields), Some(map)) = (self.children(ty), value.as_object()) {
                    self.refs_in_object(fields, map, at, out);
                }
            }
            FieldType::Array { of, .. } => self.refs_in_array(of, value, at, out),
            FieldType::Block => refs_in_blocks(value, at, out),
            _ => {}
        }
    }

    fn refs_in_array(&self, of: &[Field], value: &Value, at: &At, out: &mut Vec<FoundReference>) {
        let Some(items) = value.as_array() else {
            return;
        };
        for (i, item) in items.iter().enumerate() {
            if let Some(member) = candidates(of, item).ok().and_then(|c| c.first().copied()) {
                self.refs_in_value(&member.ty, item, &at.item(i), out);
            }
        }
    }
}

/// Images and files placed directly in Portable Text (`{ "_type": "image", "asset": ... }`):
/// an asset used there must count as used, or it could be deleted from under the text.
fn refs_in_blocks(value: &Value, at: &At, out: &mut Vec<FoundReference>) {
    let Some(items) = value.as_array() else {
        return;
    };
    for (i, item) in items.iter().enumerate() {
        let target = match item.get("_type").and_then(Value::as_str) {
            Some("image") => RefTarget::Image,
            Some("file") => RefTarget::Asset,
            Some("block") => {
                refs_in_mark_defs(item, &at.item(i), out);
                continue;
            }
            _ => continue,
        };
        push(out, &at.item(i), asset_ref(item), target);
    }
}

/// Links from text to documents: a markDef carrying `reference: { "_ref": id }` (the admin's
/// `internalLink`, and the usual shape of other editors' document links). The document linked
/// to is in use like any referenced one: it must exist, is not deleted from under the link,
/// lists the text among its back-references and is expanded with `depth`.
fn refs_in_mark_defs(block: &Value, at: &At, out: &mut Vec<FoundReference>) {
    let Some(defs) = block.get("markDefs").and_then(Value::as_array) else {
        return;
    };
    for (j, def) in defs.iter().enumerate() {
        let reference = def.get("reference");
        let id = reference.and_then(|r| r.get("_ref"));
        let place = At {
            path: at.key("markDefs").item(j).key("reference").path,
            label: format!("a document link in {}", at.label),
        };
        push(out, &place, id, RefTarget::Document);
    }
}

fn asset_ref(value: &Value) -> Option<&Value> {
    value.get("asset").and_then(|a| a.get("_ref"))
}

/// Records `id` when it is a non-empty string; anything else is not a reference.
fn push(out: &mut Vec<FoundReference>, at: &At, id: Option<&Value>, target: RefTarget) {
    if let Some(id) = id.and_then(Value::as_str).filter(|id| !id.is_empty()) {
        out.push(FoundReference {
            path: at.path.clone(),
            label: at.label.clone(),
            id: id.to_owned(),
            target,
        });
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::parse_schemas;

    fn fixture() -> Schemas {
        let v = json!([
            { "type": "document", "name": "author", "fields": [{ "name": "name", "type": "string" }] },
            { "type": "object", "name": "card", "fields": [
                { "name": "who", "type": "reference", "to": ["author"] },
                { "name": "pic", "type": "image" }
            ] },
            { "type": "document", "name": "post", "fields": [
                { "name": "author", "type": "reference", "to": ["author"] },
                { "name": "cover", "type": "image" },
                { "name": "pdf", "type": "file" },
                { "name": "seo", "type": "object", "fields": [{ "name": "og", "type": "image" }] },
                { "name": "card", "type": "card" },
                { "name": "related", "type": "array", "of": [{ "type": "reference", "to": ["post"] }] },
                { "name": "mixed", "type": "array", "of": [
                    { "type": "card" }, { "name": "photo", "type": "image" }, { "type": "string" }
                ] },
                { "name": "body", "type": "block" },
                { "name": "raw", "type": "json" }
            ] }
        ]);
        Schemas::new(parse_schemas(&v).unwrap()).unwrap()
    }

    fn found(path: &str, label: &str, id: &str, target: RefTarget) -> FoundReference {
        FoundReference {
            path: path.into(),
            label: label.into(),
            id: id.into(),
            target,
        }
    }

    #[test]
    fn collects_references_and_assets_everywhere() {
        let data = json!({
            "author": { "_ref": "a1" },
            "cover": { "asset": { "_ref": "img1" }, "alt": "x" },
            "pdf": { "asset": { "_ref": "f1" } },
            "seo": { "og": { "asset": { "_ref": "img2" } } },
            "card": { "who": { "_ref": "a2" }, "pic": { "asset": { "_ref": "img3" } } },
            "related": [{ "_ref": "p1" }, { "_ref": "p2" }],
            "mixed": [
                "text",
                { "_type": "photo", "asset": { "_ref": "img4" } },
                { "_type": "card", "who": { "_ref": "a3" } }
            ],
            "body": [
                { "_type": "block", "children": [] },
                { "_type": "image", "asset": { "_ref": "img5" } },
                { "_type": "block", "children": [], "markDefs": [
                    { "_type": "link", "_key": "l", "href": "https://example.com/" },
                    { "_type": "internalLink", "_key": "d", "reference": { "_ref": "p3" } }
                ] }
            ],
            "raw": { "_ref": "ignored" }
        });
        let got = fixture().references("post", &data);
        assert_eq!(
            got,
            vec![
                found("author", "author", "a1", RefTarget::Document),
                found("cover", "cover", "img1", RefTarget::Image),
                found("pdf", "pdf", "f1", RefTarget::Asset),
                found("seo.og", "og", "img2", RefTarget::Image),
                found("card.who", "who", "a2", RefTarget::Document),
                found("card.pic", "pic", "img3", RefTarget::Image),
                found("related[0]", "item 1 of related", "p1", RefTarget::Document),
                found("related[1]", "item 2 of related", "p2", RefTarget::Document),
                found("mixed[1]", "item 2 of mixed", "img4", RefTarget::Image),
                found("mixed[2].who", "who", "a3", RefTarget::Document),
                found("body[1]", "item 2 of body", "img5", RefTarget::Image),
                found(
                    "body[2].markDefs[1].reference",
                    "a document link in item 3 of body",
                    "p3",
                    RefTarget::Document
                ),
            ]
        );
    }

    #[test]
    fn ignores_wrong_shapes() {
        let data = json!({
            "author": "a1",
            "cover": { "asset": "img1" },
            "pdf": { "asset": { "_ref": 3 } },
            "seo": [],
            "related": { "_ref": "p1" },
            "mixed": [{ "_type": "nope", "asset": { "_ref": "x" } }, null],
            "card": { "who": { "_ref": "" } }
        });
        assert!(fixture().references("post", &data).is_empty());
        assert!(fixture().references("post", &json!([1])).is_empty());
        assert!(fixture().references("nope", &json!({})).is_empty());
    }
}
