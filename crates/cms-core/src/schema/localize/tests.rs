use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::FieldLookup;
use crate::locale::{LocaleTag, Locales};
use crate::schema::{Schemas, parse_schemas};

fn locales() -> Locales {
    let fallbacks = BTreeMap::from([("de-AT".to_owned(), "de".to_owned())]);
    let available = ["en", "de", "de-AT", "fr"].map(String::from);
    Locales::new(&available, None, &fallbacks).unwrap()
}

fn schemas() -> Schemas {
    let parsed = parse_schemas(&json!([
        {"type": "object", "name": "seo", "fields": [
            {"name": "title", "type": "string", "localized": true, "indexed": true, "maxLength": 5},
            {"name": "noindex", "type": "boolean"}
        ]},
        {"type": "document", "name": "page", "fields": [
            {"name": "title", "type": "string", "localized": true, "required": true, "indexed": true},
            {"name": "views", "type": "number", "indexed": true},
            {"name": "seo", "type": "seo"},
            {"name": "hero", "type": "image", "localized": true},
            {"name": "blocks", "type": "array", "of": [
                {"type": "object", "name": "para", "fields": [
                    {"name": "text", "type": "text", "localized": true}
                ]}
            ]}
        ]},
        {"type": "document", "name": "plain", "fields": [{"name": "title", "type": "string"}]}
    ]))
    .unwrap();
    Schemas::new(parsed).unwrap().with_locales(locales())
}

fn tag(s: &str) -> LocaleTag {
    LocaleTag::parse(s).unwrap()
}

fn read(schemas: &Schemas, data: &Value, asked: &str) -> (Value, BTreeMap<String, String>) {
    let asked = tag(asked);
    let chain = schemas.locales().chain(&asked);
    let mut data = data.clone();
    let served = schemas.localize("page", &mut data, &chain);
    (data, served)
}

#[test]
fn only_types_with_a_localized_field_are_reshaped() {
    let s = schemas();
    assert!(s.is_localized_type("page"));
    assert!(!s.is_localized_type("plain"));
}

#[test]
fn a_read_serves_one_locale_from_its_fallback_chain() {
    let s = schemas();
    let stored = json!({
        "title": {"en": "Hello", "de": "Hallo"},
        "views": 3,
        "seo": {"title": {"en": "Hi"}, "noindex": true},
        "blocks": [{"_type": "para", "_key": "a", "text": {"fr": "Salut", "en": "Hey"}}]
    });
    let (de_at, served) = read(&s, &stored, "de-AT");
    assert_eq!(
        de_at,
        json!({"title": "Hallo", "views": 3, "seo": {"title": "Hi", "noindex": true},
               "blocks": [{"_type": "para", "_key": "a", "text": "Hey"}]})
    );
    assert_eq!(
        served,
        BTreeMap::from([
            ("title".to_owned(), "de".to_owned()),
            ("seo.title".to_owned(), "en".to_owned()),
            ("blocks[0].text".to_owned(), "en".to_owned()),
        ])
    );
    let (fr, served) = read(&s, &stored, "fr");
    assert_eq!(fr["title"], "Hello");
    assert_eq!(fr["blocks"][0]["text"], "Salut");
    assert_eq!(served.get("blocks[0].text"), None);
    assert_eq!(served.get("title").map(String::as_str), Some("en"));
}

#[test]
fn a_field_no_locale_of_the_chain_has_is_left_out() {
    let s = schemas();
    let (fr, served) = read(&s, &json!({"title": {"de": "Hallo"}}), "fr");
    assert_eq!(fr, json!({}));
    assert!(served.is_empty());
}

#[test]
fn a_value_saved_before_the_field_was_localized_is_the_default_locales() {
    let s = schemas();
    let (de, served) = read(&s, &json!({"title": "Hello"}), "de");
    assert_eq!(de["title"], "Hello");
    assert_eq!(served.get("title").map(String::as_str), Some("en"));
    // An object field's own value is not mistaken for locales: its keys are not locales.
    let hero = json!({"asset": {"_ref": "a1"}});
    let (de, _) = read(&s, &json!({"hero": hero}), "de");
    assert_eq!(de["hero"], hero);
    let written = s.write_locale(
        "page",
        Some(&json!({"title": "Hello"})),
        &json!({"title": "Hallo"}),
        &tag("de"),
    );
    assert_eq!(written["title"], json!({"en": "Hello", "de": "Hallo"}));
}

