use serde_json::{Value, json};

use super::*;
use crate::schema::parse_schemas;

fn register(v: Value) -> Result<Schemas, String> {
    Schemas::new(parse_schemas(&v).map_err(|e| e.to_string())?).map_err(|e| e.to_string())
}

fn doc(name: &str, fields: Value) -> Value {
    json!({ "type": "document", "name": name, "fields": fields })
}

fn object(name: &str, fields: Value) -> Value {
    json!({ "type": "object", "name": name, "fields": fields })
}

fn string(name: &str) -> Value {
    json!({ "name": name, "type": "string" })
}

#[test]
fn schema_names_are_unique() {
    let e = register(json!([
        doc("post", json!([string("t")])),
        doc("post", json!([string("t")]))
    ]));
    assert_eq!(e.unwrap_err(), "schema \"post\": is declared twice");
}

#[test]
fn field_names_are_unique_per_level() {
    let e = register(json!([doc("post", json!([string("t"), string("t")]))]));
    assert_eq!(
        e.unwrap_err(),
        "schema \"post\", field \"t\": \"t\" is declared twice at this level"
    );
    let seo = json!({ "name": "seo", "type": "object", "fields": [string("a"), string("a")] });
    let e = register(json!([doc("post", json!([string("a"), seo]))]));
    assert_eq!(
        e.unwrap_err(),
        "schema \"post\", field \"seo.a\": \"a\" is declared twice at this level"
    );
    let tags = json!({ "name": "tags", "type": "array", "of": [{ "type": "string" }, { "type": "string" }] });
    let e = register(json!([doc("post", json!([tags]))]));
    assert_eq!(
        e.unwrap_err(),
        "schema \"post\", field \"tags[]\": \"string\" is declared twice at this level"
    );
}

#[test]
fn hand_built_names_are_rechecked() {
    let mut s = parse_schemas(&doc("post", json!([string("t")]))).unwrap();
    s[0].fields[0].name = "t') --".into();
    let e = Schemas::new(s.clone()).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("t') --"));
    s[0].name = "x.y".into();
    assert!(Schemas::new(s).unwrap_err().message.contains("must match"));
}

#[test]
fn named_types_exist_and_are_objects() {
    let field = json!([{ "name": "seo", "type": "seo" }]);
    let e = register(json!([doc("post", field.clone())]));
    assert_eq!(
        e.unwrap_err(),
        "schema \"post\", field \"seo\": unknown type \"seo\""
    );
    let e = register(json!([
        doc("post", field.clone()),
        doc("seo", json!([string("t")]))
    ]));
    assert!(e.unwrap_err().contains("\"seo\" is a document type"));
    assert!(
        register(json!([
            doc("post", field),
            object("seo", json!([string("t")]))
        ]))
        .is_ok()
    );
}

#[test]
fn object_types_may_not_shadow_builtins() {
    let e = register(json!([object("image", json!([string("t")]))]));
    assert!(e.unwrap_err().contains("built-in field type"));
    assert!(register(json!([doc("file", json!([string("t")]))])).is_ok());
}

#[test]
fn reference_targets_exist_and_are_documents() {
    let r = |to: Value| {
        doc(
            "post",
            json!([{ "name": "a", "type": "reference", "to": to }]),
        )
    };
    let e = register(json!([r(json!([]))])).unwrap_err();
    assert_eq!(
        e,
        "schema \"post\", field \"a\": to must name at least one document type"
    );
    let e = register(json!([r(json!(["author"]))])).unwrap_err();
    assert_eq!(
        e,
        "schema \"post\", field \"a\": to: unknown document type \"author\""
    );
    let e = register(json!([
        r(json!(["seo"])),
        object("seo", json!([string("t")]))
    ]))
    .unwrap_err();
    assert!(e.contains("\"seo\" is an object type"));
    assert!(
        register(json!([r(json!(["post"]))])).is_ok(),
        "self references are fine"
    );
}

