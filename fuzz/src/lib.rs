//! What the fuzz targets share: the registered schemas and the checks of compiled SQL.
//! docs/DECISIONS.md "Fuzzing" lists the targets and the invariants each one checks.

use std::sync::OnceLock;

use cms_core::schema::{demo_schemas, parse_schemas};
use cms_core::{Locales, Schemas};
use serde_json::{Value, json};

/// The demo schemas plus one document type with a field of every kind the `where` language
/// tells apart, nested objects (`seo.description`), arrays and an indexed path inside an
/// object, so dotted paths and every operator/kind pair are reachable.
pub fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let mut list = demo_schemas();
        let extra = json!([
            { "type": "object", "name": "seoMeta", "fields": [
                { "name": "description", "type": "string", "indexed": true },
                { "name": "score", "type": "number" }
            ] },
            { "type": "document", "name": "fuzzDoc", "fields": [
                { "name": "title", "type": "string", "indexed": true, "required": true,
                  "minLength": 1, "maxLength": 40, "pattern": "^[a-z ]*$" },
                { "name": "views", "type": "number", "indexed": true, "min": 0, "max": 1000000 },
                { "name": "featured", "type": "boolean" },
                { "name": "day", "type": "date", "indexed": true },
                { "name": "at", "type": "datetime" },
                { "name": "site", "type": "url" },
                { "name": "mail", "type": "email" },
                { "name": "slug", "type": "slug", "source": "title" },
                { "name": "author", "type": "reference", "to": ["author"] },
                { "name": "tags", "type": "array", "of": [{ "type": "string" }], "maxItems": 5 },
                { "name": "seo", "type": "seoMeta" },
                { "name": "meta", "type": "object", "fields": [
                    { "name": "note", "type": "text" },
                    { "name": "rank", "type": "number", "indexed": true }
                ] },
                { "name": "status", "type": "string", "options": ["draft", "live"] },
                { "name": "extra", "type": "json" },
                { "name": "headline", "type": "string", "localized": true, "indexed": true },
                { "name": "lead", "type": "object", "localized": true, "fields": [
                    { "name": "score", "type": "number", "indexed": true }
                ] }
            ] }
        ]);
        list.extend(parse_schemas(&extra).expect("the fuzz schemas parse"));
        // Two locales, one with a subtag: localized paths hold `de-AT` as a segment.
        let locales = Locales::new(&["en".into(), "de-AT".into()], None, &Default::default())
            .expect("the fuzz locales");
        Schemas::new(list)
            .expect("the fuzz schemas register")
            .with_locales(locales)
    })
}

/// The document types the targets run every input against.
pub fn document_types() -> Vec<&'static str> {
    schemas().documents().map(|s| s.name.as_str()).collect()
}

/// Every string in `value`, object keys included.
pub fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                strings(v, out);
            }
        }
        _ => {}
    }
}

/// Characters the SQL skeleton itself is written with (keywords, declared identifiers, path
/// literals, placeholders). A user string with any other character can be in the SQL text only
/// by leaking into it; the same rule as `filter_sql`'s own property test.
pub fn outside_skeleton(s: &str) -> bool {
    s.chars()
        .any(|c| !(c.is_ascii_alphanumeric() || " $.,'()=<>_\\{}#:\"".contains(c)))
}

/// The only literals the compiled SQL may hold: JSON type names, `ESCAPE '\'`, the empty
/// object/string, a declared document type name (`type = 'post'`) and JSON paths made of
/// identifiers and configured locale tags (`'$.seo.description'`, `'{headline,de-AT}'`).
fn literal_allowed(literal: &str) -> bool {
    const LITERALS: &[&str] = &[
        "null", "text", "integer", "real", "true", "false", "array", "number", "string", "boolean",
        "object", "\\", "{}", "", "[]",
    ];
    if LITERALS.contains(&literal) || document_types().contains(&literal) {
        return true;
    }
    let segments: Vec<&str> = if let Some(rest) = literal.strip_prefix("$.") {
        rest.split('.').collect()
    } else if let Some(rest) = literal.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        rest.split(',').collect()
    } else {
        return false;
    };
    let locales = schemas().locales();
    segments
        .iter()
        .all(|s| is_identifier(s) || locales.available().iter().any(|t| t.as_str() == *s))
}

fn is_identifier(segment: &str) -> bool {
    let mut bytes = segment.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Checks `sql` compiled from `input`: every quoted literal is an allowed one, placeholders
/// (`$n` outside literals) are, in order of first use, exactly `first..first + binds`, and no user string
/// that could not be part of the skeleton appears in the text. Panics (a fuzz finding) with
/// the reason otherwise.
pub fn check_sql(sql: &str, input: &Value, first: usize, binds: usize) {
    let chars: Vec<char> = sql.chars().collect();
    let mut placeholders = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\'' => {
                let end = (i + 1..chars.len())
                    .find(|&j| chars[j] == '\'')
                    .unwrap_or_else(|| panic!("unterminated literal in {sql}"));
                let literal: String = chars[i + 1..end].iter().collect();
                assert!(
                    literal_allowed(&literal),
                    "literal '{literal}' in {sql} (from {input})"
                );
                i = end + 1;
            }
            '$' => {
                let start = i + 1;
                i = start;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
                let n: String = chars[start..i].iter().collect();
                placeholders.push(
                    n.parse::<usize>()
                        .unwrap_or_else(|_| panic!("bare $ in {sql}")),
                );
            }
            _ => i += 1,
        }
    }
    // A placeholder may be used again (a generated column compares the float8 key and the
    // exact numeric with one bind); in order of first use they are exactly the binds.
    let mut distinct: Vec<usize> = Vec::new();
    for n in placeholders {
        if !distinct.contains(&n) {
            distinct.push(n);
        }
    }
    let expected: Vec<usize> = (first..first + binds).collect();
    assert_eq!(distinct, expected, "placeholders of {sql}");
    let mut inputs = Vec::new();
    strings(input, &mut inputs);
    for s in inputs
        .iter()
        .filter(|s| s.chars().count() >= 3 && outside_skeleton(s))
    {
        assert!(!sql.contains(s.as_str()), "{s:?} leaked into {sql}");
    }
}
