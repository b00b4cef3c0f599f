//! Parsing schemas from JSON, by hand so that every error names the schema and the field path,
//! and an unknown key is an error rather than a silently ignored typo.

use serde_json::{Map, Value};

use super::access::{FieldAccess, SchemaAccess};
use super::model::{Field, FieldType, Indexing, Pattern, Schema, SchemaKind, is_valid_name};
use super::{Level, PreviewUrl, SchemaError};

const SCHEMA_KEYS: &[&str] = &[
    "type",
    "name",
    "title",
    "singleton",
    "access",
    "fields",
    "previewUrl",
];
const FIELD_KEYS: &[&str] = &[
    "name",
    "type",
    "title",
    "required",
    "indexed",
    "searchable",
    "localized",
    "access",
    "renamedFrom",
];
const MEMBER_KEYS: &[&str] = &["name", "type", "title"];

/// Parses one schema object or an array of them (the content of one schema file).
pub fn parse_schemas(value: &Value) -> Result<Vec<Schema>, SchemaError> {
    match value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| Schema::from_json(item).map_err(|e| locate(e, i)))
            .collect(),
        _ => Schema::from_json(value).map(|s| vec![s]),
    }
}

/// Parses a list of field definitions declared outside any schema (an event's payload),
/// exactly as a schema's `fields` are parsed; `owner` names them in errors. An empty list is
/// allowed here: a value with no fields is the empty object. Relations to schemas are checked
/// by `Schemas::check_fields`.
pub fn parse_fields(owner: &str, value: &Value) -> Result<Vec<Field>, SchemaError> {
    let ctx = Ctx {
        schema: owner,
        field: None,
    };
    match value {
        Value::Array(items) if items.is_empty() => Ok(Vec::new()),
        _ => field_list(Some(value), &ctx, ""),
    }
}

/// An error of a schema without a usable name says which element of the list it is.
fn locate(mut error: SchemaError, i: usize) -> SchemaError {
    if error.schema.is_none() {
        error.message = format!("schema {} of the list: {}", i + 1, error.message);
    }
    error
}

impl Schema {
    /// Parses one schema and checks its shape. Relations to other schemas (named types,
    /// reference targets, cycles) and per-level uniqueness are checked by `Schemas::new`.
    pub fn from_json(value: &Value) -> Result<Schema, SchemaError> {
        let obj = value
            .as_object()
            .ok_or_else(|| SchemaError::new(None, None, "a schema must be a JSON object"))?;
        let name = schema_name(obj)?;
        let ctx = Ctx {
            schema: &name,
            field: None,
        };
        reject_unknown(obj, SCHEMA_KEYS, &ctx, "a schema")?;
        let kind = schema_kind(obj, &ctx)?;
        Ok(Schema {
            kind,
            title: opt_string(obj, "title", &ctx)?,
            singleton: opt_bool(obj, "singleton", &ctx)?,
            access: schema_access(obj, kind, &ctx)?,
            fields: field_list(obj.get("fields"), &ctx, "")?,
            preview_url: preview_url(obj, kind, &ctx)?,
            name,
        })
    }
}

/// `previewUrl`: a checked template, on document schemas only.
fn preview_url(
    obj: &Map<String, Value>,
    kind: SchemaKind,
    ctx: &Ctx,
) -> Result<Option<PreviewUrl>, SchemaError> {
    let Some(template) = opt_string(obj, "previewUrl", ctx)? else {
        return Ok(None);
    };
    if kind != SchemaKind::Document {
        return Err(ctx.err("previewUrl is only allowed on document schemas"));
    }
    PreviewUrl::parse(&template)
        .map(Some)
        .map_err(|message| ctx.err(message))
}

/// Where the parser is, so errors can say it.
struct Ctx<'a> {
    schema: &'a str,
    field: Option<String>,
}

impl Ctx<'_> {
    fn err(&self, message: impl Into<String>) -> SchemaError {
        SchemaError::new(Some(self.schema), self.field.as_deref(), message)
    }
}

fn schema_name(obj: &Map<String, Value>) -> Result<String, SchemaError> {
    match obj.get("name") {
        Some(Value::String(name)) if is_valid_name(name) => Ok(name.clone()),
        Some(Value::String(name)) => Err(SchemaError::new(Some(name), None, bad_name_message())),
        Some(_) => Err(SchemaError::new(None, None, "name must be a string")),
        None => Err(SchemaError::new(None, None, "name is required")),
    }
}

fn bad_name_message() -> &'static str {
    "names must match ^[A-Za-z_][A-Za-z0-9_]*$ (letters, digits and _, not starting with a digit)"
}

