use proptest::prelude::*;
use serde_json::{Value, json};

use super::formats;
use crate::issue::Issue;
use crate::schema::{Schemas, demo_schemas, parse_schemas};

/// The demo schemas plus a `kitchen` type holding every field type and constraint.
fn schemas() -> Schemas {
    let mut list = demo_schemas();
    list.extend(
        parse_schemas(&json!([
            { "type": "object", "name": "seoMeta", "fields": [
                { "name": "title", "type": "string", "required": true, "maxLength": 5 },
                { "name": "description", "type": "text" }
            ] },
            { "type": "document", "name": "kitchen", "fields": [
                { "name": "title", "type": "string", "required": true, "minLength": 2,
                  "maxLength": 5, "pattern": "^[a-z]+$" },
                { "name": "status", "type": "string", "options": ["draft", "live"] },
                { "name": "text", "type": "text", "maxLength": 3 },
                { "name": "n", "type": "number", "min": 0, "max": 10, "integer": true },
                { "name": "ok", "type": "boolean" },
                { "name": "on", "type": "date" },
                { "name": "at", "type": "datetime" },
                { "name": "site", "type": "url" },
                { "name": "mail", "type": "email" },
                { "name": "slug", "type": "slug", "required": true },
                { "name": "author", "type": "reference", "to": ["author"] },
                { "name": "cover", "type": "image", "required": true },
                { "name": "pdf", "type": "file" },
                { "name": "tags", "type": "array", "of": [{ "type": "string", "maxLength": 3 }],
                  "minItems": 1, "maxItems": 2 },
                { "name": "links", "type": "array", "of": [{ "type": "email" }, { "type": "url" }] },
                { "name": "seo", "type": "seoMeta" },
                { "name": "box", "type": "object", "fields": [
                    { "name": "label", "type": "string", "required": true }
                ] },
                { "name": "items", "type": "array", "of": [
                    { "name": "hero", "type": "object", "fields": [{ "name": "h", "type": "string", "required": true }] },
                    { "type": "seoMeta" },
                    { "type": "number" }
                ] },
                { "name": "cards", "type": "array", "of": [
                    { "type": "object", "fields": [{ "name": "c", "type": "string", "required": true }] }
                ] },
                { "name": "body", "type": "block" },
                { "name": "raw", "type": "json" }
            ] }
        ]))
        .unwrap(),
    );
    Schemas::new(list).unwrap()
}

/// The (path, code) pairs of a result, for compact assertions.
fn codes(issues: Vec<Issue>) -> Vec<(String, String)> {
    issues.into_iter().map(|i| (i.path, i.code)).collect()
}

fn structure(data: Value) -> Vec<(String, String)> {
    codes(schemas().check_structure("kitchen", &data))
}

/// Publish issues of `data` merged into a minimal valid kitchen document.
fn publish(data: Value) -> Vec<(String, String)> {
    let mut doc = json!({ "title": "abc", "slug": { "current": "abc" }, "cover": { "asset": { "_ref": "a1" } } });
    for (k, v) in data.as_object().unwrap() {
        doc[k] = v.clone();
    }
    codes(schemas().validate_for_publish("kitchen", &doc))
}

fn pair(path: &str, code: &str) -> (String, String) {
    (path.to_owned(), code.to_owned())
}

#[test]
fn data_must_be_an_object() {
    let s = schemas();
    let issues = s.check_structure("post", &json!([1]));
    assert_eq!(
        issues,
        vec![Issue::new("", "type", "data must be an object")]
    );
    assert_eq!(
        codes(s.validate_for_publish("post", &json!(null))),
        [pair("", "type")]
    );
    assert_eq!(
        codes(s.check_structure("nope", &json!({}))),
        [pair("", "unknown")]
    );
}