#[test]
fn slug_source_is_a_sibling_string() {
    let slug = |source: &str| json!({ "name": "slug", "type": "slug", "source": source });
    let text = json!({ "name": "body", "type": "text" });
    let n = json!({ "name": "n", "type": "number" });
    assert!(register(json!([doc("p", json!([string("title"), slug("title")]))])).is_ok());
    assert!(register(json!([doc("p", json!([text, slug("body")]))])).is_ok());
    let e = register(json!([doc("p", json!([n, slug("n")]))])).unwrap_err();
    assert!(
        e.contains("source \"n\" is not a string or text field"),
        "{e}"
    );
    let e = register(json!([doc("p", json!([slug("title")]))])).unwrap_err();
    assert!(e.contains("not a field at this level"), "{e}");
    let seo = json!({ "name": "seo", "type": "object", "fields": [slug("title")] });
    let e = register(json!([doc("p", json!([string("title"), seo]))])).unwrap_err();
    assert!(e.starts_with("schema \"p\", field \"seo.slug\""), "{e}");
    let arr = json!({ "name": "a", "type": "array", "of": [{ "type": "slug", "source": "x" }] });
    assert!(
        register(json!([doc("p", json!([arr]))]))
            .unwrap_err()
            .contains("array member")
    );
}

#[test]
fn indexed_only_on_scalars_outside_arrays() {
    for ty in [
        "string", "text", "number", "boolean", "date", "datetime", "url", "email", "slug",
    ] {
        let f = json!([{ "name": "x", "type": ty, "indexed": true }]);
        assert!(register(json!([doc("p", f)])).is_ok(), "{ty}");
    }
    let f = json!([{ "name": "x", "type": "reference", "to": ["p"], "indexed": true }]);
    assert!(
        register(json!([doc("p", f)])).is_ok(),
        "a reference indexes its _ref"
    );
    for ty in ["block", "json", "image", "file"] {
        let f = json!([{ "name": "x", "type": ty, "indexed": true }]);
        let e = register(json!([doc("p", f)])).unwrap_err();
        assert!(e.contains("indexed applies only to scalar fields"), "{e}");
        // Opting out is always possible, if pointless.
        let f = json!([{ "name": "x", "type": ty, "indexed": false }]);
        assert!(register(json!([doc("p", f)])).is_ok(), "{ty}");
    }
    let f = json!([{ "name": "x", "type": "array", "of": [{ "type": "object",
        "fields": [{ "name": "n", "type": "number", "indexed": true }] }] }]);
    let e = register(json!([doc("p", f)])).unwrap_err();
    assert_eq!(
        e,
        "schema \"p\", field \"x[].n\": indexed is not possible inside an array"
    );
}

#[test]
fn searchable_only_on_text_outside_arrays() {
    for ty in ["string", "text", "block"] {
        let f = json!([{ "name": "x", "type": ty, "searchable": true },
            { "name": "o", "type": "object", "fields": [{ "name": "y", "type": ty, "searchable": true }] }]);
        assert!(register(json!([doc("p", f)])).is_ok(), "{ty}");
    }
    for ty in ["number", "slug", "url", "json", "image", "date"] {
        let f = json!([{ "name": "x", "type": ty, "searchable": true }]);
        let e = register(json!([doc("p", f)])).unwrap_err();
        assert!(
            e.contains("searchable applies only to string, text and block fields"),
            "{e}"
        );
    }
    let f = json!([{ "name": "x", "type": "array", "of": [{ "type": "object",
        "fields": [{ "name": "s", "type": "string", "searchable": true }] }] }]);
    let e = register(json!([doc("p", f)])).unwrap_err();
    assert_eq!(
        e,
        "schema \"p\", field \"x[].s\": searchable is not possible inside an array"
    );
    let f =
        json!([{ "name": "x", "type": "array", "of": [{ "type": "string", "searchable": true }] }]);
    assert!(register(json!([doc("p", f)])).is_err());
}

#[test]
fn object_types_may_not_contain_themselves() {
    let direct = object("node", json!([{ "name": "next", "type": "node" }]));
    let e = register(json!([direct])).unwrap_err();
    assert_eq!(
        e,
        "schema \"node\": object type contains itself: node -> node"
    );
    let a = object("a", json!([{ "name": "b", "type": "b" }]));
    let b = object(
        "b",
        json!([{ "name": "xs", "type": "array", "of": [{ "type": "c" }] }]),
    );
    let c = object(
        "c",
        json!([{ "name": "o", "type": "object", "fields": [{ "name": "a", "type": "a" }] }]),
    );
    let e = register(json!([a, b, c])).unwrap_err();
    assert!(e.contains("a -> b -> c -> a"), "{e}");
    let shared = object("s", json!([string("t")]));
    let twice = doc(
        "p",
        json!([{ "name": "x", "type": "s" }, { "name": "y", "type": "s" }]),
    );
    assert!(
        register(json!([shared, twice])).is_ok(),
        "a diamond is not a cycle"
    );
}