#[test]
fn a_write_in_one_locale_keeps_the_others() {
    let s = schemas();
    let stored = json!({
        "title": {"en": "Hello", "fr": "Bonjour"},
        "views": 3,
        "seo": {"title": {"en": "Hi"}},
        "blocks": [
            {"_type": "para", "_key": "a", "text": {"en": "A"}},
            {"_type": "para", "_key": "b", "text": {"en": "B"}}
        ]
    });
    let incoming = json!({
        "title": "Hallo",
        "views": 4,
        "seo": {"title": "Hi", "noindex": false},
        // Reordered: items follow their _key, not their position.
        "blocks": [{"_type": "para", "_key": "b", "text": "Bee"}, {"_type": "para", "_key": "a"}]
    });
    let written = s.write_locale("page", Some(&stored), &incoming, &tag("de"));
    assert_eq!(
        written,
        json!({
            "title": {"en": "Hello", "fr": "Bonjour", "de": "Hallo"},
            "views": 4,
            "seo": {"title": {"en": "Hi", "de": "Hi"}, "noindex": false},
            "blocks": [
                {"_type": "para", "_key": "b", "text": {"en": "B", "de": "Bee"}},
                {"_type": "para", "_key": "a", "text": {"en": "A"}}
            ]
        })
    );
    // Leaving a localized field out removes that locale's value only; an object left out
    // keeps the other locales of its localized fields, and arrays are shared structure.
    let removed = s.write_locale("page", Some(&written), &json!({"views": 4}), &tag("de"));
    assert_eq!(removed["title"], json!({"en": "Hello", "fr": "Bonjour"}));
    assert_eq!(removed["seo"], json!({"title": {"en": "Hi"}}));
    assert_eq!(removed.get("blocks"), None);
}

#[test]
fn validation_checks_every_locale_and_requires_the_default_only() {
    let s = schemas();
    let issues = s.validate_for_publish(
        "page",
        &json!({"title": {"de": "Hallo"}, "seo": {"title": {"en": "ok", "fr": "too long"}}}),
    );
    let codes: Vec<(String, String)> = issues.into_iter().map(|i| (i.path, i.code)).collect();
    assert_eq!(
        codes,
        [
            ("title.en".to_owned(), "required".to_owned()),
            ("seo.title.fr".to_owned(), "maxLength".to_owned()),
        ]
    );
    assert!(
        s.validate_for_publish("page", &json!({"title": {"en": "Hi"}}))
            .is_empty()
    );
    let structure = s.check_structure("page", &json!({"title": {"en": 5, "it": "Ciao"}}));
    let codes: Vec<(String, String)> = structure.into_iter().map(|i| (i.path, i.code)).collect();
    assert_eq!(
        codes,
        [
            ("title.en".to_owned(), "type".to_owned()),
            ("title.it".to_owned(), "locale".to_owned()),
        ]
    );
}

#[test]
fn references_in_every_locale_are_found() {
    let s = schemas();
    let found = s.references(
        "page",
        &json!({"hero": {"en": {"asset": {"_ref": "a1"}}, "de": {"asset": {"_ref": "a2"}}}}),
    );
    let mut found: Vec<(&str, &str)> = found
        .iter()
        .map(|r| (r.path.as_str(), r.id.as_str()))
        .collect();
    found.sort_unstable();
    assert_eq!(found, [("hero.de", "a2"), ("hero.en", "a1")]);
}

#[test]
fn queries_read_the_locale_asked_and_indexes_cover_every_locale() {
    let s = schemas();
    let fields = s.fields("page").unwrap();
    let de = tag("de");
    assert_eq!(fields.localized_at(&["title"]), Some((0, tag("en"))));
    assert_eq!(
        fields.in_locale(&de).localized_at(&["seo", "title"]),
        Some((1, de.clone()))
    );
    assert_eq!(fields.localized_at(&["views"]), None);
    let paths: Vec<String> = fields
        .indexed_paths()
        .into_iter()
        .map(|(p, _)| p.join("."))
        .collect();
    assert_eq!(
        paths,
        [
            "title.en",
            "title.de",
            "title.de-AT",
            "title.fr",
            "views",
            "seo.title.en",
            "seo.title.de",
            "seo.title.de-AT",
            "seo.title.fr",
            "seo.noindex",
        ]
    );
}

#[test]
fn a_localized_field_inside_another_is_refused() {
    let parsed = parse_schemas(&json!([
        {"type": "object", "name": "seo", "fields": [
            {"name": "title", "type": "string", "localized": true}
        ]},
        {"type": "document", "name": "page", "fields": [
            {"name": "seo", "type": "seo", "localized": true}
        ]}
    ]))
    .unwrap();
    let err = Schemas::new(parsed).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("seo.title"));
    assert!(err.message.contains("inside another localized field"));
}
