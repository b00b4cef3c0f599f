//! Schemas back to the JSON shape of CONTRACT.md section 2 (for GET /api/schemas), such that
//! parsing the output gives the same schema.

use serde::{Serialize, Serializer};
use serde_json::{Map, Value, json};

use super::model::{Field, FieldType, Schema};

impl Schema {
    /// The schema as declared: defaults (`false`, absent options) are left out.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("type".into(), json!(self.kind.as_str()));
        out.insert("name".into(), json!(self.name));
        put_opt(&mut out, "title", self.title.as_ref().map(|t| json!(t)));
        put_flag(&mut out, "singleton", self.singleton);
        put_opt(&mut out, "access", self.access.to_json());
        out.insert("fields".into(), fields_json(&self.fields));
        Value::Object(out)
    }
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

fn fields_json(fields: &[Field]) -> Value {
    Value::Array(fields.iter().map(field_json).collect())
}

fn field_json(field: &Field) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), json!(field.name));
    out.insert("type".into(), json!(field.ty.type_name()));
    put_opt(&mut out, "title", field.title.as_ref().map(|t| json!(t)));
    put_flag(&mut out, "required", field.required);
    put_flag(&mut out, "indexed", field.indexed);
    put_opt(&mut out, "access", field.access.to_json());
    options_json(&field.ty, &mut out);
    Value::Object(out)
}

fn options_json(ty: &FieldType, out: &mut Map<String, Value>) {
    match ty {
        FieldType::String {
            min_length,
            max_length,
            pattern,
            options,
        } => {
            put_opt(out, "minLength", min_length.map(Value::from));
            put_opt(out, "maxLength", max_length.map(Value::from));
            put_opt(out, "pattern", pattern.as_ref().map(|p| json!(p.source())));
            put_opt(out, "options", options.as_ref().map(|o| json!(o)));
        }
        FieldType::Text {
            min_length,
            max_length,
        } => {
            put_opt(out, "minLength", min_length.map(Value::from));
            put_opt(out, "maxLength", max_length.map(Value::from));
        }
        FieldType::Number { min, max, integer } => {
            put_opt(out, "min", min.map(number));
            put_opt(out, "max", max.map(number));
            put_flag(out, "integer", *integer);
        }
        FieldType::Slug { source } => put_opt(out, "source", source.as_ref().map(|s| json!(s))),
        FieldType::Reference { to } => put_opt(out, "to", Some(json!(to))),
        FieldType::Image { accept } | FieldType::File { accept } => {
            put_opt(out, "accept", (!accept.is_empty()).then(|| json!(accept)));
        }
        FieldType::Array {
            of,
            min_items,
            max_items,
        } => {
            out.insert("of".into(), fields_json(of));
            put_opt(out, "minItems", min_items.map(Value::from));
            put_opt(out, "maxItems", max_items.map(Value::from));
        }
        FieldType::Object { fields } => put_opt(out, "fields", Some(fields_json(fields))),
        _ => {}
    }
}

/// A bound as declared: `0`, not `0.0`, when it is a whole number.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

fn put_opt(out: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        out.insert(key.into(), v);
    }
}

fn put_flag(out: &mut Map<String, Value>, key: &str, on: bool) {
    if on {
        out.insert(key.into(), Value::Bool(true));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::demo_schemas;

    fn all_types() -> Schema {
        Schema::from_json(&json!({
            "type": "document", "name": "kitchen", "title": "Kitchen sink", "singleton": true,
            "access": { "read": ["viewer"] },
            "fields": [
                { "name": "title", "type": "string", "title": "Title", "required": true,
                  "indexed": true, "access": { "update": ["admin"] }, "minLength": 1,
                  "maxLength": 80, "pattern": "^[A-Z]", "options": ["A", "B"] },
                { "name": "excerpt", "type": "text", "minLength": 2, "maxLength": 200 },
                { "name": "views", "type": "number", "min": -1.5, "max": 10, "integer": true },
                { "name": "ok", "type": "boolean" },
                { "name": "on", "type": "date" },
                { "name": "at", "type": "datetime" },
                { "name": "site", "type": "url" },
                { "name": "mail", "type": "email" },
                { "name": "slug", "type": "slug", "source": "title" },
                { "name": "author", "type": "reference", "to": ["author", "page"] },
                { "name": "cover", "type": "image", "accept": ["image/*"] },
                { "name": "doc", "type": "file" },
                { "name": "tags", "type": "array", "minItems": 1, "maxItems": 3,
                  "of": [{ "type": "string" }, { "name": "hero", "type": "object", "title": "Hero",
                           "fields": [{ "name": "h", "type": "string" }] }] },
                { "name": "seo", "type": "object",
                  "fields": [{ "name": "t", "type": "string", "required": true }] },
                { "name": "body", "type": "block" },
                { "name": "raw", "type": "json" },
                { "name": "meta", "type": "seoMeta" }
            ]
        }))
        .unwrap()
    }

    #[test]
    fn round_trip_every_type() {
        let s = all_types();
        assert_eq!(Schema::from_json(&s.to_json()).unwrap(), s);
    }

    #[test]
    fn round_trip_demo_schemas() {
        for s in demo_schemas() {
            assert_eq!(Schema::from_json(&s.to_json()).unwrap(), s);
        }
    }

    #[test]
    fn output_leaves_defaults_out_and_keeps_whole_bounds_whole() {
        let s = all_types();
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["fields"][2]["max"], json!(10));
        assert_eq!(v["fields"][2]["min"], json!(-1.5));
        assert_eq!(v["fields"][3], json!({ "name": "ok", "type": "boolean" }));
        assert_eq!(
            v["fields"][12]["of"][0],
            json!({ "name": "string", "type": "string" })
        );
        assert_eq!(v["singleton"], json!(true));
    }
}