#[test]
fn singleton_only_on_documents() {
    let mut o = object("o", json!([string("t")]));
    o["singleton"] = json!(true);
    assert_eq!(
        register(json!([o])).unwrap_err(),
        "schema \"o\": singleton applies only to document schemas"
    );
}

fn lookup_fixture() -> Schemas {
    register(json!([
        object("seoMeta", json!([
            { "name": "title", "type": "string", "indexed": true },
            { "name": "score", "type": "number" }
        ])),
        doc("author", json!([string("name")])),
        doc("post", json!([
            { "name": "title", "type": "string", "indexed": true },
            { "name": "slug", "type": "slug" },
            { "name": "author", "type": "reference", "to": ["author"] },
            { "name": "on", "type": "datetime", "indexed": true },
            { "name": "ok", "type": "boolean" },
            { "name": "tags", "type": "array", "of": [{ "type": "url" }] },
            { "name": "items", "type": "array", "of": [{ "type": "string" }, { "type": "number" }] },
            { "name": "seo", "type": "seoMeta" },
            { "name": "box", "type": "object", "fields": [
                { "name": "n", "type": "number", "indexed": true },
                { "name": "inner", "type": "object", "fields": [{ "name": "e", "type": "email" }] }
            ] },
            { "name": "cover", "type": "image" }
        ]))
    ]))
    .unwrap()
}

#[test]
fn field_kinds_follow_dot_paths() {
    let schemas = lookup_fixture();
    let post = schemas.fields("post").unwrap();
    let kind = |p: &str| post.field_kind(&p.split('.').collect::<Vec<_>>());
    assert_eq!(kind("title"), Some(FieldKind::String));
    assert_eq!(kind("slug"), Some(FieldKind::Slug));
    assert_eq!(kind("author"), Some(FieldKind::Reference));
    assert_eq!(kind("on"), Some(FieldKind::Date));
    assert_eq!(kind("ok"), Some(FieldKind::Boolean));
    assert_eq!(kind("tags"), Some(FieldKind::StringArray));
    assert_eq!(kind("items"), Some(FieldKind::Other));
    assert_eq!(kind("seo"), Some(FieldKind::Other));
    assert_eq!(kind("seo.score"), Some(FieldKind::Number));
    assert_eq!(kind("box.inner.e"), Some(FieldKind::String));
    assert_eq!(kind("cover"), Some(FieldKind::Other));
    assert_eq!(kind("nope"), None);
    assert_eq!(kind("title.x"), None, "a string has no members");
    assert_eq!(kind("tags.x"), None, "arrays are not descended");
    assert_eq!(kind("seo.nope"), None);
    assert_eq!(post.field_kind(&[]), None);
    assert!(schemas.fields("nope").is_none());
}

#[test]
fn indexed_paths_include_nested_objects() {
    let schemas = lookup_fixture();
    let paths = schemas.fields("post").unwrap().indexed_paths();
    let got: Vec<(String, FieldKind)> = paths.into_iter().map(|(p, k)| (p.join("."), k)).collect();
    assert_eq!(
        got,
        vec![
            ("title".into(), FieldKind::String),
            ("slug".into(), FieldKind::Slug),
            ("author".into(), FieldKind::Reference),
            ("on".into(), FieldKind::Date),
            ("ok".into(), FieldKind::Boolean),
            ("seo.title".into(), FieldKind::String),
            ("seo.score".into(), FieldKind::Number),
            ("box.n".into(), FieldKind::Number),
        ],
        "every short scalar outside arrays, declared or not; not the e-mail, arrays or images"
    );
}

#[test]
fn indexed_false_opts_out_and_text_is_indexed_only_when_declared() {
    let schemas = register(json!([doc(
        "p",
        json!([
            { "name": "a", "type": "number", "indexed": false },
            { "name": "b", "type": "number" },
            { "name": "long", "type": "text" },
            { "name": "declared", "type": "text", "indexed": true },
            { "name": "home", "type": "url" }
        ])
    )]))
    .unwrap();
    let paths: Vec<String> = schemas
        .fields("p")
        .unwrap()
        .indexed_paths()
        .into_iter()
        .map(|(p, _)| p.join("."))
        .collect();
    assert_eq!(paths, ["b", "declared"]);
}

