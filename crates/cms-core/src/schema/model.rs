//! The schema model: what a parsed, shape-checked schema holds.

use regex::Regex;

use super::access::{FieldAccess, SchemaAccess};
use crate::field_kind::FieldKind;

/// Whether `name` may name a schema or a field: `^[A-Za-z_][A-Za-z0-9_]*$`.
///
/// **Security property.** Schema and field names are embedded in SQL JSON paths by the store
/// (`$.seo.title`), so this rule is what keeps quotes, dots, brackets and every other character
/// with a meaning in SQL or in a JSON path out of them. It is checked when a schema is parsed
/// and again by `Schemas::new`, so a hand-built `Schema` cannot bypass it.
pub fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The built-in field type names; any other type name refers to a `type: "object"` schema.
const BUILTIN_TYPES: [&str; 16] = [
    "string",
    "text",
    "number",
    "boolean",
    "date",
    "datetime",
    "url",
    "email",
    "slug",
    "reference",
    "image",
    "file",
    "array",
    "object",
    "block",
    "json",
];

/// Whether `name` is a built-in field type: an object schema may not take such a name, since
/// a field naming it would mean the built-in.
pub(crate) fn is_builtin_type(name: &str) -> bool {
    BUILTIN_TYPES.contains(&name)
}

/// `document`: stored as documents with drafts and published copies. `object`: a reusable
/// object type that fields name as their type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaKind {
    Document,
    Object,
}

impl SchemaKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SchemaKind::Document => "document",
            SchemaKind::Object => "object",
        }
    }
}

/// One declared document or object type.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    pub kind: SchemaKind,
    /// See [`is_valid_name`]: a security property, not only a style rule.
    pub name: String,
    pub title: Option<String>,
    /// At most one document of this type per organization. Only on document schemas.
    pub singleton: bool,
    /// Role lists per operation (SPEC.md "Schema access rules"); only on document schemas.
    pub access: SchemaAccess,
    pub fields: Vec<Field>,
    /// The frontend address that shows a draft (CONTRACT.md section 15); only on document
    /// schemas.
    pub preview_url: Option<super::PreviewUrl>,
}

impl Schema {
    /// Whether documents of this type can be stored (object types are only field types).
    pub fn is_document(&self) -> bool {
        self.kind == SchemaKind::Document
    }

    /// The first top-level slug field: the one `{slug}` of `previewUrl` reads.
    pub fn first_slug_field(&self) -> Option<&Field> {
        self.fields
            .iter()
            .find(|f| matches!(f.ty, FieldType::Slug { .. }))
    }
}

/// One declared field (or one member definition of an array).
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// See [`is_valid_name`]: a security property, not only a style rule. For an array member
    /// declared without a name, the member's type name.
    pub name: String,
    pub title: Option<String>,
    /// Publishing needs a value (not missing, not null, not an empty string).
    pub required: bool,
    /// Whether the store indexes this field for `where` and `sort` (CONTRACT.md section 14).
    pub indexed: Indexing,
    /// Joins the type's full-text search index (`string`, `text`, `block`; not inside an
    /// array). CONTRACT.md section 14.
    pub searchable: bool,
    /// One value per locale (CONTRACT.md section 17): stored as an object keyed by locale tag.
    /// Never inside another localized field, never on an array member.
    pub localized: bool,
    /// Who may read and update this field; never on an array member (a member is not a key
    /// of the data), but on the fields of objects inside arrays.
    pub access: FieldAccess,
    /// The name this field had before (`renamedFrom`, CONTRACT.md section 19): stored data
    /// under that key reads as this field until `cms migrate-content` rewrites it.
    pub renamed_from: Option<String>,
    pub ty: FieldType,
}

/// Whether the store indexes a field for `where` and `sort` (CONTRACT.md section 14): users
/// never have to ask, so the default indexes every field a query can compare at indexed speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Indexing {
    /// No `indexed` key: indexed when the type is one the store indexes by itself
    /// ([`FieldType::is_indexed_automatically`]) and the field is not inside an array.
    #[default]
    Automatic,
    /// `indexed: true`: indexed; refused where no index can serve it (arrays, composites).
    Declared,
    /// `indexed: false`: never indexed (writes pay nothing for a field nobody filters on).
    OptedOut,
}

impl Indexing {
    /// The schema JSON's `indexed`: absent, `true` or `false`.
    pub fn from_flag(flag: Option<bool>) -> Indexing {
        match flag {
            None => Indexing::Automatic,
            Some(true) => Indexing::Declared,
            Some(false) => Indexing::OptedOut,
        }
    }

    /// The flag to write back, `None` for the default.
    pub fn flag(self) -> Option<bool> {
        match self {
            Indexing::Automatic => None,
            Indexing::Declared => Some(true),
            Indexing::OptedOut => Some(false),
        }
    }
}

/// A field's type with the options that belong to it (CONTRACT.md section 2), so an option
/// cannot exist on a type it does not apply to.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldType {
    String {
        min_length: Option<u64>,
        max_length: Option<u64>,
        pattern: Option<Pattern>,
        /// The allowed values, when restricted.
        options: Option<Vec<String>>,
    },
    Text {
        min_length: Option<u64>,
        max_length: Option<u64>,
    },
    Number {
        min: Option<f64>,
        max: Option<f64>,
        integer: bool,
    },
    Boolean,
    Date,
    Datetime,
    Url,
    Email,
    Slug {
        /// A sibling string or text field the slug is derived from.
        source: Option<String>,
    },
    Reference {
        /// The document types a reference may point to.
        to: Vec<String>,
    },
    Image {
        /// MIME patterns (`image/*`); empty means any.
        accept: Vec<String>,
    },
    File {
        accept: Vec<String>,
    },
    Array {
        /// The member definitions; a value matches one of them.
        of: Vec<Field>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
    Object {
        fields: Vec<Field>,
    },
    Block,
    Json,
    /// A declared `type: "object"` schema used as a field type.
    Named(String),
}

