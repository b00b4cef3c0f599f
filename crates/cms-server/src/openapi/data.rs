//! A JSON Schema per registered type, built from its schema definition (CONTRACT.md section
//! 2): `<Type>Data` for document types, `<Type>` for object types used as field types.
//!
//! The schemas describe data as publishing requires it (required fields listed); a draft may
//! be incomplete, which is why `draftData` in the document envelope stays a plain object.
//!
//! A localized field (CONTRACT.md section 17) is described both ways, as `anyOf`: its plain
//! value (a read or write in one locale) or an object keyed by locale tag (`locale=*`). `anyOf`
//! rather than `oneOf`: an object-valued field's plain value is an object too, which both
//! branches may accept.

use cms_core::schema::{Field, FieldType, Schema, Schemas};
use serde_json::{Map, Value, json};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema as OpenApiSchema;

use crate::graphql::pascal;

/// The component name of a type's schema.
pub(crate) fn component_name(schema: &Schema) -> String {
    if schema.is_document() {
        format!("{}Data", pascal(&schema.name))
    } else {
        pascal(&schema.name)
    }
}

/// Every registered type's schema, by component name.
pub(crate) fn document_schemas(schemas: &Schemas) -> Vec<(String, RefOr<OpenApiSchema>)> {
    schemas
        .all()
        .iter()
        .filter_map(|schema| {
            let json = object(&schema.fields, schemas, schema.title.as_deref());
            // Everything built here is plain JSON Schema, which utoipa's model reads back.
            match serde_json::from_value(json) {
                Ok(parsed) => Some((component_name(schema), parsed)),
                Err(e) => {
                    tracing::error!(schema = %schema.name, error = %e, "no OpenAPI schema for a type");
                    None
                }
            }
        })
        .collect()
}

fn object(fields: &[Field], schemas: &Schemas, title: Option<&str>) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in fields {
        let mut schema = field_schema(&field.ty, schemas);
        if let (Some(title), Some(map)) = (&field.title, schema.as_object_mut()) {
            map.insert("title".into(), json!(title));
        }
        if field.localized {
            schema = localized(schema, schemas);
        }
        properties.insert(field.name.clone(), schema);
        if field.required {
            required.push(json!(field.name));
        }
    }
    let mut object = json!({ "type": "object", "properties": properties });
    if !required.is_empty() {
        object["required"] = Value::Array(required);
    }
    if let Some(title) = title {
        object["title"] = json!(title);
    }
    object
}

/// A localized field's schema: its `plain` value, or an object of such values keyed by the
/// instance's locale tags (an organization may use fewer; GET /api/locales lists its own).
fn localized(plain: Value, schemas: &Schemas) -> Value {
    let tags: Vec<&str> = schemas
        .locales()
        .available()
        .iter()
        .map(|t| t.as_str())
        .collect();
    json!({
        "description": "A localized field: its plain value when the request reads or writes \
            one locale (`locale=<tag>`, or no `locale`: the default locale; the value may come \
            from a fallback locale, which `_meta.fallbackLocales` names), or an object keyed by \
            locale tag holding the locales that have a value when it asks for every locale \
            (`locale=*`).",
        "anyOf": [
            plain,
            {
                "type": "object",
                "description": "Every locale (`locale=*`): locale tag → that locale's value.",
                "propertyNames": { "type": "string", "enum": tags },
                "additionalProperties": plain,
            },
        ],
    })
}

fn ref_object(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "properties": { "_ref": { "type": "string" } },
        "required": ["_ref"],
    })
}

fn asset(what: &str) -> Value {
    json!({
        "type": "object",
        "description": format!("{what}: `asset._ref` is an asset id; absent while nothing is uploaded"),
        "properties": { "asset": ref_object("the asset") },
    })
}

