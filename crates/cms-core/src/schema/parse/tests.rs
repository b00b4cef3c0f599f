use serde_json::json;

use super::*;

fn err(v: Value) -> String {
    Schema::from_json(&v).unwrap_err().to_string()
}

fn doc(fields: Value) -> Value {
    json!({ "type": "document", "name": "post", "fields": fields })
}

#[test]
fn parses_every_type_with_its_options() {
    let s = Schema::from_json(&doc(json!([
        { "name": "title", "type": "string", "required": true, "indexed": true,
          "minLength": 1, "maxLength": 80, "pattern": "^[A-Z]", "options": ["A", "B"] },
        { "name": "excerpt", "type": "text", "maxLength": 200 },
        { "name": "views", "type": "number", "min": 0, "max": 10.5, "integer": true },
        { "name": "ok", "type": "boolean" },
        { "name": "on", "type": "date" },
        { "name": "at", "type": "datetime" },
        { "name": "site", "type": "url" },
        { "name": "mail", "type": "email" },
        { "name": "slug", "type": "slug", "source": "title" },
        { "name": "author", "type": "reference", "to": ["author"] },
        { "name": "cover", "type": "image", "accept": ["image/*"] },
        { "name": "doc", "type": "file" },
        { "name": "tags", "type": "array", "of": [{ "type": "string" }], "maxItems": 3 },
        { "name": "seo", "type": "object", "fields": [{ "name": "t", "type": "string" }] },
        { "name": "body", "type": "block" },
        { "name": "raw", "type": "json", "access": { "read": ["admin"] } },
        { "name": "meta", "type": "seoMeta", "title": "Meta" }
    ])))
    .unwrap();
    assert_eq!(s.fields.len(), 17);
    let FieldType::String {
        max_length,
        pattern,
        options,
        ..
    } = &s.fields[0].ty
    else {
        panic!("not a string")
    };
    assert_eq!(*max_length, Some(80));
    assert_eq!(pattern.as_ref().unwrap().source(), "^[A-Z]");
    assert_eq!(
        options.as_deref(),
        Some(&["A".to_owned(), "B".to_owned()][..])
    );
    assert!(s.fields[0].required);
    assert_eq!(s.fields[0].indexed, crate::schema::Indexing::Declared);
    let FieldType::Array { of, .. } = &s.fields[12].ty else {
        panic!("not an array")
    };
    assert_eq!(
        of[0].name, "string",
        "an unnamed member is named after its type"
    );
    assert_eq!(s.fields[16].ty, FieldType::Named("seoMeta".into()));
    assert!(s.fields[15].access.read.is_some());
}

#[test]
fn parse_schemas_accepts_one_or_many() {
    let one = doc(json!([{ "name": "t", "type": "string" }]));
    assert_eq!(parse_schemas(&one).unwrap().len(), 1);
    assert_eq!(parse_schemas(&json!([one, one])).unwrap().len(), 2);
    let e = parse_schemas(&json!([one, { "type": "document" }])).unwrap_err();
    assert_eq!(e.to_string(), "schema 2 of the list: name is required");
}

#[test]
fn schema_level_errors() {
    assert_eq!(err(json!([])), "a schema must be a JSON object");
    assert!(err(json!({ "type": "document", "name": "a-b", "fields": [] })).contains("^[A-Za-z_]"));
    assert_eq!(
        err(json!({ "type": "page", "name": "p", "fields": [] })),
        "schema \"p\": type must be \"document\" or \"object\""
    );
    assert_eq!(
        err(json!({ "type": "document", "name": "p", "fields": [], "titel": "x" })),
        "schema \"p\": unknown key \"titel\" for a schema"
    );
    assert_eq!(
        err(doc(json!([]))),
        "schema \"post\": fields must not be empty"
    );
    assert_eq!(
        err(json!({ "type": "document", "name": "p" })),
        "schema \"p\": fields is required"
    );
    assert_eq!(
        err(json!({ "type": "document", "name": "p", "singleton": "yes", "fields": [] })),
        "schema \"p\": singleton must be true or false"
    );
    assert_eq!(
        err(json!({ "type": "document", "name": "p", "access": [], "fields": [] })),
        "schema \"p\": access must be an object"
    );
}