#[test]
fn valid_drafts_and_documents_pass() {
    let s = schemas();
    assert!(
        s.check_structure("post", &json!({})).is_empty(),
        "a draft may be empty"
    );
    let post = json!({
        "title": "Hello", "slug": { "current": "hello" }, "excerpt": "x",
        "body": [{ "_type": "block", "_key": "k", "children": [{ "_type": "span", "text": "hi" }], "markDefs": [] }],
        "author": { "_ref": "a1", "_type": "reference" }, "cover": { "asset": { "_ref": "i1" }, "alt": "x" },
        "tags": ["a", "b"], "publishedOn": "2024-02-29", "views": 3
    });
    assert_eq!(s.validate_for_publish("post", &post), vec![]);
    let full = json!({
        "title": "abc", "status": "live", "text": "abc", "n": 10, "ok": false, "on": "2024-01-31",
        "at": "2024-01-31T10:00:00+02:00", "site": "https://example.com/a?b#c", "mail": "a@b.co",
        "slug": { "current": "abc", "_type": "slug" }, "author": { "_ref": "a", "_weak": true },
        "cover": { "asset": { "_ref": "i", "_type": "reference" }, "crop": {}, "hotspot": {}, "_type": "image" },
        "pdf": { "asset": { "_ref": "f" } }, "tags": ["a"], "links": ["a@b.co", "http://x.org"],
        "seo": { "title": "t", "_type": "seoMeta" }, "box": { "label": "l" },
        "items": [{ "_type": "hero", "h": "x", "_key": "1" }, { "_type": "seoMeta", "title": "t" }, 4],
        "cards": [{ "c": "x", "_type": "anything" }], "raw": { "any": [1, null] }
    });
    assert_eq!(s.validate_for_publish("kitchen", &full), vec![]);
}

#[test]
fn null_means_no_value() {
    let data = json!({ "title": null, "n": null, "tags": null, "seo": null, "author": null, "body": null });
    assert!(structure(data.clone()).is_empty());
    assert_eq!(publish(data), [pair("title", "required")]);
}

#[test]
fn undeclared_keys_are_unknown() {
    let issues = schemas().check_structure("post", &json!({ "titel": "x", "_type": "post" }));
    assert_eq!(
        codes(issues.clone()),
        [pair("_type", "unknown"), pair("titel", "unknown")]
    );
    assert_eq!(issues[1].message, "titel is not a declared field");
    let nested = json!({
        "seo": { "title": "t", "x": 1 }, "slug": { "current": "a", "x": 1 },
        "author": { "_ref": "a", "x": 1 }, "cover": { "asset": { "_ref": "a", "x": 1 }, "x": 1 },
        "items": [{ "_type": "hero", "x": 1 }]
    });
    assert_eq!(
        structure(nested),
        [
            pair("slug.x", "unknown"),
            pair("author.x", "unknown"),
            pair("cover.x", "unknown"),
            pair("cover.asset.x", "unknown"),
            pair("seo.x", "unknown"),
            pair("items[0].x", "unknown"),
        ]
    );
}

#[test]
fn wrong_json_types() {
    let data = json!({
        "title": 1, "text": [], "n": "1", "ok": "yes", "on": 20240101, "site": {}, "slug": "abc",
        "author": "a1", "cover": "i1", "pdf": { "asset": "f" }, "tags": "a", "seo": "x",
        "box": [], "body": {}, "raw": "anything goes"
    });
    assert_eq!(
        structure(data),
        [
            pair("title", "type"),
            pair("text", "type"),
            pair("n", "type"),
            pair("ok", "type"),
            pair("on", "type"),
            pair("site", "type"),
            pair("slug", "type"),
            pair("author", "type"),
            pair("cover", "type"),
            pair("pdf.asset", "type"),
            pair("tags", "type"),
            pair("seo", "type"),
            pair("box", "type"),
            pair("body", "type"),
        ]
    );
    let issues = schemas().check_structure("kitchen", &json!({ "title": 1 }));
    assert_eq!(issues[0].message, "title must be a string");
}