impl FieldType {
    /// The name this type has in schema JSON.
    pub fn type_name(&self) -> &str {
        match self {
            FieldType::String { .. } => "string",
            FieldType::Text { .. } => "text",
            FieldType::Number { .. } => "number",
            FieldType::Boolean => "boolean",
            FieldType::Date => "date",
            FieldType::Datetime => "datetime",
            FieldType::Url => "url",
            FieldType::Email => "email",
            FieldType::Slug { .. } => "slug",
            FieldType::Reference { .. } => "reference",
            FieldType::Image { .. } => "image",
            FieldType::File { .. } => "file",
            FieldType::Array { .. } => "array",
            FieldType::Object { .. } => "object",
            FieldType::Block => "block",
            FieldType::Json => "json",
            FieldType::Named(name) => name,
        }
    }

    /// Whether `indexed: true` is allowed: one comparable value per document, stored as a
    /// JSON scalar (a slug's `current` counts).
    pub fn is_scalar(&self) -> bool {
        self.is_json_string()
            || matches!(
                self,
                FieldType::Number { .. } | FieldType::Boolean | FieldType::Slug { .. }
            )
    }

    /// Whether `indexed: true` is allowed: a scalar, or a reference (its `_ref`).
    pub fn is_indexable(&self) -> bool {
        self.is_scalar() || matches!(self, FieldType::Reference { .. })
    }

    /// The types CONTRACT.md section 14 indexes without being asked: the short scalars a
    /// query compares and sorts by. Long text, URLs and e-mail addresses are indexed only when
    /// declared (`indexed: true`): their values rarely filter a list and would cost every write.
    pub fn is_indexed_automatically(&self) -> bool {
        matches!(
            self,
            FieldType::String { .. }
                | FieldType::Slug { .. }
                | FieldType::Number { .. }
                | FieldType::Boolean
                | FieldType::Datetime
                | FieldType::Date
                | FieldType::Reference { .. }
        )
    }

    /// Whether `searchable: true` is allowed: the value holds text (a block field: the text
    /// of its spans).
    pub fn is_text(&self) -> bool {
        matches!(
            self,
            FieldType::String { .. } | FieldType::Text { .. } | FieldType::Block
        )
    }

    /// Whether the stored value is a plain JSON string.
    pub(crate) fn is_json_string(&self) -> bool {
        matches!(
            self,
            FieldType::String { .. }
                | FieldType::Text { .. }
                | FieldType::Url
                | FieldType::Email
                | FieldType::Date
                | FieldType::Datetime
        )
    }

    /// How the query language compares this field's stored value.
    pub fn kind(&self) -> FieldKind {
        match self {
            FieldType::String { .. }
            | FieldType::Text { .. }
            | FieldType::Url
            | FieldType::Email => FieldKind::String,
            FieldType::Number { .. } => FieldKind::Number,
            FieldType::Boolean => FieldKind::Boolean,
            FieldType::Date | FieldType::Datetime => FieldKind::Date,
            FieldType::Slug { .. } => FieldKind::Slug,
            FieldType::Reference { .. } => FieldKind::Reference,
            FieldType::Array { of, .. } if of.len() == 1 && of[0].ty.is_json_string() => {
                FieldKind::StringArray
            }
            _ => FieldKind::Other,
        }
    }
}

/// A compiled `pattern` option that remembers its source, so a schema serialises back to what
/// was declared and two schemas compare equal when their patterns are the same text.
#[derive(Debug, Clone)]
pub struct Pattern {
    source: String,
    regex: Regex,
}

impl Pattern {
    pub fn new(source: &str) -> Result<Pattern, regex::Error> {
        Ok(Pattern {
            source: source.to_owned(),
            regex: Regex::new(source)?,
        })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Unanchored, like JSON Schema's `pattern`: write `^...$` to match the whole value.
    pub fn is_match(&self, value: &str) -> bool {
        self.regex.is_match(value)
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.source == other.source
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_identifier_rule() {
        for ok in ["title", "_key", "seo2", "A_b"] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in [
            "", "2x", "a-b", "a.b", "a b", "a'b", "tags[]", "é", "a\"", "a;--",
        ] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn kinds_map_types_for_the_query_language() {
        let member = |ty| Field {
            name: "m".into(),
            title: None,
            required: false,
            indexed: Indexing::Automatic,
            searchable: false,
            localized: false,
            access: FieldAccess::default(),
            renamed_from: None,
            ty,
        };
        let array = |of| FieldType::Array {
            of,
            min_items: None,
            max_items: None,
        };
        assert_eq!(FieldType::Url.kind(), FieldKind::String);
        assert_eq!(FieldType::Datetime.kind(), FieldKind::Date);
        assert_eq!(
            array(vec![member(FieldType::Email)]).kind(),
            FieldKind::StringArray
        );
        assert_eq!(
            array(vec![member(FieldType::Json)]).kind(),
            FieldKind::Other
        );
        let two = vec![member(FieldType::Url), member(FieldType::Email)];
        assert_eq!(array(two).kind(), FieldKind::Other);
        assert!(!FieldType::Block.is_scalar());
        assert!(FieldType::Slug { source: None }.is_scalar());
        assert!(!FieldType::Reference { to: vec![] }.is_scalar());
    }

    #[test]
    fn patterns_compare_by_source() {
        assert_eq!(Pattern::new("^a$").unwrap(), Pattern::new("^a$").unwrap());
        assert_ne!(Pattern::new("^a$").unwrap(), Pattern::new("a").unwrap());
        assert!(Pattern::new("(").is_err());
    }
}