#[test]
fn access_rules_are_typed_and_bad_shapes_name_schema_and_field() {
    let s = Schema::from_json(&json!({ "type": "document", "name": "p",
        "access": { "publish": ["admin"] },
        "fields": [{ "name": "t", "type": "string", "access": { "read": ["editor"] } }] }))
    .unwrap();
    assert!(s.access.rule(super::super::Operation::Publish).is_some());
    assert!(
        s.fields[0]
            .access
            .read
            .as_ref()
            .unwrap()
            .allows(Some("editor"))
    );
    assert_eq!(
        err(
            json!({ "type": "document", "name": "p", "access": { "archive": [] },
            "fields": [{ "name": "t", "type": "string" }] })
        ),
        "schema \"p\": access: unknown operation \"archive\" (expected read, create, update, delete, publish, unpublish)"
    );
    let nested = |access: Value| {
        doc(json!([{ "name": "seo", "type": "object", "fields": [
            { "name": "t", "type": "string", "access": access }
        ] }]))
    };
    assert_eq!(
        err(nested(json!({ "publish": ["admin"] }))),
        "schema \"post\", field \"seo.t\": access: unknown operation \"publish\" (expected read, update)"
    );
    assert_eq!(
        err(nested(json!({ "read": "admin" }))),
        "schema \"post\", field \"seo.t\": access.read must be an array of role names (policy functions are registered in Rust)"
    );
    assert_eq!(
        err(nested(json!({ "update": [1] }))),
        "schema \"post\", field \"seo.t\": access.update[0] must be a string (a role name)"
    );
    assert!(
        err(
            json!({ "type": "object", "name": "o", "access": { "read": [] },
            "fields": [{ "name": "t", "type": "string" }] })
        )
        .starts_with("schema \"o\": access applies to document schemas")
    );
    assert_eq!(
        err(doc(json!([{ "name": "tags", "type": "array",
            "of": [{ "type": "string", "access": { "read": [] } }] }]))),
        "schema \"post\", field \"tags[]\": access has no meaning on an array member"
    );
}

#[test]
fn field_errors_name_the_field_path() {
    let nested = |f: Value| doc(json!([{ "name": "seo", "type": "object", "fields": [f] }]));
    assert_eq!(
        err(nested(
            json!({ "name": "title", "type": "string", "maxLength": -1 })
        )),
        "schema \"post\", field \"seo.title\": maxLength must be a non-negative integer"
    );
    assert_eq!(
        err(doc(
            json!([{ "name": "tags", "type": "array", "of": [{ "type": "string", "min": 1 }] }])
        )),
        "schema \"post\", field \"tags[]\": unknown option \"min\" for a string field"
    );
    assert_eq!(
        err(doc(json!([{ "type": "string" }]))),
        "schema \"post\": field 1 has no name"
    );
    assert_eq!(
        err(nested(json!({ "type": "string" }))),
        "schema \"post\", field \"seo\": field 1 has no name"
    );
    assert_eq!(
        err(doc(json!([{ "name": "a.b", "type": "string" }]))),
        format!("schema \"post\", field \"a.b\": {}", bad_name_message())
    );
    assert_eq!(
        err(doc(json!([{ "name": "x" }]))),
        "schema \"post\", field \"x\": type is required and must be a string"
    );
    assert_eq!(
        err(doc(json!([{ "name": "x", "type": "my-type" }]))),
        "schema \"post\", field \"x\": \"my-type\" is not a type name"
    );
}

#[test]
fn options_apply_only_to_their_types() {
    let cases = [
        (
            json!({ "name": "x", "type": "string", "min": 1 }),
            "unknown option \"min\" for a string field",
        ),
        (
            json!({ "name": "x", "type": "number", "maxLength": 1 }),
            "unknown option \"maxLength\" for a number field",
        ),
        (
            json!({ "name": "x", "type": "text", "pattern": "a" }),
            "unknown option \"pattern\" for a text field",
        ),
        (
            json!({ "name": "x", "type": "string", "maxLenght": 1 }),
            "unknown option \"maxLenght\" for a string field",
        ),
        (
            json!({ "name": "x", "type": "boolean", "options": ["a"] }),
            "unknown option \"options\" for a boolean field",
        ),
        (
            json!({ "name": "x", "type": "seo", "fields": [] }),
            "unknown option \"fields\" for a seo field",
        ),
    ];
    for (field, message) in cases {
        assert_eq!(
            err(doc(json!([field]))),
            format!("schema \"post\", field \"x\": {message}")
        );
    }
}