#[test]
fn composite_shapes() {
    let data = json!({
        "slug": { "current": 1 }, "author": { "_type": "reference" },
        "cover": { "asset": { "id": "x" }, "alt": 1, "crop": 1 },
        "pdf": { "asset": { "_ref": 1 } }, "links": [1], "cards": ["x"]
    });
    assert_eq!(
        structure(data),
        [
            pair("slug.current", "type"),
            pair("author", "type"),
            pair("cover.alt", "type"),
            pair("cover.crop", "type"),
            pair("cover.asset._ref", "type"),
            pair("cover.asset.id", "unknown"),
            pair("pdf.asset._ref", "type"),
            pair("links[0]", "type"),
            pair("cards[0]", "type"),
        ]
    );
    assert_eq!(
        structure(json!({ "author": { "_ref": 5 } })),
        [pair("author._ref", "type")]
    );
    assert!(structure(json!({ "cover": { "alt": "not uploaded yet" } })).is_empty());
}

#[test]
fn array_members_match_by_type_key() {
    let items = json!({ "items": [{ "h": "x" }, { "_type": "nope" }, true, null, { "_type": "seoMeta", "title": 1 }] });
    let issues = schemas().check_structure("kitchen", &items);
    assert_eq!(
        codes(issues.clone()),
        [
            pair("items[0]", "type"),
            pair("items[1]", "type"),
            pair("items[2]", "type"),
            pair("items[3]", "type"),
            pair("items[4].title", "type"),
        ]
    );
    assert_eq!(
        issues[0].message,
        "item 1 of items must be an object whose _type is one of: hero, seoMeta"
    );
    assert_eq!(
        issues[2].message,
        "item 3 of items must be one of: hero, seoMeta, number"
    );
    assert!(
        structure(json!({ "cards": [{ "c": "x" }] })).is_empty(),
        "one object member needs no _type"
    );
}

#[test]
fn blocks_are_portable_text() {
    let body = json!({ "body": [
        { "_type": "block", "children": [{ "_type": "span" }, "x"], "markDefs": {} },
        { "text": "no type" },
        "x",
        { "_type": "image", "asset": { "_ref": "i" } }
    ] });
    assert_eq!(
        structure(body),
        [
            pair("body[0].children[1]", "type"),
            pair("body[0].markDefs", "type"),
            pair("body[1]._type", "type"),
            pair("body[2]", "type"),
        ]
    );
}

#[test]
fn required_values() {
    assert_eq!(
        codes(schemas().validate_for_publish("kitchen", &json!({}))),
        [
            pair("title", "required"),
            pair("slug", "required"),
            pair("cover", "required")
        ]
    );
    let empty = json!({ "title": "", "slug": { "current": "" }, "cover": { "alt": "x" } });
    let issues = schemas().validate_for_publish("kitchen", &empty);
    assert_eq!(
        codes(issues.clone()),
        [
            pair("title", "required"),
            pair("slug", "required"),
            pair("cover", "required")
        ]
    );
    assert_eq!(issues[0].message, "title is required");
    assert!(
        schemas().check_structure("kitchen", &json!({})).is_empty(),
        "drafts may miss required fields"
    );
}

#[test]
fn required_inside_objects_and_array_members() {
    let data = json!({
        "seo": { "description": "d" }, "box": {},
        "items": [{ "_type": "hero" }, { "_type": "seoMeta", "title": "" }], "cards": [{}]
    });
    assert_eq!(
        publish(data),
        [
            pair("seo.title", "required"),
            pair("box.label", "required"),
            pair("items[0].h", "required"),
            pair("items[1].title", "required"),
            pair("cards[0].c", "required"),
        ]
    );
}

#[test]
fn string_lengths_count_characters() {
    let issues = schemas().validate_for_publish("kitchen", &json!({ "title": "a" }));
    assert!(
        issues
            .iter()
            .any(|i| i.code == "minLength" && i.message == "title is at least 2 characters")
    );
    assert!(publish(json!({ "title": "abcdef" })).contains(&pair("title", "maxLength")));
    assert!(
        publish(json!({ "text": "ééé" })).is_empty(),
        "three characters, six bytes"
    );
    assert_eq!(
        publish(json!({ "text": "abcd" })),
        [pair("text", "maxLength")]
    );
    let issues = schemas().validate_for_publish("kitchen", &json!({ "text": "abcd" }));
    assert!(
        issues
            .iter()
            .any(|i| i.message == "text is at most 3 characters")
    );
    assert_eq!(
        publish(json!({ "seo": { "title": "toolong" } })),
        [pair("seo.title", "maxLength")]
    );
}

