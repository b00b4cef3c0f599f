//! Document and object schemas (CONTRACT.md section 2): the model, its parser from JSON, the
//! registry that checks schemas against each other, and the two levels of data validation.
//!
//! The layering, and why:
//! - [`Schema::from_json`] / [`parse_schemas`] check the shape of one schema by hand (not with
//!   serde derive), so every error names the schema and the field path, and an unknown key is
//!   an error: a typo in an option must not silently drop a constraint.
//! - [`Schemas::new`] checks what relates schemas and fields to each other (names unique,
//!   named types and reference targets exist, no object-type cycles, ...). A [`Schemas`] value
//!   is therefore always coherent, which lets validation and lookups trust it.
//! - [`Schemas::check_structure`] is what refuses a draft save; [`Schemas::validate_for_publish`]
//!   adds what blocks publishing. Reference targets are not checked here (that needs the
//!   database): [`Schemas::references`] lists them for the service layer to check.
//! - [`Schemas::normalize`] gives data its stored form before a write (datetimes in UTC).
//!
//! Decisions CONTRACT.md leaves open:
//! - An array member without a `name` is named after its type; member names are unique within
//!   `of`, and an object item picks its member by `_type` (member name first, then type name).
//! - Nested objects (never the document root) may carry `_type` and `_key` strings.
//! - An empty string is "no value": `required` reports it, other string constraints skip it.
//!   A slug without `current` and an image or file without `asset` also count as missing.
//! - Object-type cycles are refused even through arrays; `indexed` is refused inside arrays.
//! - `accept` is checked for shape only: the asset's MIME type is known to the service layer.
//!
//! No I/O: the caller reads schema files and passes JSON values.

mod access;
mod conform;
mod demo;
mod emit;
mod localize;
mod model;
mod normalize;
mod parse;
mod place;
mod preview_url;
mod references;
mod registry;
mod validate;

pub use access::{
    FieldAccess, FieldOperation, FieldRules, Operation, RoleList, RoleMatch, SchemaAccess,
};
pub use conform::{Conformed, Undeclared};
pub use demo::demo_schemas;
pub use localize::FallbackLocales;
pub use model::{Field, FieldType, Indexing, Pattern, Schema, SchemaKind, is_valid_name};
pub use parse::{parse_fields, parse_schemas};
pub use preview_url::{Placeholder, PreviewUrl, PreviewValues};
pub use references::{FoundReference, RefTarget};
pub use registry::{Schemas, TypeFields};
pub use validate::is_http_url;

use std::fmt;

/// A schema definition that cannot be accepted. `schema` and `field` say where, so a host
/// application with dozens of schema files can find the mistake without guessing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// The schema's name, when it is known.
    pub schema: Option<String>,
    /// The dotted field path inside the schema: `seo.description`, `tags[]` (an array member).
    pub field: Option<String>,
    pub message: String,
}

impl SchemaError {
    pub(crate) fn new(
        schema: Option<&str>,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        SchemaError {
            schema: schema.map(str::to_owned),
            field: field.map(str::to_owned),
            message: message.into(),
        }
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.schema, &self.field) {
            (Some(s), Some(p)) => write!(f, "schema \"{s}\", field \"{p}\": {}", self.message),
            (Some(s), None) => write!(f, "schema \"{s}\": {}", self.message),
            (None, Some(p)) => write!(f, "field \"{p}\": {}", self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for SchemaError {}

/// How the fields of one object level are addressed in paths: by name under a dotted prefix,
/// or, for the member definitions of an array, all as `array[]` (a member is not a key).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Level<'p> {
    Fields(&'p str),
    Members(&'p str),
}

impl Level<'_> {
    /// The path of the field or member `name` at this level.
    pub(crate) fn path_of(self, name: &str) -> String {
        match self {
            Level::Fields(prefix) => join(prefix, name),
            Level::Members(array) => format!("{array}[]"),
        }
    }

    /// The path of the level's container (`None` at the top of a schema).
    pub(crate) fn container(self) -> Option<String> {
        match self {
            Level::Fields("") => None,
            Level::Fields(prefix) => Some(prefix.to_owned()),
            Level::Members(array) => Some(array.to_owned()),
        }
    }
}

/// `prefix.key`, or `key` at the top.
pub(crate) fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

/// `prefix[index]`.
pub(crate) fn index(prefix: &str, i: usize) -> String {
    format!("{prefix}[{i}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_display_names_schema_and_field() {
        let e = SchemaError::new(
            Some("post"),
            Some("seo.title"),
            "maxLength must be a non-negative integer",
        );
        assert_eq!(
            e.to_string(),
            "schema \"post\", field \"seo.title\": maxLength must be a non-negative integer"
        );
        let e = SchemaError::new(Some("post"), None, "fields must not be empty");
        assert_eq!(e.to_string(), "schema \"post\": fields must not be empty");
        assert_eq!(SchemaError::new(None, None, "x").to_string(), "x");
    }

    #[test]
    fn paths_join_and_index() {
        assert_eq!(join("", "title"), "title");
        assert_eq!(join("seo", "title"), "seo.title");
        assert_eq!(index("tags", 2), "tags[2]");
        assert_eq!(Level::Members("tags").path_of("string"), "tags[]");
        assert_eq!(Level::Fields("").container(), None);
    }
}
