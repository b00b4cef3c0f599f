use serde_json::json;

use super::*;
use crate::schema::parse_schemas;

fn list(names: &[&str]) -> RoleList {
    RoleList::new(names.iter().map(|n| n.parse().unwrap()))
}

#[test]
fn role_lists_match_literally() {
    let l = list(&["editor", "content-lead"]);
    assert!(l.allows(Some("editor")));
    assert!(l.allows(Some("content-lead")));
    assert!(!l.allows(Some("owner")));
    assert!(!l.allows(Some("Editor")));
    assert!(!l.allows(None));
    assert!(!list(&[]).allows(Some("owner")));
}

#[test]
fn schema_access_parses_and_round_trips() {
    let raw = json!({ "publish": ["admin"], "read": ["viewer", "editor"] });
    let access = SchemaAccess::from_json(&raw).unwrap();
    assert_eq!(access.rule(Operation::Publish), Some(&list(&["admin"])));
    assert_eq!(access.rule(Operation::Delete), None);
    assert_eq!(access.to_json(), Some(raw));
    assert_eq!(SchemaAccess::default().to_json(), None);
    let field = FieldAccess::from_json(&json!({ "update": [] })).unwrap();
    assert_eq!(field.update, Some(list(&[])));
    assert_eq!(field.read, None);
}

#[test]
fn bad_shapes_are_refused_with_a_reason() {
    let e = |v: Value| SchemaAccess::from_json(&v).unwrap_err();
    assert!(e(json!({ "publsh": [] })).contains("unknown operation \"publsh\""));
    assert!(e(json!({ "read": "admin" })).contains("access.read must be an array"));
    assert!(e(json!({ "read": ["admin", 3] })).contains("access.read[1] must be a string"));
    assert!(e(json!({ "read": ["Admin"] })).contains("\"Admin\" is not a role name"));
    assert!(e(json!([])).contains("must be an object"));
    let e = FieldAccess::from_json(&json!({ "delete": [] })).unwrap_err();
    assert!(e.contains("expected read, update"), "{e}");
}

fn fixture() -> Schemas {
    let declared = json!([
        { "type": "object", "name": "money", "fields": [
            { "name": "amount", "type": "number" },
            { "name": "internal", "type": "string", "access": { "read": ["admin"], "update": ["admin"] } }
        ] },
        { "type": "document", "name": "deal", "fields": [
            { "name": "title", "type": "string" },
            { "name": "secret", "type": "string", "access": { "read": ["admin"] } },
            { "name": "price", "type": "number", "access": { "update": ["admin"] } },
            { "name": "meta", "type": "object", "fields": [
                { "name": "note", "type": "string" },
                { "name": "score", "type": "number", "access": { "read": ["admin"], "update": ["admin"] } }
            ] },
            { "name": "value", "type": "money" },
            { "name": "lines", "type": "array", "of": [
                { "type": "object", "name": "line", "fields": [
                    { "name": "label", "type": "string" },
                    { "name": "cost", "type": "number", "access": { "read": ["admin"], "update": ["admin"] } }
                ] },
                { "type": "string" }
            ] },
            { "name": "tags", "type": "array", "of": [{ "type": "string" }] }
        ] }
    ]);
    Schemas::new(parse_schemas(&declared).unwrap()).unwrap()
}

fn rules(schemas: &Schemas) -> FieldRules {
    FieldRules::compile(schemas, &schemas.get("deal").unwrap().fields)
}

fn role(name: &'static str) -> impl Fn(&RoleList) -> bool {
    move |l: &RoleList| l.allows(Some(name))
}

#[test]
fn only_fields_with_rules_are_compiled() {
    let schemas = fixture();
    let compiled = rules(&schemas);
    let names: Vec<&str> = compiled.fields.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["secret", "price", "meta", "value", "lines"]);
    let plain = Schemas::new(crate::schema::demo_schemas()).unwrap();
    assert!(FieldRules::compile(&plain, &plain.get("post").unwrap().fields).is_empty());
}

#[test]
fn reading_strips_hidden_fields_at_any_depth() {
    let schemas = fixture();
    let data = json!({
        "title": "T", "secret": "s", "price": 3,
        "meta": { "note": "n", "score": 9 },
        "value": { "amount": 1, "internal": "x" },
        "lines": [{ "_type": "line", "label": "a", "cost": 5 }, "free text"],
        "tags": ["a"]
    });
    let mut seen = data.clone();
    rules(&schemas).strip(&mut seen, &role("editor"));
    assert_eq!(
        seen,
        json!({
            "title": "T", "price": 3, "meta": { "note": "n" }, "value": { "amount": 1 },
            "lines": [{ "_type": "line", "label": "a" }, "free text"], "tags": ["a"]
        })
    );
    let mut all = data.clone();
    rules(&schemas).strip(&mut all, &role("admin"));
    assert_eq!(all, data);
}