#[test]
fn pattern_and_options() {
    assert_eq!(
        publish(json!({ "title": "ABC" })),
        [pair("title", "pattern")]
    );
    assert_eq!(
        publish(json!({ "status": "gone" })),
        [pair("status", "options")]
    );
    let issues = schemas().validate_for_publish("kitchen", &json!({ "status": "gone" }));
    assert!(
        issues
            .iter()
            .any(|i| i.message == "status is one of: draft, live")
    );
    assert!(
        publish(json!({ "status": "" })).is_empty(),
        "an empty optional string is no value"
    );
}

#[test]
fn number_ranges_and_integers() {
    assert_eq!(publish(json!({ "n": -1 })), [pair("n", "min")]);
    assert_eq!(publish(json!({ "n": 11 })), [pair("n", "max")]);
    assert_eq!(publish(json!({ "n": 1.5 })), [pair("n", "integer")]);
    assert!(publish(json!({ "n": 2.0 })).is_empty());
    let issues = schemas().validate_for_publish("kitchen", &json!({ "n": 11 }));
    assert!(issues.iter().any(|i| i.message == "n is at most 10"));
    assert!(
        structure(json!({ "n": 11 })).is_empty(),
        "constraints do not block drafts"
    );
}

#[test]
fn formats_are_checked_on_publish() {
    for (field, bad) in [
        ("on", "2024-02-30"),
        ("on", "2024-1-5"),
        ("on", "24-01-05"),
        ("at", "2024-01-01 10:00"),
        ("at", "2024-01-01T10:00:00"),
        ("site", "example.com"),
        ("site", "ftp://example.com"),
        ("site", "https://"),
        ("site", "https://exa mple.com"),
        ("mail", "a@b"),
        ("mail", "@b.co"),
        ("mail", "a b@c.co"),
    ] {
        assert_eq!(
            publish(json!({ field: bad })),
            [pair(field, "format")],
            "{field} = {bad}"
        );
        assert!(structure(json!({ field: bad })).is_empty());
    }
    let issues = schemas().validate_for_publish("kitchen", &json!({ "on": "x" }));
    assert!(
        issues
            .iter()
            .any(|i| i.message == "on is a date (YYYY-MM-DD)")
    );
}

#[test]
fn format_helpers() {
    assert!(formats::is_date("2024-02-29") && !formats::is_date("2023-02-29"));
    assert!(!formats::is_date("+2024-01-01") && !formats::is_date("2024-01-01T00:00:00Z"));
    assert!(formats::is_datetime("2024-01-01T00:00:00Z"));
    assert!(formats::is_datetime("2024-01-01T00:00:00.123-05:00"));
    for ok in [
        "http://a.b",
        "HTTPS://Example.com:8080/x",
        "https://u:p@h.io/",
        "http://[::1]:80/",
        "http://localhost",
    ] {
        assert!(formats::is_http_url(ok), "{ok}");
    }
    for bad in [
        "javascript:alert(1)",
        "http:/x",
        "http://:80",
        "http://a:b:c",
        "http://[zz]/",
        "https://a<b",
        "//a.b",
    ] {
        assert!(!formats::is_http_url(bad), "{bad}");
    }
    for ok in ["a@b.co", "first.last+tag@sub.example.org"] {
        assert!(formats::is_email(ok), "{ok}");
    }
    for bad in [
        "a@b..co", "a@.b.co", "a@b.co.", "a@@b.co", "a@b@c.co", "ab.co",
    ] {
        assert!(!formats::is_email(bad), "{bad}");
    }
}

#[test]
fn item_counts() {
    assert_eq!(publish(json!({ "tags": [] })), [pair("tags", "minItems")]);
    assert_eq!(
        publish(json!({ "tags": ["a", "b", "c"] })),
        [pair("tags", "maxItems")]
    );
    let issues = schemas().validate_for_publish("kitchen", &json!({ "tags": ["a", "b", "c"] }));
    assert!(
        issues
            .iter()
            .any(|i| i.message == "tags has at most 2 items")
    );
    assert_eq!(
        publish(json!({ "tags": ["a", "long"] })),
        [pair("tags[1]", "maxLength")]
    );
}