fn schema_kind(obj: &Map<String, Value>, ctx: &Ctx) -> Result<SchemaKind, SchemaError> {
    match obj.get("type").and_then(Value::as_str) {
        Some("document") => Ok(SchemaKind::Document),
        Some("object") => Ok(SchemaKind::Object),
        _ => Err(ctx.err("type must be \"document\" or \"object\"")),
    }
}

fn reject_unknown(
    obj: &Map<String, Value>,
    allowed: &[&str],
    ctx: &Ctx,
    what: &str,
) -> Result<(), SchemaError> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(ctx.err(format!("unknown key \"{key}\" for {what}"))),
        None => Ok(()),
    }
}

/// The `fields` of a schema or of an `object` field: a non-empty list of named fields.
fn field_list(value: Option<&Value>, ctx: &Ctx, prefix: &str) -> Result<Vec<Field>, SchemaError> {
    let items = definitions(value, ctx, "fields")?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| field(item, ctx.schema, Level::Fields(prefix), i))
        .collect()
}

/// A list option holding field or member definitions: present, an array, not empty.
fn definitions<'v>(
    value: Option<&'v Value>,
    ctx: &Ctx,
    key: &str,
) -> Result<&'v [Value], SchemaError> {
    match value {
        Some(Value::Array(items)) if !items.is_empty() => Ok(items),
        Some(Value::Array(_)) => Err(ctx.err(format!("{key} must not be empty"))),
        Some(_) => Err(ctx.err(format!("{key} must be an array of field definitions"))),
        None => Err(ctx.err(format!("{key} is required"))),
    }
}

/// One field definition (or, at `Level::Members`, one array member definition).
fn field(item: &Value, schema: &str, level: Level, i: usize) -> Result<Field, SchemaError> {
    let at_container = Ctx {
        schema,
        field: level.container(),
    };
    let member = matches!(level, Level::Members(_));
    let what = if member { "member" } else { "field" };
    let obj = item
        .as_object()
        .ok_or_else(|| at_container.err(format!("{what} {} must be a JSON object", i + 1)))?;
    let declared = match obj.get("name") {
        None => None,
        Some(Value::String(name)) => Some(name.as_str()),
        Some(_) => return Err(at_container.err(format!("{what} {}: name must be a string", i + 1))),
    };
    if declared.is_none() && !member {
        return Err(at_container.err(format!("field {} has no name", i + 1)));
    }
    let ctx = Ctx {
        schema,
        field: Some(level.path_of(declared.unwrap_or_default())),
    };
    let type_name = match obj.get("type") {
        Some(Value::String(t)) => t.as_str(),
        _ => return Err(ctx.err("type is required and must be a string")),
    };
    let name = declared.unwrap_or(type_name).to_owned();
    if !is_valid_name(&name) {
        return Err(ctx.err(bad_name_message()));
    }
    check_keys(obj, type_name, member, &ctx)?;
    let path = ctx.field.clone().unwrap_or_default();
    Ok(Field {
        ty: field_type(obj, type_name, &ctx, &path)?,
        title: opt_string(obj, "title", &ctx)?,
        required: opt_bool(obj, "required", &ctx)?,
        indexed: Indexing::from_flag(opt_flag(obj, "indexed", &ctx)?),
        searchable: opt_bool(obj, "searchable", &ctx)?,
        localized: opt_bool(obj, "localized", &ctx)?,
        access: field_access(obj, &ctx)?,
        renamed_from: opt_string(obj, "renamedFrom", &ctx)?,
        name,
    })
}

/// Every key must be a common key or an option of this very type: `min` on a string is as
/// much a mistake as `maxLenght`.
fn check_keys(
    obj: &Map<String, Value>,
    type_name: &str,
    member: bool,
    ctx: &Ctx,
) -> Result<(), SchemaError> {
    let options = options_of(type_name);
    for key in obj.keys().map(String::as_str) {
        if MEMBER_KEYS.contains(&key) || options.contains(&key) {
            continue;
        }
        if FIELD_KEYS.contains(&key) {
            if member {
                return Err(ctx.err(format!("{key} has no meaning on an array member")));
            }
            continue;
        }
        return Err(ctx.err(format!("unknown option \"{key}\" for a {type_name} field")));
    }
    Ok(())
}

