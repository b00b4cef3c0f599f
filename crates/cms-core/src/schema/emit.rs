//! Schemas back to the JSON shape of CONTRACT.md section 2 (for GET /api/schemas), such that
//! parsing the output gives the same schema.

use serde::{Serialize, Serializer};
use serde_json::{Map, Value, json};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema as ObjSchema, Type};
use utoipa::openapi::{Ref, RefOr};

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
        put_opt(
            &mut out,
            "previewUrl",
            self.preview_url.as_ref().map(|u| json!(u.as_str())),
        );
        Value::Object(out)
    }
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

/// The emitted JSON, described for the OpenAPI document: what [`Schema::to_json`] writes.
/// Options that are left out by default (`false` flags, absent bounds) are not required.
///
/// `ComposeSchema` (which gives `PartialSchema`) rather than `PartialSchema` itself, as the
/// derive does: the routes answer `Data<Schema>`, and a generic's argument must compose.
impl utoipa::__dev::ComposeSchema for Schema {
    fn compose(_generics: Vec<RefOr<ObjSchema>>) -> RefOr<ObjSchema> {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(
                "A registered document or object type, as declared (CONTRACT.md section 2).",
            ))
            .property(
                "type",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["document", "object"])),
            )
            .required("type")
            .property("name", string())
            .required("name")
            .property("title", string())
            .property(
                "singleton",
                boolean(
                    "At most one document of this type per organization (only `true` is written).",
                ),
            )
            .property("access", access_schema())
            .property(
                "renamedFrom",
                string().description(Some(
                    "The field's former name: stored data under it reads as this field until \
                 `cms migrate-content` rewrites it.",
                )),
            )
            .property("fields", fields_schema())
            .required("fields")
            .property(
                "previewUrl",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .description(Some(
                        "The frontend page showing a draft: an http(s) URL template with `{id}`, \
                         `{slug}`, `{token}` and `{type}` (CONTRACT.md section 15).",
                    )),
            )
            .into()
    }
}

impl utoipa::ToSchema for Schema {
    fn schemas(schemas: &mut Vec<(String, RefOr<ObjSchema>)>) {
        schemas.push((FIELD_SCHEMA.into(), field_schema()));
    }
}

/// The component name of one field's description (fields nest: arrays and objects).
const FIELD_SCHEMA: &str = "SchemaField";

fn field_schema() -> RefOr<ObjSchema> {
    let integer = || {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(0))
    };
    let strings = || ArrayBuilder::new().items(string());
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(
            "One field of a type. `type` is a built-in field type or the name of an object \
             type; the other options belong to the type they apply to.",
        ))
        .property("name", string())
        .required("name")
        .property("type", string())
        .required("type")
        .property("title", string())
        .property("required", boolean("Only `true` is written."))
        .property(
            "indexed",
            boolean(
                "Absent: indexed automatically when a short scalar outside arrays; `false` opts out.",
            ),
        )
        .property(
            "searchable",
            boolean("Joins the type's full-text search (`string`, `text`, `block`). Only `true` is written."),
        )
        .property(
            "localized",
            boolean("One value per locale. Only `true` is written."),
        )
        .property("access", access_schema())
        .property("minLength", integer())
        .property("maxLength", integer())
        .property("pattern", string())
        .property("options", strings())
        .property("min", ObjectBuilder::new().schema_type(Type::Number))
        .property("max", ObjectBuilder::new().schema_type(Type::Number))
        .property("integer", boolean("Only `true` is written."))
        .property("source", string())
        .property("to", strings())
        .property("accept", strings())
        .property("of", fields_schema())
        .property("minItems", integer())
        .property("maxItems", integer())
        .property("fields", fields_schema())
        .into()
}

fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

fn boolean(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Boolean)
        .description(Some(description))
}

fn fields_schema() -> ArrayBuilder {
    ArrayBuilder::new().items(Ref::from_schema_name(FIELD_SCHEMA))
}

/// Role names per operation.
fn access_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some("The role names each listed operation is open to."))
        .additional_properties(Some(ArrayBuilder::new().items(string())))
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
    put_opt(&mut out, "indexed", field.indexed.flag().map(Value::Bool));
    put_flag(&mut out, "searchable", field.searchable);
    put_flag(&mut out, "localized", field.localized);
    put_opt(&mut out, "access", field.access.to_json());
    put_opt(
        &mut out,
        "renamedFrom",
        field.renamed_from.as_ref().map(|n| json!(n)),
    );
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