#[test]
fn ambiguous_members_take_the_first_that_fits() {
    assert!(publish(json!({ "links": ["a@b.co", "https://x.org"] })).is_empty());
    assert_eq!(
        publish(json!({ "links": ["nope"] })),
        [pair("links[0]", "format")]
    );
}

#[test]
fn nested_paths() {
    let data = json!({
        "seo": { "title": 1 }, "box": { "label": [] },
        "items": [{ "_type": "hero", "h": 2 }], "tags": ["a", 3],
        "body": [{ "_type": "block", "children": 1 }]
    });
    assert_eq!(
        structure(data),
        [
            pair("tags[1]", "type"),
            pair("seo.title", "type"),
            pair("box.label", "type"),
            pair("items[0].h", "type"),
            pair("body[0].children", "type"),
        ]
    );
}

#[test]
fn publish_includes_structure() {
    let issues = publish(json!({ "x": 1, "n": "1" }));
    assert_eq!(issues, [pair("x", "unknown"), pair("n", "type")]);
}

/// Arbitrary JSON, biased towards the demo `post`'s keys so that the walk goes deep.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop_oneof![
            Just("2024-01-01".to_owned()),
            Just(String::new()),
            ".{0,12}".prop_map(String::from)
        ]
        .prop_map(Value::String),
    ];
    let key = prop_oneof![
        prop::sample::select(vec![
            "title",
            "slug",
            "body",
            "excerpt",
            "author",
            "cover",
            "tags",
            "publishedOn",
            "views",
            "current",
            "_ref",
            "_type",
            "_key",
            "_weak",
            "asset",
            "alt",
            "crop",
            "children",
            "markDefs",
            "block",
            "image",
        ])
        .prop_map(String::from),
        "[a-z_]{1,6}",
    ];
    leaf.prop_recursive(5, 96, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|kvs| Value::Object(kvs.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn validation_never_panics(data in arb_json()) {
        let s = Schemas::new(demo_schemas()).unwrap();
        let structure = s.check_structure("post", &data);
        let publish = s.validate_for_publish("post", &data);
        prop_assert!(structure.iter().all(|i| publish.contains(i)), "publish reports every structure issue");
        let _ = s.references("post", &data);
    }
}

/// Messages speak of fields as people see them (issue 32): by title where the schema gives one,
/// an array item by its position from 1, a part of a composite value after its field; the
/// `path` stays the API's.
#[test]
fn messages_name_fields_by_their_titles() {
    let list = parse_schemas(&json!([
        { "type": "document", "name": "titled", "fields": [
            { "name": "title", "title": "Headline", "type": "string", "required": true },
            { "name": "seo", "title": "Search engines", "type": "object", "fields": [
                { "name": "description", "title": "Summary", "type": "text", "maxLength": 3 }
            ] },
            { "name": "tags", "title": "Tags", "type": "array", "of": [{ "type": "string" }] },
            { "name": "hero", "title": "Hero image", "type": "image" },
            { "name": "untitled", "type": "number", "max": 1 }
        ] }
    ]))
    .unwrap();
    let schemas = Schemas::new(list).unwrap();
    let data = json!({
        "seo": { "description": "long" },
        "tags": ["a", 2],
        "hero": { "asset": { "_ref": 7 } },
        "untitled": 2
    });
    let messages: Vec<(String, String)> = schemas
        .validate_for_publish("titled", &data)
        .into_iter()
        .map(|i| (i.path, i.message))
        .collect();
    let expected = [
        ("title", "Headline is required"),
        ("seo.description", "Summary is at most 3 characters"),
        ("tags[1]", "item 2 of Tags must be one of: string"),
        (
            "hero.asset._ref",
            "Hero image › asset › _ref must be a string",
        ),
        ("untitled", "untitled is at most 1"),
    ];
    for (path, message) in expected {
        assert!(
            messages.iter().any(|(p, m)| p == path && m == message),
            "{path}: {message} not in {messages:?}"
        );
    }
}