/// The options each built-in type accepts (CONTRACT.md section 2).
fn options_of(type_name: &str) -> &'static [&'static str] {
    match type_name {
        "string" => &["minLength", "maxLength", "pattern", "options"],
        "text" => &["minLength", "maxLength"],
        "number" => &["min", "max", "integer"],
        "slug" => &["source"],
        "reference" => &["to"],
        "image" | "file" => &["accept"],
        "array" => &["of", "minItems", "maxItems"],
        "object" => &["fields"],
        _ => &[],
    }
}

fn field_type(
    obj: &Map<String, Value>,
    type_name: &str,
    ctx: &Ctx,
    path: &str,
) -> Result<FieldType, SchemaError> {
    Ok(match type_name {
        "string" => string_type(obj, ctx)?,
        "text" => {
            let (min_length, max_length) = lengths(obj, ctx)?;
            FieldType::Text {
                min_length,
                max_length,
            }
        }
        "number" => number_type(obj, ctx)?,
        "boolean" => FieldType::Boolean,
        "date" => FieldType::Date,
        "datetime" => FieldType::Datetime,
        "url" => FieldType::Url,
        "email" => FieldType::Email,
        "slug" => FieldType::Slug {
            source: opt_name(obj, "source", ctx)?,
        },
        "reference" => FieldType::Reference {
            to: names(obj, "to", ctx)?,
        },
        "image" => FieldType::Image {
            accept: accept(obj, ctx)?,
        },
        "file" => FieldType::File {
            accept: accept(obj, ctx)?,
        },
        "array" => array_type(obj, ctx, path)?,
        "object" => FieldType::Object {
            fields: field_list(obj.get("fields"), ctx, path)?,
        },
        "block" => FieldType::Block,
        "json" => FieldType::Json,
        named if is_valid_name(named) => FieldType::Named(named.to_owned()),
        other => return Err(ctx.err(format!("\"{other}\" is not a type name"))),
    })
}

fn string_type(obj: &Map<String, Value>, ctx: &Ctx) -> Result<FieldType, SchemaError> {
    let (min_length, max_length) = lengths(obj, ctx)?;
    let pattern = match opt_string(obj, "pattern", ctx)? {
        Some(source) => Some(
            Pattern::new(&source)
                .map_err(|e| ctx.err(format!("pattern is not a valid regular expression: {e}")))?,
        ),
        None => None,
    };
    let options = match obj.get("options") {
        None | Some(Value::Null) => None,
        Some(_) => {
            let expected = "a non-empty array of strings";
            let list = strings(obj, "options", ctx, expected)?;
            if list.is_empty() {
                return Err(ctx.err(format!("options must be {expected}")));
            }
            Some(list)
        }
    };
    Ok(FieldType::String {
        min_length,
        max_length,
        pattern,
        options,
    })
}

fn lengths(obj: &Map<String, Value>, ctx: &Ctx) -> Result<(Option<u64>, Option<u64>), SchemaError> {
    let min = opt_count(obj, "minLength", ctx)?;
    let max = opt_count(obj, "maxLength", ctx)?;
    ordered(min, max, "minLength", "maxLength", ctx)
}

fn number_type(obj: &Map<String, Value>, ctx: &Ctx) -> Result<FieldType, SchemaError> {
    let min = opt_number(obj, "min", ctx)?;
    let max = opt_number(obj, "max", ctx)?;
    let (min, max) = ordered(min, max, "min", "max", ctx)?;
    Ok(FieldType::Number {
        min,
        max,
        integer: opt_bool(obj, "integer", ctx)?,
    })
}

fn array_type(obj: &Map<String, Value>, ctx: &Ctx, path: &str) -> Result<FieldType, SchemaError> {
    let of = definitions(obj.get("of"), ctx, "of")?
        .iter()
        .enumerate()
        .map(|(i, item)| field(item, ctx.schema, Level::Members(path), i))
        .collect::<Result<Vec<_>, _>>()?;
    let min = opt_count(obj, "minItems", ctx)?;
    let max = opt_count(obj, "maxItems", ctx)?;
    let (min_items, max_items) = ordered(min, max, "minItems", "maxItems", ctx)?;
    Ok(FieldType::Array {
        of,
        min_items,
        max_items,
    })
}

/// Refuses a lower bound above the upper bound: no value could ever satisfy both.
fn ordered<T: PartialOrd + Copy>(
    min: Option<T>,
    max: Option<T>,
    min_key: &str,
    max_key: &str,
    ctx: &Ctx,
) -> Result<(Option<T>, Option<T>), SchemaError> {
    match (min, max) {
        (Some(lo), Some(hi)) if lo > hi => {
            Err(ctx.err(format!("{min_key} is greater than {max_key}")))
        }
        _ => Ok((min, max)),
    }
}

