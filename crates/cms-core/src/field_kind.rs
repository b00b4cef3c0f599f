//! What the query language needs to know about a declared field: how its stored JSON value
//! compares. The schema module answers it; the `where` language and sorting ask it.

/// The comparable kind of a field, as stored in document JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldKind {
    /// `string`, `text`, `url`, `email`: a JSON string.
    String,
    /// `number`: a JSON number.
    Number,
    /// `boolean`.
    Boolean,
    /// `date` (`YYYY-MM-DD`) and `datetime` (stored in UTC with milliseconds, see
    /// [`crate::time::normalize_datetime`]): JSON strings that order as text.
    Date,
    /// `slug`: `{ "current": string }`; comparisons apply to `current`.
    Slug,
    /// `reference`: `{ "_ref": id }`; comparisons apply to `_ref`.
    Reference,
    /// `array` whose members are strings: `contains` matches any element.
    StringArray,
    /// Anything else (objects, blocks, json, images, files, arrays of objects): only `exists`
    /// applies.
    Other,
}

/// Answers "what kind of field is at this dotted path of this document type?". `None` for a
/// path the type does not declare (or, later, one the caller may not read: CONTRACT.md
/// section 5 treats both alike).
pub trait FieldLookup {
    fn field_kind(&self, path: &[&str]) -> Option<FieldKind>;

    /// When the declared `path` passes a localized field: that field's position in `path`
    /// and the locale a query reads there, which the stored path holds right after it
    /// (`title` is stored at `title.de`). CONTRACT.md section 17: `where` and `sort` read the
    /// requested locale's value, without fallback.
    fn localized_at(&self, _path: &[&str]) -> Option<(usize, crate::LocaleTag)> {
        None
    }

    /// Whether the declared `path` is a `datetime` field: the values `equals`, `in` and the
    /// ordering operators compare it with are normalized as stored values are, so they
    /// compare instants (CONTRACT.md section 14). Its [`FieldKind`] is [`FieldKind::Date`].
    fn is_datetime(&self, _path: &[&str]) -> bool {
        false
    }
}
