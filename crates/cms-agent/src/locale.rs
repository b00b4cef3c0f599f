//! The assistant's tools in one locale (CONTRACT.md section 17): which locale a call names,
//! what the model is told about localized fields, and the draft a partial edit in one locale
//! is merged into.
//!
//! A model edits partially (it names the fields it changes), while the service's writes take
//! a whole draft. In one locale, the draft the edit is merged into must be that locale's own
//! values and nothing else: a read in `de` fills missing German values from the fallback
//! chain, and merging into that would save English text as German. So the merge base is the
//! stored draft (`locale=*`) projected onto the one locale without fallbacks.

use cms_core::schema::{Field, FieldType, Schemas};
use cms_core::{LocaleChoice, LocaleTag, Locales};
use cms_service::documents::{DocumentView, ReadOptions};
use cms_service::{Actor, Cms, Error};
use serde_json::{Value, json};

use crate::execute::{document_of, failure, message};

/// The JSON Schema of a tool's `locale` argument.
pub(crate) fn parameter() -> Value {
    json!({
        "type": "string",
        "description": "The locale localized fields are read or written in: a tag of describe_cms `locales.available`, or `*` for values keyed by locale. Default: the default locale."
    })
}

/// The JSON Schema of a locale tag argument (`*` not allowed).
pub(crate) fn tag_parameter(what: &str) -> Value {
    json!({ "type": "string", "description": format!("{what}: a tag of describe_cms `locales.available`") })
}

/// The caller's organization's locales, as the service keeps them.
pub(crate) async fn locales_of(cms: &Cms, actor: &Actor) -> Result<Locales, Value> {
    let view = cms.locales().get(actor).await.map_err(failure)?;
    Locales::new(&view.available, Some(&view.default), &view.fallbacks)
        .map_err(|e| failure(Error::Internal(format!("the organization's locales: {e}"))))
}

/// The available tag `raw` names (spelled as configured); an unknown one, or `*`, is a failure
/// the model reads, naming the available ones.
pub(crate) fn tag_in(locales: &Locales, raw: &str) -> Result<LocaleTag, Value> {
    match locales.choose(Some(raw)) {
        Ok(LocaleChoice::One(tag)) => Ok(tag),
        Ok(LocaleChoice::All) => Err(message("`*` names every locale; name one locale here")),
        Err(e) => Err(message(e)),
    }
}

/// What the model needs to know about a type's localization: the paths of its localized
/// fields (`title`, `seo.description`, `blocks[].text`), empty for a type without any.
pub(crate) fn localized_paths(schemas: &Schemas, doc_type: &str) -> Vec<String> {
    let mut paths = Vec::new();
    if let Some(schema) = schemas.get(doc_type) {
        collect(schemas, &schema.fields, "", &mut paths, 0);
    }
    paths
}

/// Object types cannot contain themselves (the registry refuses cycles); the depth bound only
/// keeps a malformed registry from recursing without end.
const MAX_DEPTH: usize = 32;

fn collect(schemas: &Schemas, fields: &[Field], prefix: &str, out: &mut Vec<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    for field in fields {
        let path = if prefix.is_empty() {
            field.name.clone()
        } else {
            format!("{prefix}.{}", field.name)
        };
        if field.localized {
            out.push(path);
            continue;
        }
        nested(schemas, &field.ty, &path, out, depth);
    }
}

fn nested(schemas: &Schemas, ty: &FieldType, path: &str, out: &mut Vec<String>, depth: usize) {
    match ty {
        FieldType::Object { fields } => collect(schemas, fields, path, out, depth + 1),
        FieldType::Named(name) => {
            if let Some(schema) = schemas.get(name) {
                collect(schemas, &schema.fields, path, out, depth + 1);
            }
        }
        FieldType::Array { of, .. } => {
            for member in of {
                nested(schemas, &member.ty, &format!("{path}[]"), out, depth + 1);
            }
        }
        _ => {}
    }
}

/// The locale a partial edit of a localized type is written in.
pub(crate) enum EditLocale {
    /// Values keyed by locale, merged into the stored form and taken whole.
    All,
    /// Plain values of one locale; every other locale is kept.
    One(LocaleTag),
}

/// The document a partial edit in `locale` starts from, and the draft to merge the edit into:
/// for a localized type, the stored draft in the locale written (without fallbacks) or whole
/// for `*`; for any other type, the draft as read. Answers the locale to write with.
pub(crate) async fn edit_base(
    cms: &Cms,
    actor: &Actor,
    collection: &str,
    id: &str,
    locale: Option<&str>,
) -> Result<(DocumentView, Value, Option<String>), Value> {
    let schemas = cms.schemas();
    if !schemas.is_localized_type(collection) {
        // Nothing differs per locale; a named locale is still checked by the service.
        let read = ReadOptions {
            locale: locale.map(str::to_owned),
            ..ReadOptions::default()
        };
        let current = document_of(cms, actor, collection, id, read).await?;
        let draft = current.draft_data.clone();
        return Ok((current, draft, locale.map(str::to_owned)));
    }
    let edit = match locale {
        Some("*") => EditLocale::All,
        Some(raw) => EditLocale::One(tag_in(&locales_of(cms, actor).await?, raw)?),
        // The default locale cannot be narrowed away, so the instance's is the organization's.
        None => EditLocale::One(schemas.locales().default_locale().clone()),
    };
    let read = ReadOptions {
        locale: Some("*".to_owned()),
        ..ReadOptions::default()
    };
    let current = document_of(cms, actor, collection, id, read).await?;
    let mut draft = current.draft_data.clone();
    let written = match edit {
        EditLocale::All => "*".to_owned(),
        EditLocale::One(tag) => {
            schemas.localize(collection, &mut draft, &[&tag]);
            tag.to_string()
        }
    };
    Ok((current, draft, Some(written)))
}

/// What describe_cms says about locales: the organization's, and how tools take them.
pub(crate) async fn describe(cms: &Cms, actor: &Actor) -> Value {
    match cms.locales().get(actor).await {
        Ok(view) => json!({
            "available": view.available,
            "default": view.default,
            "fallbacks": view.fallbacks,
            "usage": "Localized fields hold one value per locale. Pass `locale` to the document tools to read or write one locale (other locales are kept); reads in a locale fill missing values from its fallbacks and say which in `_meta.fallbackLocales`. Translate with translate_document.",
        }),
        Err(e) => failure(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cms_core::schema::parse_schemas;

    #[test]
    fn localized_paths_reach_nested_objects_and_array_members() {
        let schemas = Schemas::new(
            parse_schemas(&json!([
                { "type": "object", "name": "seo", "fields": [
                    { "name": "description", "type": "text", "localized": true },
                    { "name": "noindex", "type": "boolean" }
                ] },
                { "type": "document", "name": "article", "fields": [
                    { "name": "title", "type": "string", "localized": true },
                    { "name": "views", "type": "number" },
                    { "name": "seo", "type": "seo" },
                    { "name": "blocks", "type": "array", "of": [
                        { "type": "object", "name": "quote", "fields": [
                            { "name": "text", "type": "text", "localized": true }
                        ] }
                    ] }
                ] },
                { "type": "document", "name": "plain", "fields": [{ "name": "title", "type": "string" }] }
            ]))
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            localized_paths(&schemas, "article"),
            ["title", "seo.description", "blocks[].text"]
        );
        assert!(localized_paths(&schemas, "plain").is_empty());
        assert!(localized_paths(&schemas, "missing").is_empty());
    }
}
