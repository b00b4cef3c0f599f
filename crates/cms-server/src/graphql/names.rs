//! How the dynamic schema names things.
//!
//! A document or object type `siteSettings` is the GraphQL type `SiteSettings`; an
//! inline object (or the object member of an array) is named after its owner and field
//! (`Post` + `seo` = `PostSeo`); a reference to several document types is a union named the
//! same way. A name already taken (by another type or one of ours: `Query`, `Mutation`,
//! `JSON`, `Perspective`, `Asset`, `ImageValue`, `FileValue`, `Validation`, `ValidationIssue`,
//! `DocumentMeta`, the built-in scalars) gets `_2`, `_3`, ...
//! Schema names are already GraphQL names (`[A-Za-z_][A-Za-z0-9_]*`) except those starting
//! with `__`, reserved by GraphQL: those get a `X` in front. A data field whose name is one of
//! the document fields (`id`, `type`, `status`, `_meta`, ...) or starts with `__` is exposed as
//! `field_<name>`.

use std::collections::HashSet;

/// The fields every document type has, before its data fields.
pub(super) const DOCUMENT_FIELDS: [&str; 12] = [
    "id",
    "type",
    "organizationId",
    "revision",
    "createdAt",
    "updatedAt",
    "publishedAt",
    "createdBy",
    "publishedHash",
    "status",
    "validation",
    "_meta",
];

/// The GraphQL type of a save's validation, and of one of its errors.
pub const VALIDATION: &str = "Validation";
pub const VALIDATION_ISSUE: &str = "ValidationIssue";
/// The GraphQL type of a document's `_meta`.
pub const DOCUMENT_META: &str = "DocumentMeta";

pub(super) const RESERVED: [&str; 15] = [
    VALIDATION,
    VALIDATION_ISSUE,
    DOCUMENT_META,
    "Asset",
    "Query",
    "Mutation",
    "JSON",
    "Perspective",
    "ImageValue",
    "FileValue",
    "String",
    "Int",
    "Float",
    "Boolean",
    "ID",
];

/// `post` -> `Post`, `siteSettings` -> `SiteSettings`.
pub fn pascal(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// Type names handed out once each.
pub(super) struct Names(pub(super) HashSet<String>);

impl Names {
    pub(super) fn claim(&mut self, wanted: &str) -> String {
        let base = if wanted.starts_with("__") {
            format!("X{wanted}")
        } else {
            wanted.to_string()
        };
        let mut name = base.clone();
        let mut n = 2;
        while !self.0.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        name
    }
}

/// The name of the data field `wanted` among the field names already `taken` on its type,
/// which it joins.
pub(super) fn field_name(wanted: &str, taken: &mut HashSet<String>) -> String {
    let mut name = if wanted.starts_with("__") || taken.contains(wanted) {
        format!("field_{wanted}")
    } else {
        wanted.to_string()
    };
    while taken.contains(&name) {
        name.push('_');
    }
    taken.insert(name.clone());
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pascal_case() {
        assert_eq!(pascal("post"), "Post");
        assert_eq!(pascal("siteSettings"), "SiteSettings");
        assert_eq!(pascal("_x"), "_x");
    }
}