/// `accept`: MIME patterns such as `image/png` or `image/*`.
fn accept(obj: &Map<String, Value>, ctx: &Ctx) -> Result<Vec<String>, SchemaError> {
    if obj.get("accept").is_none_or(Value::is_null) {
        return Ok(Vec::new());
    }
    let patterns = strings(obj, "accept", ctx, "an array of MIME patterns")?;
    match patterns.iter().find(|p| !is_mime_pattern(p)) {
        Some(bad) => Err(ctx.err(format!(
            "accept: \"{bad}\" is not a MIME pattern (type/subtype, * allowed)"
        ))),
        None => Ok(patterns),
    }
}

fn is_mime_pattern(p: &str) -> bool {
    let token = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&^_.+-*".contains(c))
    };
    matches!(p.split_once('/'), Some((t, s)) if token(t) && token(s))
}

/// A required non-empty-or-not list of valid names (`to`).
fn names(obj: &Map<String, Value>, key: &str, ctx: &Ctx) -> Result<Vec<String>, SchemaError> {
    if obj.get(key).is_none() {
        return Err(ctx.err(format!("{key} is required (an array of type names)")));
    }
    let list = strings(obj, key, ctx, "an array of type names")?;
    match list.iter().find(|n| !is_valid_name(n)) {
        Some(bad) => Err(ctx.err(format!("{key}: \"{bad}\" is not a type name"))),
        None => Ok(list),
    }
}

fn strings(
    obj: &Map<String, Value>,
    key: &str,
    ctx: &Ctx,
    expected: &str,
) -> Result<Vec<String>, SchemaError> {
    let bad = || ctx.err(format!("{key} must be {expected}"));
    obj.get(key)
        .and_then(Value::as_array)
        .ok_or_else(bad)?
        .iter()
        .map(|v| v.as_str().map(str::to_owned).ok_or_else(bad))
        .collect()
}

fn opt_string(
    obj: &Map<String, Value>,
    key: &str,
    ctx: &Ctx,
) -> Result<Option<String>, SchemaError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ctx.err(format!("{key} must be a string"))),
    }
}

fn opt_name(obj: &Map<String, Value>, key: &str, ctx: &Ctx) -> Result<Option<String>, SchemaError> {
    let name = opt_string(obj, key, ctx)?;
    match name {
        Some(n) if !is_valid_name(&n) => Err(ctx.err(format!("{key} must be a field name"))),
        _ => Ok(name),
    }
}

fn opt_bool(obj: &Map<String, Value>, key: &str, ctx: &Ctx) -> Result<bool, SchemaError> {
    Ok(opt_flag(obj, key, ctx)?.unwrap_or(false))
}

/// A boolean option whose absence means something of its own.
fn opt_flag(obj: &Map<String, Value>, key: &str, ctx: &Ctx) -> Result<Option<bool>, SchemaError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(ctx.err(format!("{key} must be true or false"))),
    }
}

fn opt_count(obj: &Map<String, Value>, key: &str, ctx: &Ctx) -> Result<Option<u64>, SchemaError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| ctx.err(format!("{key} must be a non-negative integer"))),
    }
}

fn opt_number(obj: &Map<String, Value>, key: &str, ctx: &Ctx) -> Result<Option<f64>, SchemaError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|n| n.is_finite())
            .map(Some)
            .ok_or_else(|| ctx.err(format!("{key} must be a number"))),
    }
}

/// A document schema's `access`: operation -> role list. An object type is only ever a part of
/// a document, so its rules go on its fields, which apply wherever the type is used.
fn schema_access(
    obj: &Map<String, Value>,
    kind: SchemaKind,
    ctx: &Ctx,
) -> Result<SchemaAccess, SchemaError> {
    match obj.get("access") {
        None | Some(Value::Null) => Ok(SchemaAccess::default()),
        Some(_) if kind == SchemaKind::Object => Err(ctx.err(
            "access applies to document schemas; put the rules of an object type on its fields",
        )),
        Some(v) => SchemaAccess::from_json(v).map_err(|m| ctx.err(m)),
    }
}

/// A field's `access`: `read` and/or `update` role lists.
fn field_access(obj: &Map<String, Value>, ctx: &Ctx) -> Result<FieldAccess, SchemaError> {
    match obj.get("access") {
        None | Some(Value::Null) => Ok(FieldAccess::default()),
        Some(v) => FieldAccess::from_json(v).map_err(|m| ctx.err(m)),
    }
}

#[cfg(test)]
mod tests;