fn field_schema(ty: &FieldType, schemas: &Schemas) -> Value {
    match ty {
        FieldType::String {
            min_length,
            max_length,
            pattern,
            options,
        } => {
            let mut s = json!({ "type": "string" });
            set(&mut s, "minLength", min_length.map(Value::from));
            set(&mut s, "maxLength", max_length.map(Value::from));
            set(
                &mut s,
                "pattern",
                pattern.as_ref().map(|p| json!(p.source())),
            );
            set(&mut s, "enum", options.as_ref().map(|o| json!(o)));
            s
        }
        FieldType::Text {
            min_length,
            max_length,
        } => {
            let mut s = json!({ "type": "string" });
            set(&mut s, "minLength", min_length.map(Value::from));
            set(&mut s, "maxLength", max_length.map(Value::from));
            s
        }
        FieldType::Number { min, max, integer } => {
            let mut s = json!({ "type": if *integer { "integer" } else { "number" } });
            set(&mut s, "minimum", min.map(Value::from));
            set(&mut s, "maximum", max.map(Value::from));
            s
        }
        FieldType::Boolean => json!({ "type": "boolean" }),
        FieldType::Date => json!({ "type": "string", "format": "date" }),
        FieldType::Datetime => json!({ "type": "string", "format": "date-time" }),
        FieldType::Url => json!({ "type": "string", "format": "uri" }),
        FieldType::Email => json!({ "type": "string", "format": "email" }),
        FieldType::Slug { .. } => json!({
            "type": "object",
            "properties": { "current": { "type": "string" } },
            "required": ["current"],
        }),
        FieldType::Reference { to } => ref_object(&format!(
            "a reference: `_ref` is the id of a document of type {}",
            to.join(" or ")
        )),
        FieldType::Image { .. } => asset("an image"),
        FieldType::File { .. } => asset("a file"),
        FieldType::Array {
            of,
            min_items,
            max_items,
        } => {
            let members: Vec<Value> = of.iter().map(|f| field_schema(&f.ty, schemas)).collect();
            let items = match members.len() {
                1 => members.into_iter().next().unwrap_or_default(),
                _ => json!({ "anyOf": members }),
            };
            let mut s = json!({ "type": "array", "items": items });
            set(&mut s, "minItems", min_items.map(Value::from));
            set(&mut s, "maxItems", max_items.map(Value::from));
            s
        }
        FieldType::Object { fields } => object(fields, schemas, None),
        FieldType::Block => json!({
            "type": "array",
            "description": "Portable Text: blocks, each an object with a string `_type`",
            "items": {
                "type": "object",
                "properties": { "_type": { "type": "string" } },
                "required": ["_type"],
            },
        }),
        FieldType::Json => super::any_value(),
        FieldType::Named(name) => match schemas.get(name) {
            Some(schema) => {
                json!({ "$ref": format!("#/components/schemas/{}", component_name(schema)) })
            }
            None => super::any_value(),
        },
    }
}

fn set(schema: &mut Value, key: &str, value: Option<Value>) {
    if let Some(value) = value {
        schema[key] = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cms_core::Locales;
    use cms_core::schema::demo_schemas;

    /// A schema utoipa's model cannot read back is dropped with an error in the log: every
    /// demo type (`page` has localized fields) must come through.
    #[test]
    fn every_type_is_described_localized_fields_included() {
        let tags = ["en", "de"].map(String::from);
        let locales = Locales::new(&tags, None, &Default::default()).unwrap();
        let schemas = Schemas::new(demo_schemas()).unwrap().with_locales(locales);
        let described = document_schemas(&schemas);
        assert_eq!(described.len(), schemas.all().len());
        let (_, page) = described
            .iter()
            .find(|(name, _)| name == "PageData")
            .unwrap();
        let page = serde_json::to_value(page).unwrap();
        let title = &page["properties"]["title"]["anyOf"];
        assert_eq!(title[0]["type"], "string");
        assert_eq!(title[1]["propertyNames"]["enum"], json!(["en", "de"]));
        assert_eq!(title[1]["additionalProperties"], title[0]);
    }
}