#[test]
fn accessors() {
    let schemas = lookup_fixture();
    assert_eq!(schemas.all().len(), 3);
    let docs: Vec<&str> = schemas.documents().map(|s| s.name.as_str()).collect();
    assert_eq!(docs, ["author", "post"]);
    assert_eq!(schemas.get("seoMeta").unwrap().kind, SchemaKind::Object);
    assert!(schemas.get("nope").is_none());
}

/// Fields declared outside any schema (an event's payload) get the checks an object
/// type's fields get, name their owner in errors, and refuse the storage-only options.
#[test]
fn free_fields_are_checked_like_an_object_types() {
    let schemas = lookup_fixture();
    let check = |fields: Value| {
        let fields = crate::schema::parse_fields("acme.thing.happened", &fields)
            .map_err(|e| e.to_string())?;
        schemas
            .check_fields("acme.thing.happened", &fields)
            .map(|()| fields.len())
            .map_err(|e| e.to_string())
    };
    assert_eq!(check(json!([])), Ok(0));
    assert_eq!(
        check(json!([
            { "name": "postId", "type": "string", "required": true },
            { "name": "seo", "type": "seoMeta" },
            { "name": "post", "type": "reference", "to": ["post"] },
            { "name": "tags", "type": "array", "of": [{ "type": "string" }] }
        ])),
        Ok(4)
    );
    let refused = [
        (
            json!([{ "name": "x", "type": "nope" }]),
            "unknown type \"nope\"",
        ),
        (
            json!([{ "name": "x", "type": "post" }]),
            "is a document type",
        ),
        (
            json!([{ "name": "x", "type": "reference", "to": ["seoMeta"] }]),
            "is an object type",
        ),
        (
            json!([{ "name": "x", "type": "string" }, { "name": "x", "type": "text" }]),
            "declared twice",
        ),
        (
            json!([{ "name": "x", "type": "string", "indexed": true }]),
            "field \"x\": indexed applies only to fields of document types",
        ),
        (
            json!([{ "name": "o", "type": "object", "fields": [
                { "name": "x", "type": "string", "access": { "read": ["admin"] } }
            ] }]),
            "field \"o.x\": access applies only to fields of document types",
        ),
        (
            json!([{ "name": "bad name", "type": "string" }]),
            "names must match",
        ),
        (json!({ "name": "x" }), "fields must be an array"),
    ];
    for (fields, expected) in refused {
        let error = check(fields.clone()).unwrap_err();
        assert!(
            error.starts_with("schema \"acme.thing.happened\"") && error.contains(expected),
            "{fields}: {error}"
        );
    }
}

/// A payload validates like a document: structure and publish rules, same issue paths.
#[test]
fn free_fields_validate_like_a_document() {
    let schemas = lookup_fixture();
    let fields = crate::schema::parse_fields(
        "acme.thing.happened",
        &json!([
            { "name": "postId", "type": "string", "required": true, "minLength": 2 },
            { "name": "count", "type": "number", "integer": true }
        ]),
    )
    .unwrap();
    schemas
        .check_fields("acme.thing.happened", &fields)
        .unwrap();
    let ok = json!({ "postId": "p1", "count": 3 });
    assert!(schemas.validate_fields(&fields, &ok).is_empty());
    let wrong = json!({ "postId": 5, "extra": true });
    let paths: Vec<String> = schemas
        .check_structure_of(&fields, &wrong)
        .into_iter()
        .map(|i| i.path)
        .collect();
    assert_eq!(paths, ["extra", "postId"]);
    let incomplete = json!({ "count": 1.5 });
    assert!(schemas.check_structure_of(&fields, &incomplete).is_empty());
    let paths: Vec<String> = schemas
        .validate_fields(&fields, &incomplete)
        .into_iter()
        .map(|i| i.path)
        .collect();
    assert_eq!(paths, ["postId", "count"]);
    assert_eq!(
        schemas.validate_fields(&fields, &json!([1]))[0].message,
        "data must be an object"
    );
}