#[test]
fn writes_to_unwritable_fields_keep_the_stored_value() {
    let schemas = fixture();
    let stored = json!({
        "title": "Old", "price": 10, "meta": { "note": "n", "score": 1 },
        "lines": [{ "_key": "k1", "label": "a", "cost": 5 }, { "_key": "k2", "label": "b", "cost": 7 }]
    });
    let mut incoming = json!({
        "title": "New", "price": 0, "meta": { "note": "m", "score": 99 },
        "value": { "amount": 2, "internal": "forged" },
        "lines": [
            { "_key": "k2", "label": "B", "cost": 0 },
            { "label": "new", "cost": 1 },
            { "_key": "k1", "label": "A", "cost": 0 }
        ]
    });
    rules(&schemas).keep_unwritable(&mut incoming, Some(&stored), &role("editor"));
    assert_eq!(
        incoming,
        json!({
            "title": "New", "price": 10, "meta": { "note": "m", "score": 1 },
            "value": { "amount": 2 },
            "lines": [
                { "_key": "k2", "label": "B", "cost": 7 },
                { "label": "new" },
                { "_key": "k1", "label": "A", "cost": 5 }
            ]
        })
    );
    // Unkeyed items pair up by position.
    let mut unkeyed = json!({ "lines": [{ "label": "x", "cost": 0 }] });
    let before = json!({ "lines": [{ "label": "a", "cost": 5 }] });
    rules(&schemas).keep_unwritable(&mut unkeyed, Some(&before), &role("editor"));
    assert_eq!(unkeyed, json!({ "lines": [{ "label": "x", "cost": 5 }] }));
    // On create there is nothing stored: the field is simply absent.
    let mut created = json!({ "title": "T", "price": 5, "meta": { "score": 2 } });
    rules(&schemas).keep_unwritable(&mut created, None, &role("viewer"));
    assert_eq!(created, json!({ "title": "T", "meta": {} }));
    // Leaving out (or nulling) a writable object keeps the unwritable values inside it.
    for left_out in [
        json!({ "title": "T" }),
        json!({ "title": "T", "meta": null }),
    ] {
        let mut incoming = left_out;
        rules(&schemas).keep_unwritable(&mut incoming, Some(&stored), &role("editor"));
        assert_eq!(
            incoming,
            json!({ "title": "T", "price": 10, "meta": { "score": 1 } })
        );
    }
    let mut nulled = json!({ "meta": null });
    rules(&schemas).keep_unwritable(
        &mut nulled,
        Some(&json!({ "meta": { "note": "n" } })),
        &role("editor"),
    );
    assert_eq!(
        nulled,
        json!({ "meta": null }),
        "nothing to keep: the write stands"
    );
    let mut admin = json!({ "price": 5 });
    rules(&schemas).keep_unwritable(&mut admin, Some(&stored), &role("admin"));
    assert_eq!(admin, json!({ "price": 5 }));
}

/// `secret` has a read rule and no update rule: an editor never sees it, so a whole-draft
/// write of theirs leaves it out, which must not erase it, and they cannot set it blind.
#[test]
fn a_field_the_caller_may_not_read_keeps_its_stored_value() {
    let schemas = fixture();
    let stored = json!({ "title": "Old", "secret": "s" });
    for incoming in [
        json!({ "title": "New" }),
        json!({ "title": "New", "secret": "forged" }),
        json!({ "title": "New", "secret": null }),
    ] {
        let mut incoming = incoming;
        rules(&schemas).keep_unwritable(&mut incoming, Some(&stored), &role("editor"));
        assert_eq!(incoming, json!({ "title": "New", "secret": "s" }));
    }
    let mut created = json!({ "title": "T", "secret": "forged" });
    rules(&schemas).keep_unwritable(&mut created, None, &role("editor"));
    assert_eq!(created, json!({ "title": "T" }));
    let mut admin = json!({ "title": "T", "secret": "new" });
    rules(&schemas).keep_unwritable(&mut admin, Some(&stored), &role("admin"));
    assert_eq!(admin, json!({ "title": "T", "secret": "new" }));
}

#[test]
fn hidden_fields_are_found_at_any_depth() {
    let schemas = fixture();
    assert!(rules(&schemas).hides_from(&role("editor")));
    assert!(!rules(&schemas).hides_from(&role("admin")));
    // Only nested (object type, array member) rules: still found.
    let nested = Schemas::new(
        parse_schemas(&json!([
            { "type": "object", "name": "money", "fields": [
                { "name": "internal", "type": "string", "access": { "read": ["admin"] } }
            ] },
            { "type": "document", "name": "a", "fields": [{ "name": "v", "type": "money" }] },
            { "type": "document", "name": "b", "fields": [
                { "name": "l", "type": "array", "of": [{ "type": "money" }] }
            ] },
            { "type": "document", "name": "c", "fields": [
                { "name": "p", "type": "number", "access": { "update": ["admin"] } }
            ] }
        ]))
        .unwrap(),
    )
    .unwrap();
    let of = |t: &str| FieldRules::compile(&nested, &nested.get(t).unwrap().fields);
    assert!(of("a").hides_from(&role("editor")));
    assert!(of("b").hides_from(&role("editor")));
    assert!(
        !of("c").hides_from(&role("editor")),
        "update rules hide nothing"
    );
}

#[test]
fn readability_follows_dotted_paths() {
    let schemas = fixture();
    let r = rules(&schemas);
    let editor = role("editor");
    assert!(r.readable(&["title"], &editor));
    assert!(!r.readable(&["secret"], &editor));
    assert!(r.readable(&["meta", "note"], &editor));
    assert!(!r.readable(&["meta", "score"], &editor));
    assert!(!r.readable(&["value", "internal"], &editor));
    assert!(r.readable(&["value", "internal"], &role("admin")));
    assert!(r.readable(&["unknown"], &editor));
}
