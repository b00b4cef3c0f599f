//! The demo schemas registered when no schema is configured (CONTRACT.md section 1).

use serde_json::json;

use super::model::Schema;
use super::parse::parse_schemas;

/// `post`, `author`, `page` (whose `title` and `body` are localized) and the singleton
/// `siteSettings`. Declared as JSON and parsed by
/// our own parser, so they are exactly what a schema file with this content would give.
pub fn demo_schemas() -> Vec<Schema> {
    let declared = json!([
        {
            "type": "document", "name": "post", "title": "Post",
            "fields": [
                { "name": "title", "type": "string", "title": "Title", "required": true, "indexed": true, "searchable": true },
                { "name": "slug", "type": "slug", "title": "Slug", "source": "title" },
                { "name": "body", "type": "block", "title": "Body", "searchable": true },
                { "name": "excerpt", "type": "text", "title": "Excerpt", "searchable": true },
                { "name": "author", "type": "reference", "title": "Author", "to": ["author"] },
                { "name": "cover", "type": "image", "title": "Cover image" },
                { "name": "tags", "type": "array", "title": "Tags", "of": [{ "type": "string" }] },
                { "name": "publishedOn", "type": "date", "title": "Published on", "indexed": true },
                { "name": "views", "type": "number", "title": "Views", "indexed": true }
            ]
        },
        {
            "type": "document", "name": "author", "title": "Author",
            "fields": [
                { "name": "name", "type": "string", "title": "Name", "required": true },
                { "name": "bio", "type": "text", "title": "Biography" },
                { "name": "avatar", "type": "image", "title": "Avatar" }
            ]
        },
        {
            "type": "document", "name": "page", "title": "Page",
            "fields": [
                { "name": "title", "type": "string", "title": "Title", "localized": true, "searchable": true },
                { "name": "slug", "type": "slug", "title": "Slug" },
                { "name": "body", "type": "block", "title": "Body", "localized": true, "searchable": true }
            ]
        },
        {
            "type": "document", "name": "siteSettings", "title": "Site settings", "singleton": true,
            "fields": [
                { "name": "siteName", "type": "string", "title": "Site name", "required": true },
                { "name": "tagline", "type": "string", "title": "Tagline" }
            ]
        }
    ]);
    parse_schemas(&declared).expect("the demo schemas are valid")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field_kind::{FieldKind, FieldLookup};
    use crate::schema::{FieldType, Schemas};

    #[test]
    fn demo_schemas_register() {
        let schemas = Schemas::new(demo_schemas()).unwrap();
        let names: Vec<&str> = schemas.documents().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["post", "author", "page", "siteSettings"]);
        assert!(schemas.get("siteSettings").unwrap().singleton);
        assert!(!schemas.get("post").unwrap().singleton);
    }

    #[test]
    fn demo_post_matches_the_contract() {
        let schemas = Schemas::new(demo_schemas()).unwrap();
        let post = schemas.get("post").unwrap();
        let types: Vec<&str> = post.fields.iter().map(|f| f.ty.type_name()).collect();
        assert_eq!(
            types,
            [
                "string",
                "slug",
                "block",
                "text",
                "reference",
                "image",
                "array",
                "date",
                "number"
            ]
        );
        assert!(post.fields[0].required);
        assert_eq!(
            post.fields[1].ty,
            FieldType::Slug {
                source: Some("title".into())
            }
        );
        assert_eq!(
            post.fields[4].ty,
            FieldType::Reference {
                to: vec!["author".into()]
            }
        );
        let view = schemas.fields("post").unwrap();
        assert_eq!(view.field_kind(&["tags"]), Some(FieldKind::StringArray));
        let indexed: Vec<String> = view
            .indexed_paths()
            .into_iter()
            .map(|(p, _)| p.join("."))
            .collect();
        assert_eq!(indexed, ["title", "slug", "author", "publishedOn", "views"]);
        assert_eq!(
            crate::search::searchable_paths(&schemas, "post"),
            ["title", "body", "excerpt"]
        );
        assert_eq!(
            crate::search::searchable_paths(&schemas, "page"),
            ["title", "body"]
        );
        assert!(schemas.get("author").unwrap().fields[0].required);
        assert!(schemas.get("siteSettings").unwrap().fields[0].required);
    }
}