#[test]
fn option_values_are_checked() {
    let cases = [
        (
            json!({ "type": "string", "minLength": 5, "maxLength": 2 }),
            "minLength is greater than maxLength",
        ),
        (
            json!({ "type": "string", "maxLength": 1.5 }),
            "maxLength must be a non-negative integer",
        ),
        (
            json!({ "type": "string", "pattern": "(" }),
            "pattern is not a valid regular expression",
        ),
        (
            json!({ "type": "string", "pattern": 3 }),
            "pattern must be a string",
        ),
        (
            json!({ "type": "string", "options": [] }),
            "options must be a non-empty array of strings",
        ),
        (
            json!({ "type": "string", "options": [1] }),
            "options must be a non-empty array of strings",
        ),
        (
            json!({ "type": "number", "min": "0" }),
            "min must be a number",
        ),
        (
            json!({ "type": "number", "min": 2, "max": 1 }),
            "min is greater than max",
        ),
        (
            json!({ "type": "number", "integer": 1 }),
            "integer must be true or false",
        ),
        (
            json!({ "type": "slug", "source": "a b" }),
            "source must be a field name",
        ),
        (json!({ "type": "reference" }), "to is required"),
        (
            json!({ "type": "reference", "to": "author" }),
            "to must be an array of type names",
        ),
        (
            json!({ "type": "reference", "to": ["a-b"] }),
            "to: \"a-b\" is not a type name",
        ),
        (
            json!({ "type": "image", "accept": ["png"] }),
            "accept: \"png\" is not a MIME pattern",
        ),
        (json!({ "type": "array" }), "of is required"),
        (json!({ "type": "array", "of": [] }), "of must not be empty"),
        (
            json!({ "type": "array", "of": [{ "type": "string" }], "minItems": 3, "maxItems": 1 }),
            "minItems is greater than maxItems",
        ),
        (
            json!({ "type": "object", "fields": {} }),
            "fields must be an array of field definitions",
        ),
        (
            json!({ "type": "string", "required": "yes" }),
            "required must be true or false",
        ),
        (
            json!({ "type": "string", "title": 1 }),
            "title must be a string",
        ),
    ];
    for (mut field, message) in cases {
        field["name"] = json!("x");
        let got = err(doc(json!([field])));
        assert!(got.starts_with("schema \"post\", field \"x\": "), "{got}");
        assert!(got.contains(message), "{got} should contain {message}");
    }
}

#[test]
fn array_members_take_no_field_flags() {
    let e = err(doc(json!([{ "name": "tags", "type": "array",
        "of": [{ "type": "string", "required": true }] }])));
    assert_eq!(
        e,
        "schema \"post\", field \"tags[]\": required has no meaning on an array member"
    );
    let e = err(doc(json!([{ "name": "tags", "type": "array",
        "of": [{ "type": "object", "fields": [{ "name": "n", "type": "number", "max": "1" }] }] }])));
    assert_eq!(
        e,
        "schema \"post\", field \"tags[].n\": max must be a number"
    );
}

#[test]
fn mime_patterns() {
    for ok in ["image/*", "image/png", "application/vnd.ms-excel", "*/*"] {
        assert!(is_mime_pattern(ok), "{ok}");
    }
    for bad in ["png", "image/", "/png", "image png/x", "a/b/c"] {
        assert!(!is_mime_pattern(bad), "{bad}");
    }
}

#[test]
fn preview_url_is_a_checked_template_on_document_schemas() {
    let fields = json!([{ "name": "slug", "type": "slug" }]);
    let parsed = Schema::from_json(&json!({
        "type": "document", "name": "post", "fields": fields,
        "previewUrl": "https://www.example.com/{type}/{slug}?preview={token}&id={id}"
    }))
    .unwrap();
    assert_eq!(
        parsed.preview_url.as_ref().map(|u| u.as_str()),
        Some("https://www.example.com/{type}/{slug}?preview={token}&id={id}")
    );
    assert_eq!(
        parsed.to_json()["previewUrl"],
        json!("https://www.example.com/{type}/{slug}?preview={token}&id={id}")
    );
    assert_eq!(Schema::from_json(&parsed.to_json()).unwrap(), parsed);
    assert_eq!(
        parsed.first_slug_field().map(|f| f.name.as_str()),
        Some("slug")
    );
    assert!(
        Schema::from_json(&doc(fields.clone()))
            .unwrap()
            .preview_url
            .is_none()
    );
    assert_eq!(
        err(
            json!({ "type": "document", "name": "p", "fields": fields.clone(),
                    "previewUrl": "https://x.test/{draft}" })
        ),
        "schema \"p\": previewUrl has an unknown placeholder `{draft}` (known: {id}, {slug}, {token}, {type})"
    );
    assert_eq!(
        err(
            json!({ "type": "document", "name": "p", "fields": fields.clone(),
                    "previewUrl": "mailto:x@example.com?{id}" })
        ),
        "schema \"p\": previewUrl must be an http:// or https:// URL template"
    );
    assert_eq!(
        err(json!({ "type": "document", "name": "p", "fields": fields.clone(), "previewUrl": 3 })),
        "schema \"p\": previewUrl must be a string"
    );
    assert_eq!(
        err(json!({ "type": "object", "name": "p", "fields": fields,
                    "previewUrl": "https://x.test/{id}" })),
        "schema \"p\": previewUrl is only allowed on document schemas"
    );
}
