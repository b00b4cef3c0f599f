//! Schemas and document data: bytes -> JSON -> `Schema::from_json`, `parse_schemas` and
//! `Schemas::new` (the input as a schema file), and `check_structure` / `validate_for_publish`
//! / `references` (the input as a document of every registered type, and of every type the
//! input itself declares when it registers); the input read in every locale and written in
//! every locale over itself (`localize`, `write_locale`); the input in its stored form
//! (`normalize`).
//! Invariants: no panic; publish validation reports every issue the structure check reports
//! (CONTRACT.md section 2: publishing checks everything a save checks, and more).
#![no_main]

use cms_core::Schemas;
use cms_core::schema::{Schema, parse_schemas};
use cms_fuzz::{document_types, schemas};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn validate(schemas: &Schemas, doc_type: &str, data: &Value) {
    let structure = schemas.check_structure(doc_type, data);
    let publish = schemas.validate_for_publish(doc_type, data);
    for issue in &structure {
        assert!(
            publish.contains(issue),
            "{doc_type}: structure issue {issue:?} missing from publish issues {publish:?} for {data}"
        );
    }
    let _ = schemas.references(doc_type, data);
}

/// The input as stored data read in each locale, and as a write in each locale over itself:
/// no panic, and what a write stores is judged like any stored data.
fn localize(doc_type: &str, value: &Value) {
    let locales = schemas().locales();
    for tag in locales.available() {
        let mut shown = value.clone();
        let _ = schemas().localize(doc_type, &mut shown, &locales.chain(tag));
        let written = schemas().write_locale(doc_type, Some(value), value, tag);
        validate(schemas(), doc_type, &written);
    }
}

/// The input given its stored form (datetimes in UTC): no panic, a second pass changes
/// nothing, and the checks judge it exactly as they judged the input (normalizing rewrites
/// readable datetimes into readable datetimes, nothing else).
fn normalize(doc_type: &str, value: &Value) {
    let mut stored = value.clone();
    schemas().normalize(doc_type, &mut stored);
    let mut again = stored.clone();
    schemas().normalize(doc_type, &mut again);
    assert_eq!(
        again, stored,
        "{doc_type}: normalizing twice differs for {value}"
    );
    assert_eq!(
        schemas().check_structure(doc_type, &stored),
        schemas().check_structure(doc_type, value),
        "{doc_type}: structure issues changed by normalizing {value}"
    );
    assert_eq!(
        schemas().validate_for_publish(doc_type, &stored),
        schemas().validate_for_publish(doc_type, value),
        "{doc_type}: publish issues changed by normalizing {value}"
    );
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let _ = Schema::from_json(&value);
    if let Ok(list) = parse_schemas(&value) {
        if let Ok(declared) = Schemas::new(list) {
            let names: Vec<String> = declared.all().iter().map(|s| s.name.clone()).collect();
            for name in &names {
                validate(&declared, name, &Value::Null);
                validate(&declared, name, &serde_json::json!({}));
                if let Some(fields) = declared.fields(name) {
                    let _ = fields.indexed_paths();
                }
            }
        }
    }
    for doc_type in document_types() {
        validate(schemas(), doc_type, &value);
        localize(doc_type, &value);
        normalize(doc_type, &value);
        // The same value one level down, where object fields take their data.
        if let Value::Object(map) = &value {
            for inner in map.values() {
                validate(schemas(), doc_type, inner);
            }
        }
    }
});
