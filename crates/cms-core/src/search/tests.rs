use serde_json::json;

use super::*;
use crate::locale::Locales;
use crate::schema::{Schemas, parse_schemas};

fn words(text: &str) -> Vec<String> {
    tokenize(text)
}

#[test]
fn tokens_fold_case_and_diacritics_and_split_on_punctuation() {
    assert_eq!(words("Hello, World!"), ["hello", "world"]);
    assert_eq!(words("Café CRÈME brûlée"), ["cafe", "creme", "brulee"]);
    assert_eq!(
        words("don't e-mail x.y"),
        ["don", "t", "e", "mail", "x", "y"]
    );
    assert_eq!(words("ﬁne Ⅻ ＡＢＣ"), ["fine", "xii", "abc"]);
    assert_eq!(words("  ... !!! "), Vec::<String>::new());
    assert_eq!(words("3.14 v2"), ["3", "14", "v2"]);
    // Marks of other scripts belong to their letters and stay.
    assert_eq!(words("हिन्दी"), ["हिन्दी"]);
    // Ideographs are one word each (UAX #29 without a dictionary).
    assert_eq!(words("中文"), ["中", "文"]);
    assert_eq!(words("İstanbul ΣΊΣΥΦΟΣ"), ["istanbul", "σισυφοσ"]);
}

#[test]
fn long_tokens_are_cut_on_a_character_boundary() {
    let long = "é".repeat(200);
    let tokens = words(&long);
    assert_eq!(tokens.len(), 1);
    assert!(tokens[0].len() <= MAX_TOKEN_BYTES);
    let long = "ж".repeat(200);
    let token = &words(&long)[0];
    assert_eq!(token.len(), MAX_TOKEN_BYTES);
    assert!(token.chars().all(|c| c == 'ж'));
}

fn term(tokens: &[&str], negated: bool) -> SearchTerm {
    SearchTerm {
        tokens: tokens.iter().map(|t| t.to_string()).collect(),
        negated,
    }
}

#[test]
fn queries_hold_words_phrases_and_exclusions() {
    let q = SearchQuery::parse(r#"  Rust "Fast Web"  -slow -"old news" don't "#).unwrap();
    assert_eq!(
        q.terms(),
        [
            term(&["rust"], false),
            term(&["fast", "web"], false),
            term(&["slow"], true),
            term(&["old", "news"], true),
            term(&["don", "t"], false),
        ]
    );
    assert!(q.terms()[1].is_phrase());
    assert_eq!(q.required().count(), 3);
    assert_eq!(q.excluded().count(), 2);
    // An unterminated quote runs to the end; repeats count once; punctuation is dropped.
    let q = SearchQuery::parse(r#"a a ... "b c"#).unwrap();
    assert_eq!(q.terms(), [term(&["a"], false), term(&["b", "c"], false)]);
    // A hyphen inside a word is not an exclusion.
    let q = SearchQuery::parse("x-ray").unwrap();
    assert_eq!(q.terms(), [term(&["x", "ray"], false)]);
}

#[test]
fn empty_and_exclusion_only_searches_are_refused() {
    assert_eq!(SearchQuery::parse(""), Err(SearchError::Empty));
    assert_eq!(SearchQuery::parse("  \"\" ... -"), Err(SearchError::Empty));
    assert_eq!(
        SearchQuery::parse("-a -\"b c\""),
        Err(SearchError::OnlyExclusions)
    );
    let many = (0..=MAX_TERMS).map(|i| format!("w{i}")).collect::<Vec<_>>();
    assert_eq!(
        SearchQuery::parse(&many.join(" ")),
        Err(SearchError::TooManyTerms)
    );
    assert_eq!(
        SearchQuery::parse(&"a".repeat(MAX_SEARCH_CHARS + 1)),
        Err(SearchError::TooLong)
    );
}

#[test]
fn the_exact_key_is_the_required_words_in_order() {
    let q = SearchQuery::parse("Hello -bye \"big World\"").unwrap();
    assert_eq!(q.exact_key(), exact_key(&words("hello big world")));
    assert_ne!(q.exact_key(), exact_key(&words("big world hello")));
}

fn schemas() -> Schemas {
    let declared = json!([
        { "type": "object", "name": "seo", "fields": [
            { "name": "description", "type": "text", "searchable": true }
        ]},
        { "type": "document", "name": "post", "fields": [
            { "name": "title", "type": "string", "searchable": true, "localized": true },
            { "name": "body", "type": "block", "searchable": true },
            { "name": "note", "type": "string" },
            { "name": "meta", "type": "object", "localized": true, "fields": [
                { "name": "summary", "type": "string", "searchable": true }
            ]},
            { "name": "seo", "type": "seo" }
        ]}
    ]);
    Schemas::new(parse_schemas(&declared).unwrap())
        .unwrap()
        .with_locales(Locales::new(&["en".into(), "de".into()], None, &Default::default()).unwrap())
}

#[test]
fn rows_cover_searchable_fields_per_locale() {
    let schemas = schemas();
    assert_eq!(
        searchable_paths(&schemas, "post"),
        ["title", "body", "meta.summary", "seo.description"]
    );
    let data = json!({
        "title": { "en": "Hello World", "de": "Hallo Welt" },
        "body": [
            { "_type": "block", "children": [
                { "_type": "span", "text": "Sun" }, { "_type": "span", "text": "shine here" }
            ]},
            { "_type": "image", "alt": "not text" },
            { "_type": "block", "children": [{ "_type": "span", "text": "next" }] }
        ],
        "note": "not searchable",
        "meta": { "de": { "summary": "Kurz" } },
        "seo": { "description": "Plain" }
    });
    let rows = schemas.search_rows("post", &data);
    let seen: Vec<(&str, &str, Vec<&str>)> = rows
        .iter()
        .map(|r| {
            (
                r.locale.as_str(),
                r.path.as_str(),
                r.tokens.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("de", "title", vec!["hallo", "welt"]),
            ("en", "title", vec!["hello", "world"]),
            ("", "body", vec!["sunshine", "here", "next"]),
            ("de", "meta.summary", vec!["kurz"]),
            ("", "seo.description", vec!["plain"]),
        ]
    );
    assert_eq!(rows[1].exact, exact_key(&words("hello world")));
    assert!(rows[0].weight > rows[2].weight, "shorter fields weigh more");
}

#[test]
fn long_values_are_indexed_in_overlapping_chunks() {
    let schemas = schemas();
    let text: Vec<String> = (0..2500).map(|i| format!("w{i}")).collect();
    let data = json!({ "seo": { "description": text.join(" ") } });
    let rows = schemas.search_rows("post", &data);
    assert_eq!(rows.len(), 3);
    let step = CHUNK_TOKENS - CHUNK_OVERLAP;
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.chunk, i as i64);
        assert_eq!(row.tokens[0], format!("w{}", i * step));
        assert_eq!(row.weight, rows::weight(2500));
    }
    assert_eq!(rows[2].tokens.last().unwrap(), "w2499");
    assert_eq!(rows[0].tokens.len(), CHUNK_TOKENS);
}
