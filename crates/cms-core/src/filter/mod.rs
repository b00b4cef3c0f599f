//! The `where` language and sorting of document lists (SPEC.md "`where` rules", CONTRACT.md
//! sections 5 and 12), as a typed tree the store compiles to SQL.
//!
//! Parsing never fails: the language is deliberately not validated. An unknown operator drops
//! its clause ([`Filter::All`], more results); a malformed clause or an undeclared field becomes
//! [`Filter::Nothing`] (`total` 0), never dropped, because dropping a filter would widen the
//! results and tell a caller which fields it may not read.
//!
//! The only text of a clause that can ever reach SQL is a [`FieldPath`], and one exists only
//! after every segment passed the identifier rule and the document type declared the path:
//! "only declared identifiers reach SQL" holds by construction, not by the store's care.
//!
//! Null and missing are one value here: `equals: null` and `exists: false` both match a field
//! that is absent or JSON `null`, and `not_equals`/`not_in` of a non-null value match it too.

mod parse;
mod sort;

#[cfg(test)]
mod tests;

use serde_json::Number;

use crate::field_kind::FieldKind;

pub use parse::{MAX_CONDITIONS, MAX_DEPTH, MAX_TEXT_CHARS, MAX_VALUES, parse};
pub use sort::{MAX_SORT_KEYS, parse_sort};

/// A parsed `where` clause, already simplified: [`Filter::All`] and [`Filter::Nothing`] only
/// appear at the top, and every `And`/`Or` holds at least two members.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// Matches every document: no `where`, `{}`, or only dropped clauses.
    All,
    /// Matches no document: a malformed clause or an undeclared field.
    Nothing,
    And(Vec<Filter>),
    Or(Vec<Filter>),
    Cond(Condition),
}

impl Filter {
    /// The conjunction of `members`, simplified so the store never emits dead SQL: `Nothing`
    /// absorbs, `All` vanishes, nested `And`s are flattened, one member stands alone.
    pub fn and(members: impl IntoIterator<Item = Filter>) -> Filter {
        let mut flat = Vec::new();
        for member in members {
            match member {
                Filter::Nothing => return Filter::Nothing,
                Filter::All => {}
                Filter::And(inner) => flat.extend(inner),
                other => flat.push(other),
            }
        }
        Self::collapse(flat, Filter::All, Filter::And)
    }

    /// The disjunction of `members`, simplified as [`Filter::and`] with the roles swapped:
    /// `All` absorbs, `Nothing` vanishes, and an empty `or` matches nothing.
    pub fn or(members: impl IntoIterator<Item = Filter>) -> Filter {
        let mut flat = Vec::new();
        for member in members {
            match member {
                Filter::All => return Filter::All,
                Filter::Nothing => {}
                Filter::Or(inner) => flat.extend(inner),
                other => flat.push(other),
            }
        }
        Self::collapse(flat, Filter::Nothing, Filter::Or)
    }

    fn collapse(mut flat: Vec<Filter>, empty: Filter, many: fn(Vec<Filter>) -> Filter) -> Filter {
        match flat.len() {
            0 => empty,
            1 => flat.pop().unwrap_or(empty),
            _ => many(flat),
        }
    }
}

/// One field compared by one operator.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub path: FieldPath,
    /// How the stored value compares; decides which SQL the store writes for `op`.
    pub kind: FieldKind,
    pub op: Op,
}

/// A dotted path the document type declares, split into the segments of where its value is
/// stored. Built only by this module (private field, no `Deserialize`, no `From`), after each
/// segment the client wrote matched `^[A-Za-z_][A-Za-z0-9_]*$` and the [`crate::FieldLookup`]
/// knew the path; the one segment it may add is a [`crate::LocaleTag`] (letters, digits and
/// `-`) after a localized field. So the store may write its segments into SQL text (which lets
/// expression indexes match).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldPath(Vec<String>);

impl FieldPath {
    pub fn segments(&self) -> &[String] {
        &self.0
    }

    /// The stored path, dotted: `seo.description`, `title.de` for a localized `title`.
    pub fn dotted(&self) -> String {
        self.0.join(".")
    }

    /// The declared path named by `dotted`, with its kind; `None` for anything else.
    fn declared(dotted: &str, lookup: &dyn crate::FieldLookup) -> Option<(FieldPath, FieldKind)> {
        let segments: Vec<&str> = dotted.split('.').collect();
        if !segments.iter().all(|s| is_identifier(s)) {
            return None;
        }
        let kind = lookup.field_kind(&segments)?;
        let mut stored: Vec<String> = segments.iter().map(|s| String::from(*s)).collect();
        if let Some((at, tag)) = lookup.localized_at(&segments) {
            stored.insert(at + 1, tag.as_str().to_owned());
        }
        Some((FieldPath(stored), kind))
    }
}

/// The identifier rule of declared field names, checked by hand because it runs on every
/// clause of every query.
fn is_identifier(segment: &str) -> bool {
    let mut bytes = segment.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// An operator with its value, already checked for shape and for the field's kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Equals(Scalar),
    NotEquals(Scalar),
    /// Never empty: `in: []` parses to [`Filter::Nothing`].
    In(Vec<Scalar>),
    /// Never empty: `not_in: []` parses to [`Filter::All`].
    NotIn(Vec<Scalar>),
    /// `true`: present and not null.
    Exists(bool),
    GreaterThan(Comparand),
    GreaterThanEqual(Comparand),
    LessThan(Comparand),
    LessThanEqual(Comparand),
    /// The whitespace-separated words of the value, at least one; each must occur.
    Like(Vec<String>),
    Contains(String),
    StartsWith(String),
    EndsWith(String),
}

/// A JSON value `equals` and `in` can compare with: anything but arrays and objects.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
}

/// The value of an ordering operator. Its type decides the comparison: a number compares
/// numerically with stored numbers only, a string as text with stored strings only.
#[derive(Debug, Clone, PartialEq)]
pub enum Comparand {
    Number(Number),
    String(String),
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Asc,
    Desc,
}

/// The document columns a list can sort by without a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinColumn {
    PublishedAt,
    CreatedAt,
    UpdatedAt,
}

/// One key of a list's order. Ties after the last key break by id (the store adds it).
#[derive(Debug, Clone, PartialEq)]
pub enum SortKey {
    Column(BuiltinColumn, Direction),
    /// A declared scalar field; the kind says how its values order.
    Field(FieldPath, FieldKind, Direction),
}
