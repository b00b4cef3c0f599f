use cms_core::FieldLookup;
use cms_core::filter::{parse, parse_sort};
use proptest::prelude::*;
use serde_json::{Value, json};
use sqlx::postgres::PgArguments;
use sqlx::sqlite::SqliteArguments;

use super::*;

/// A post type with one field of every kind.
struct Post;

impl FieldLookup for Post {
    fn field_kind(&self, path: &[&str]) -> Option<FieldKind> {
        Some(match path {
            ["title"] | ["seo", "description"] => FieldKind::String,
            ["views"] => FieldKind::Number,
            ["featured"] => FieldKind::Boolean,
            ["date"] => FieldKind::Date,
            ["slug"] => FieldKind::Slug,
            ["author"] => FieldKind::Reference,
            ["tags"] => FieldKind::StringArray,
            ["seo"] | ["meta"] => FieldKind::Other,
            _ => return None,
        })
    }
}

fn sql(dialect: Dialect, where_: Value) -> Compiled {
    compile_filter(&parse(&where_, &Post), dialect, DataColumn::Draft, 1)
}

fn lite(where_: Value) -> Compiled {
    sql(Dialect::Sqlite, where_)
}

fn pg(where_: Value) -> Compiled {
    sql(Dialect::Postgres, where_)
}

fn text(s: &str) -> Bind {
    Bind::Text(s.into())
}

// ----- emitted SQL ------------------------------------------------------------------------

#[test]
fn constants() {
    assert_eq!(lite(json!({})).sql, "1=1");
    assert_eq!(lite(json!({ "nope": { "equals": 1 } })).sql, "1=0");
    assert_eq!(pg(json!({})).sql, "TRUE");
    assert_eq!(pg(json!([])).sql, "FALSE");
}

#[test]
fn equals_is_type_aware() {
    let c = lite(json!({ "views": { "equals": 5 } }));
    assert_eq!(
        c.sql,
        "(json_type(draft_data, '$.views') IN ('integer','real') AND json_extract(draft_data, '$.views') = $1)"
    );
    assert_eq!(c.binds, vec![Bind::Int(5)]);
    let c = lite(json!({ "featured": { "equals": true } }));
    assert_eq!(
        c.sql,
        "(json_type(draft_data, '$.featured') IN ('true','false') AND json_extract(draft_data, '$.featured') = $1)"
    );
    assert_eq!(c.binds, vec![Bind::Bool(true)]);
    let c = pg(json!({ "title": { "equals": "5" } }));
    assert_eq!(c.sql, "(draft_data #> '{title}') = $1::jsonb");
    assert_eq!(c.binds, vec![Bind::Json(json!("5"))]);
}

#[test]
fn equals_null_means_missing() {
    assert_eq!(
        lite(json!({ "title": { "equals": null } })).sql,
        "IFNULL(json_type(draft_data, '$.title'), 'null') = 'null'"
    );
    assert_eq!(
        pg(json!({ "title": { "equals": null } })).sql,
        "coalesce(jsonb_typeof((draft_data #> '{title}')), 'null') = 'null'"
    );
}

#[test]
fn not_equals_also_matches_missing() {
    let c = lite(json!({ "title": { "not_equals": "a" } }));
    assert_eq!(
        c.sql,
        "(IFNULL(json_type(draft_data, '$.title'), 'null') = 'null' OR NOT (json_type(draft_data, '$.title') = 'text' AND json_extract(draft_data, '$.title') = $1))"
    );
    assert_eq!(c.binds, vec![text("a")]);
    assert_eq!(
        pg(json!({ "title": { "not_equals": "a" } })).sql,
        "(coalesce(jsonb_typeof((draft_data #> '{title}')), 'null') = 'null' OR NOT (draft_data #> '{title}') = $1::jsonb)"
    );
}

#[test]
fn in_groups_values_by_type() {
    let c = lite(json!({ "views": { "in": [1, "1", 2.5, null] } }));
    assert_eq!(
        c.sql,
        "(IFNULL(json_type(draft_data, '$.views'), 'null') = 'null' OR ((json_type(draft_data, '$.views') IN ('integer','real') AND json_extract(draft_data, '$.views') IN ($1, $2)) OR (json_type(draft_data, '$.views') = 'text' AND json_extract(draft_data, '$.views') = $3)))"
    );
    assert_eq!(c.binds, vec![Bind::Int(1), Bind::Float(2.5), text("1")]);
    let c = pg(json!({ "views": { "in": [1, "1"] } }));
    assert_eq!(c.sql, "(draft_data #> '{views}') IN ($1::jsonb, $2::jsonb)");
    assert_eq!(c.binds, vec![Bind::Json(json!(1)), Bind::Json(json!("1"))]);
}

#[test]
fn not_in_with_and_without_null() {
    assert_eq!(
        pg(json!({ "views": { "not_in": [1, 2] } })).sql,
        "(coalesce(jsonb_typeof((draft_data #> '{views}')), 'null') = 'null' OR NOT (draft_data #> '{views}') IN ($1::jsonb, $2::jsonb))"
    );
    assert_eq!(
        pg(json!({ "views": { "not_in": [null, 2] } })).sql,
        "(coalesce(jsonb_typeof((draft_data #> '{views}')), 'null') <> 'null' AND NOT (draft_data #> '{views}') = $1::jsonb)"
    );
    assert_eq!(
        lite(json!({ "views": { "not_in": [null] } })).sql,
        "IFNULL(json_type(draft_data, '$.views'), 'null') <> 'null'"
    );
}

#[test]
fn exists() {
    assert_eq!(
        lite(json!({ "seo.description": { "exists": true } })).sql,
        "IFNULL(json_type(draft_data, '$.seo.description'), 'null') <> 'null'"
    );
    assert_eq!(
        pg(json!({ "seo.description": { "exists": false } })).sql,
        "coalesce(jsonb_typeof((draft_data #> '{seo,description}')), 'null') = 'null'"
    );
}

#[test]
fn a_sort_bounded_by_the_filter_uses_the_plain_indexed_expression_on_sqlite() {
    let views = cms_core::filter::parse_sort(&["-views"], &Post);
    let bounded = cms_core::filter::parse(&json!({ "views": { "greater_than": 3 } }), &Post);
    assert_eq!(
        compile_sort_under(&views, Dialect::Sqlite, DataColumn::Draft, &bounded),
        "json_extract(draft_data, '$.views') DESC, id ASC"
    );
    // Not bounded (or bounded with another type, or on PostgreSQL): missing values must
    // still sort as the largest.
    let unbounded = cms_core::filter::parse(&json!({ "title": { "greater_than": "a" } }), &Post);
    for (filter, dialect) in [(&unbounded, Dialect::Sqlite), (&bounded, Dialect::Postgres)] {
        let order = compile_sort_under(&views, dialect, DataColumn::Draft, filter);
        assert!(order.contains("NULLS FIRST"), "{order}");
    }
}

#[test]
fn comparisons() {
    let c = lite(json!({ "views": { "greater_than": 3 } }));
    assert_eq!(
        c.sql,
        "(json_extract(draft_data, '$.views') > $1 AND json_extract(draft_data, '$.views') < '')"
    );
    let c = pg(json!({ "views": { "less_than_equal": 3.5 } }));
    assert_eq!(
        c.sql,
        "(CASE WHEN jsonb_typeof((draft_data #> '{views}')) = 'number' THEN (draft_data #> '{views}')::numeric END) <= $1::numeric"
    );
    assert_eq!(c.binds, vec![Bind::Float(3.5)]);
    let c = lite(json!({ "date": { "greater_than_equal": "2024-01-01" } }));
    assert_eq!(
        c.sql,
        "(json_extract(draft_data, '$.date') >= $1 AND json_extract(draft_data, '$.date') >= '')"
    );
    let c = pg(json!({ "date": { "less_than": "2024-01-01" } }));
    assert_eq!(
        c.sql,
        "(jsonb_typeof((draft_data #> '{date}')) = 'string' AND (draft_data #>> '{date}') COLLATE \"C\" < $1)"
    );
    assert_eq!(c.binds, vec![text("2024-01-01")]);
}

#[test]
fn like_binds_one_pattern_per_word() {
    let c = lite(json!({ "title": { "like": "Hello  world" } }));
    assert_eq!(
        c.sql,
        "(json_type(draft_data, '$.title') = 'text' AND json_extract(draft_data, '$.title') GLOB $1 AND json_extract(draft_data, '$.title') GLOB $2)"
    );
    assert_eq!(
        c.binds,
        vec![
            text("*[Hh][Ee][Ll][Ll][Oo]*"),
            text("*[Ww][Oo][Rr][Ll][Dd]*")
        ]
    );
}

#[test]
fn string_operators_fold_case_and_take_every_character_literally() {
    let c = pg(json!({ "title": { "contains": "5%_\\*." } }));
    assert_eq!(
        c.sql,
        "(jsonb_typeof((draft_data #> '{title}')) = 'string' AND (draft_data #>> '{title}') COLLATE \"C\" ~ $1)"
    );
    assert_eq!(c.binds, vec![text("5\\u0025\\u005F\\u005C\\u002A\\u002E")]);
    assert_eq!(
        lite(json!({ "title": { "contains": "5%_\\*?[" } })).binds,
        vec![text("*5%_\\[*][?][[]*")]
    );
    assert_eq!(
        pg(json!({ "title": { "starts_with": "ß" } })).binds,
        vec![text(&format!("^{}", postgres_class("ß")))]
    );
    assert_eq!(
        lite(json!({ "title": { "ends_with": "K" } })).binds,
        vec![text("*[Kk\u{212A}]")]
    );
    // No stored string holds a NUL: nothing to bind, nothing matches.
    for dialect in [Dialect::Sqlite, Dialect::Postgres] {
        let c = sql(dialect, json!({ "title": { "contains": "a\u{0}" } }));
        assert!(c.binds.is_empty());
        assert!(c.sql == "1=0" || c.sql == "FALSE", "{}", c.sql);
    }
}

/// The bracket expression PostgreSQL gets for a character with case variants.
fn postgres_class(c: &str) -> String {
    let ch = c.chars().next().unwrap();
    let members: String = cms_core::fold::variants(ch)
        .unwrap()
        .iter()
        .map(|m| match u32::from(*m) {
            bmp @ ..=0xFFFF => format!("\\u{bmp:04X}"),
            astral => format!("\\U{astral:08X}"),
        })
        .collect();
    format!("[{members}]")
}

#[test]
fn contains_on_arrays_matches_any_element() {
    assert_eq!(
        lite(json!({ "tags": { "contains": "x" } })).sql,
        "(json_type(draft_data, '$.tags') = 'array' AND EXISTS (SELECT 1 FROM json_each(draft_data, '$.tags') AS e WHERE e.type = 'text' AND e.value GLOB $1))"
    );
    assert_eq!(
        pg(json!({ "tags": { "contains": "x" } })).sql,
        "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof((draft_data #> '{tags}')) = 'array' THEN (draft_data #> '{tags}') END) AS e(v) WHERE jsonb_typeof(e.v) = 'string' AND (e.v #>> '{}') COLLATE \"C\" ~ $1)"
    );
}

#[test]
fn slug_and_reference_compare_their_inner_value() {
    assert_eq!(
        lite(json!({ "slug": { "exists": true } })).sql,
        "IFNULL(json_type(draft_data, '$.slug.current'), 'null') <> 'null'"
    );
    assert_eq!(
        pg(json!({ "author": { "equals": "a1" } })).sql,
        "(draft_data #> '{author,_ref}') = $1::jsonb"
    );
}

#[test]
fn and_or_number_placeholders_in_order_from_the_first() {
    let filter = parse(
        &json!({ "or": [{ "title": { "equals": "a" } }, { "views": { "in": [1, 2] } }] }),
        &Post,
    );
    let c = compile_filter(&filter, Dialect::Postgres, DataColumn::Published, 4);
    assert_eq!(
        c.sql,
        "((published_data #> '{title}') = $4::jsonb OR (published_data #> '{views}') IN ($5::jsonb, $6::jsonb))"
    );
    assert_eq!(c.binds.len(), 3);
}

#[test]
fn sort_sql() {
    let keys = parse_sort(&["-views", "title", "publishedAt"], &Post);
    assert_eq!(
        compile_sort(&keys, Dialect::Sqlite, DataColumn::Draft),
        "(CASE WHEN json_type(draft_data, '$.views') IN ('integer','real') THEN json_extract(draft_data, '$.views') END) DESC NULLS FIRST, \
         (CASE WHEN json_type(draft_data, '$.title') = 'text' THEN json_extract(draft_data, '$.title') END) ASC NULLS LAST, \
         published_at ASC NULLS LAST, id ASC"
    );
    let keys = parse_sort(&["slug", "-featured"], &Post);
    assert_eq!(
        compile_sort(&keys, Dialect::Postgres, DataColumn::Published),
        "(CASE WHEN jsonb_typeof((published_data #> '{slug,current}')) = 'string' THEN (published_data #>> '{slug,current}') END) COLLATE \"C\" ASC NULLS LAST, \
         (CASE WHEN jsonb_typeof((published_data #> '{featured}')) = 'boolean' THEN (published_data #> '{featured}')::boolean END) DESC NULLS FIRST, id ASC"
    );
    assert_eq!(
        compile_sort(&[], Dialect::Sqlite, DataColumn::Draft),
        "created_at DESC, id DESC"
    );
}

// ----- no value reaches the SQL text: a whitelist of everything the SQL may contain ----------

const DECLARED: &[&str] = &[
    "title",
    "views",
    "featured",
    "date",
    "slug",
    "author",
    "tags",
    "seo",
    "meta",
    "description",
    "current",
    "_ref",
];

const WORDS: &[&str] = &[
    "AND",
    "OR",
    "NOT",
    "IN",
    "IS",
    "NULL",
    "CASE",
    "WHEN",
    "THEN",
    "END",
    "EXISTS",
    "SELECT",
    "FROM",
    "WHERE",
    "AS",
    "GLOB",
    "COLLATE",
    "TRUE",
    "FALSE",
    "IFNULL",
    "coalesce",
    "json_extract",
    "json_type",
    "json_each",
    "jsonb_typeof",
    "jsonb_array_elements",
    "jsonb",
    "numeric",
    "boolean",
    "e",
    "v",
    "value",
    "type",
    "draft_data",
    "published_data",
    "ASC",
    "DESC",
    "NULLS",
    "FIRST",
    "LAST",
    "id",
    "created_at",
    "updated_at",
    "published_at",
];

const LITERALS: &[&str] = &[
    "null", "text", "integer", "real", "true", "false", "array", "number", "string", "boolean",
    "{}", "",
];

/// A JSON path literal made of declared identifiers: `$.a.b` or `{a,b}`.
fn is_path_literal(literal: &str) -> bool {
    let segments: Vec<&str> = if let Some(rest) = literal.strip_prefix("$.") {
        rest.split('.').collect()
    } else if let Some(rest) = literal.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        rest.split(',').collect()
    } else {
        return false;
    };
    segments.iter().all(|s| DECLARED.contains(s))
}

/// Tokenizes `sql` and checks every token against the whitelist; returns the placeholder
/// numbers in order of appearance.
fn whitelisted_tokens(sql: &str) -> std::result::Result<Vec<usize>, String> {
    let chars: Vec<char> = sql.chars().collect();
    let mut placeholders = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c == ' ' {
            i += 1;
        } else if c == '\'' {
            let end = (i + 1..chars.len())
                .find(|&j| chars[j] == '\'')
                .ok_or("unterminated literal")?;
            let literal: String = chars[i + 1..end].iter().collect();
            if !LITERALS.contains(&literal.as_str()) && !is_path_literal(&literal) {
                return Err(format!("literal '{literal}'"));
            }
            i = end + 1;
        } else if c == '"' {
            if chars.get(i..i + 3) != Some(&['"', 'C', '"']) {
                return Err("quoted identifier".into());
            }
            i += 3;
        } else if c == '$' {
            i += 1;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let n: String = chars[start + 1..i].iter().collect();
            placeholders.push(n.parse().map_err(|_| "bare $")?);
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            if !WORDS.contains(&word.as_str()) && !DECLARED.contains(&word.as_str()) {
                return Err(format!("word {word}"));
            }
        } else if c == '0' || c == '1' {
            i += 1;
        } else {
            let op = [
                "#>>", "#>", "::", "<>", "<=", ">=", "=", "<", ">", "~", "(", ")", ",", ".", "1",
            ]
            .into_iter()
            .find(|op| chars[i..].starts_with(&op.chars().collect::<Vec<_>>()))
            .ok_or_else(|| format!("character {c:?}"))?;
            i += op.len();
        }
    }
    Ok(placeholders)
}

/// Every string in `value`, keys included.
fn strings(value: &Value, out: &mut Vec<String>) {
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

const FIELDS: &[&str] = &[
    "title",
    "views",
    "featured",
    "date",
    "slug",
    "author",
    "tags",
    "seo",
    "meta",
    "seo.description",
    "secret",
];

const OPERATORS: &[&str] = &[
    "equals",
    "not_equals",
    "in",
    "not_in",
    "exists",
    "greater_than",
    "greater_than_equal",
    "less_than",
    "less_than_equal",
    "like",
    "contains",
    "starts_with",
    "ends_with",
    "regex",
];

/// User text, biased towards SQL-looking and quote-bearing strings.
fn user_string() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z ']{0,6}(' OR 1=1 --|'; DROP TABLE documents; --|\\$1|%|_|\\\\)[a-z ]{0,6}",
        proptest::sample::select(&["title", "AND", "null", "text", "1=1"][..])
            .prop_map(String::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        user_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop::collection::vec(inner, 0..4).prop_map(Value::Array)
    })
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        user_string().prop_map(Value::String),
    ]
}

/// The operators that apply to a field of [`Post`], so most generated clauses are valid.
fn fitting_operators(field: &str) -> &'static [&'static str] {
    match field {
        "views" => &[
            "equals",
            "not_equals",
            "in",
            "not_in",
            "exists",
            "greater_than",
            "less_than_equal",
        ],
        "featured" => &["equals", "not_equals", "in", "not_in", "exists"],
        "tags" => &[
            "like",
            "contains",
            "starts_with",
            "ends_with",
            "exists",
            "not_in",
        ],
        "seo" | "meta" => &["exists"],
        _ => OPERATORS,
    }
}

/// A value of the shape `op` takes most of the time, anything otherwise.
fn operand(op: &'static str) -> BoxedStrategy<Value> {
    let shaped = match op {
        "in" | "not_in" => prop::collection::vec(scalar(), 0..4)
            .prop_map(Value::Array)
            .boxed(),
        "exists" => any::<bool>().prop_map(Value::Bool).boxed(),
        "greater_than" | "greater_than_equal" | "less_than" | "less_than_equal" => prop_oneof![
            any::<i64>().prop_map(Value::from),
            user_string().prop_map(Value::String),
        ]
        .boxed(),
        "like" | "contains" | "starts_with" | "ends_with" => {
            user_string().prop_map(Value::String).boxed()
        }
        _ => scalar().boxed(),
    };
    prop_oneof![4 => shaped, 1 => value()].boxed()
}

fn where_value() -> impl Strategy<Value = Value> {
    let field = prop_oneof![
        6 => proptest::sample::select(FIELDS).prop_map(String::from),
        1 => user_string(),
    ];
    let clause = field
        .prop_flat_map(|field| {
            let fitting = proptest::sample::select(fitting_operators(&field));
            (
                Just(field),
                prop_oneof![4 => fitting, 1 => proptest::sample::select(OPERATORS)],
            )
        })
        .prop_flat_map(|(field, op)| {
            operand(op).prop_map(move |value| json!({ field.clone(): { op: value } }))
        });
    clause.prop_recursive(4, 32, 4, |inner| {
        (
            proptest::sample::select(&["and", "or"][..]),
            prop::collection::vec(inner.clone(), 0..4),
            prop::collection::vec(inner, 0..3),
        )
            .prop_map(|(logic, members, siblings)| {
                let mut map = serde_json::Map::new();
                map.insert(logic.to_string(), Value::Array(members));
                for sibling in siblings {
                    if let Value::Object(entries) = sibling {
                        map.extend(entries);
                    }
                }
                Value::Object(map)
            })
    })
}

/// Characters the SQL skeleton can contain; a user string with any other can only reach
/// the SQL by leaking.
fn outside_skeleton(s: &str) -> bool {
    s.chars()
        .any(|c| !(c.is_ascii_alphanumeric() || " $.,'()=<>_\\{}#:\"".contains(c)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn compiled_sql_holds_no_user_value(where_ in where_value(), first in 1usize..5) {
        let filter = parse(&where_, &Post);
        let mut inputs = Vec::new();
        strings(&where_, &mut inputs);
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            for column in [DataColumn::Draft, DataColumn::Published] {
                let c = compile_filter(&filter, dialect, column, first);
                let placeholders = whitelisted_tokens(&c.sql)
                    .map_err(|e| TestCaseError::fail(format!("{e} in {}", c.sql)))?;
                let expected: Vec<usize> = (first..first + c.binds.len()).collect();
                prop_assert_eq!(&placeholders, &expected, "{}", c.sql);
                for s in inputs.iter().filter(|s| s.chars().count() >= 3 && outside_skeleton(s)) {
                    prop_assert!(!c.sql.contains(s.as_str()), "{s:?} leaked into {}", c.sql);
                }
            }
        }
    }

    #[test]
    fn compiled_sort_holds_only_whitelisted_tokens(spec in prop::collection::vec(
        prop_oneof![
            proptest::sample::select(FIELDS).prop_map(String::from),
            proptest::sample::select(&["-views", "-title", "createdAt", "-publishedAt", "updatedAt"][..]).prop_map(String::from),
            user_string(),
        ],
        0..6,
    )) {
        let spec_refs: Vec<&str> = spec.iter().map(String::as_str).collect();
        let keys = parse_sort(&spec_refs, &Post);
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let order = compile_sort(&keys, dialect, DataColumn::Draft);
            let placeholders = whitelisted_tokens(&order)
                .map_err(|e| TestCaseError::fail(format!("{e} in {order}")))?;
            prop_assert!(placeholders.is_empty());
        }
    }
}

#[test]
fn the_whitelist_rejects_injection() {
    assert!(whitelisted_tokens("json_extract(draft_data, '$.title') = $1").is_ok());
    assert!(whitelisted_tokens("json_extract(draft_data, '$.title'' OR 1=1 --')").is_err());
    assert!(whitelisted_tokens("title = 'x'").is_err());
    assert!(whitelisted_tokens("DROP").is_err());
    assert!(whitelisted_tokens("a; b").is_err());
}

// ----- executed on both engines ---------------------------------------------------------

/// `(id, draft_data, published_data, created_at, published_at)`.
type Row = (&'static str, Value, Option<Value>, i64, Option<i64>);

/// Eight documents that exercise types, missing values, case and wildcards.
fn rows() -> Vec<Row> {
    vec![
        (
            "d1",
            json!({ "title": "Hello World", "views": 5, "featured": true, "date": "2024-01-15",
                    "slug": { "current": "hello-world" }, "author": { "_ref": "a1" },
                    "tags": ["Rust", "SQL"], "seo": { "description": "First post" },
                    "meta": { "x": 1 } }),
            Some(json!({ "title": "Published title", "views": 1 })),
            1,
            Some(300),
        ),
        (
            "d2",
            json!({ "title": "hello there, world", "views": "5", "featured": false,
                    "date": "2024-03-01", "slug": { "current": "hello-there" },
                    "author": { "_ref": "a2" }, "tags": ["rust"],
                    "seo": { "description": null } }),
            None,
            2,
            None,
        ),
        (
            "d3",
            json!({ "title": "100% natural", "views": 10, "featured": 1, "date": "2023-12-31",
                    "tags": ["50%_off", "misc"], "meta": null }),
            None,
            3,
            Some(100),
        ),
        (
            "d4",
            json!({ "title": "100 percent", "views": 2.5, "tags": [] }),
            None,
            4,
            None,
        ),
        ("d5", json!({ "title": null, "views": null }), None, 5, None),
        ("d6", json!({}), None, 6, None),
        (
            "d7",
            json!({ "title": "under_score", "views": -1, "tags": "rust" }),
            None,
            7,
            None,
        ),
        (
            "d8",
            json!({ "title": "Back\\slash", "views": 1e2 }),
            None,
            8,
            Some(200),
        ),
    ]
}

/// `(where, matching ids)` on the draft copy.
fn filter_cases() -> Vec<(Value, &'static [&'static str])> {
    vec![
        (json!({}), &["d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"]),
        (json!({ "secret": { "equals": 1 } }), &[]),
        (
            json!({ "title": { "regex": "x" } }),
            &["d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"],
        ),
        (json!({ "title": { "equals": "Hello World" } }), &["d1"]),
        (json!({ "title": { "equals": "hello world" } }), &[]),
        (json!({ "views": { "equals": 5 } }), &["d1"]),
        (json!({ "views": { "equals": "5" } }), &["d2"]),
        (json!({ "views": { "equals": 100 } }), &["d8"]),
        (json!({ "featured": { "equals": true } }), &["d1"]),
        (json!({ "featured": { "equals": 1 } }), &["d3"]),
        (json!({ "featured": { "equals": false } }), &["d2"]),
        (json!({ "title": { "equals": null } }), &["d5", "d6"]),
        (
            json!({ "views": { "not_equals": 5 } }),
            &["d2", "d3", "d4", "d5", "d6", "d7", "d8"],
        ),
        (
            json!({ "title": { "not_equals": null } }),
            &["d1", "d2", "d3", "d4", "d7", "d8"],
        ),
        (json!({ "views": { "in": [5, 10] } }), &["d1", "d3"]),
        (json!({ "views": { "in": [5, "5"] } }), &["d1", "d2"]),
        (
            json!({ "views": { "in": [null, 10] } }),
            &["d3", "d5", "d6"],
        ),
        // A null after a value the field's column could take: the same rows (see also
        // `column_equality_binds_only_what_its_sql_uses`).
        (
            json!({ "views": { "in": [10, null] } }),
            &["d3", "d5", "d6"],
        ),
        (
            json!({ "views": { "not_in": [5, 10] } }),
            &["d2", "d4", "d5", "d6", "d7", "d8"],
        ),
        (
            json!({ "views": { "not_in": [null, 5] } }),
            &["d2", "d3", "d4", "d7", "d8"],
        ),
        (
            json!({ "title": { "exists": true } }),
            &["d1", "d2", "d3", "d4", "d7", "d8"],
        ),
        (json!({ "title": { "exists": false } }), &["d5", "d6"]),
        (json!({ "seo.description": { "exists": true } }), &["d1"]),
        (json!({ "meta": { "exists": true } }), &["d1"]),
        (
            json!({ "slug": { "exists": false } }),
            &["d3", "d4", "d5", "d6", "d7", "d8"],
        ),
        (
            json!({ "views": { "greater_than": 4 } }),
            &["d1", "d3", "d8"],
        ),
        (
            json!({ "views": { "greater_than_equal": 5 } }),
            &["d1", "d3", "d8"],
        ),
        (json!({ "views": { "less_than": 5 } }), &["d4", "d7"]),
        (
            json!({ "views": { "less_than_equal": 2.5 } }),
            &["d4", "d7"],
        ),
        (json!({ "views": { "greater_than": "4" } }), &["d2"]),
        (
            json!({ "date": { "greater_than": "2024-01-01" } }),
            &["d1", "d2"],
        ),
        (
            json!({ "date": { "less_than_equal": "2023-12-31" } }),
            &["d3"],
        ),
        (json!({ "title": { "greater_than": "a" } }), &["d2", "d7"]),
        (json!({ "title": { "like": "WORLD hello" } }), &["d1", "d2"]),
        (json!({ "title": { "like": "hello natural" } }), &[]),
        (json!({ "title": { "like": "100%" } }), &["d3"]),
        (json!({ "title": { "contains": "_" } }), &["d7"]),
        (json!({ "title": { "contains": "%" } }), &["d3"]),
        (json!({ "title": { "contains": "\\" } }), &["d8"]),
        (
            json!({ "title": { "contains": "" } }),
            &["d1", "d2", "d3", "d4", "d7", "d8"],
        ),
        (
            json!({ "title": { "starts_with": "HELLO" } }),
            &["d1", "d2"],
        ),
        (json!({ "title": { "ends_with": "WORLD" } }), &["d1", "d2"]),
        (json!({ "title": { "ends_with": "score" } }), &["d7"]),
        (json!({ "tags": { "contains": "RUST" } }), &["d1", "d2"]),
        (json!({ "tags": { "contains": "%_" } }), &["d3"]),
        (json!({ "tags": { "contains": "_" } }), &["d3"]),
        (json!({ "tags": { "like": "off 50%" } }), &["d3"]),
        (json!({ "tags": { "like": "rust misc" } }), &[]),
        (json!({ "tags": { "starts_with": "s" } }), &["d1"]),
        (json!({ "slug": { "equals": "hello-world" } }), &["d1"]),
        (json!({ "slug": { "contains": "HELLO" } }), &["d1", "d2"]),
        (json!({ "author": { "equals": "a2" } }), &["d2"]),
        (
            json!({ "author": { "not_equals": "a2" } }),
            &["d1", "d3", "d4", "d5", "d6", "d7", "d8"],
        ),
        (
            json!({ "seo.description": { "contains": "FIRST" } }),
            &["d1"],
        ),
        (
            json!({ "or": [{ "title": { "equals": "100 percent" } }, { "views": { "equals": 10 } }] }),
            &["d3", "d4"],
        ),
        (
            json!({ "and": [{ "title": { "contains": "hello" } }, { "views": { "equals": 5 } }] }),
            &["d1"],
        ),
        (
            json!({ "title": { "contains": "hello" }, "or": [{ "featured": { "equals": false } }, { "views": { "greater_than": 4 } }] }),
            &["d1", "d2"],
        ),
    ]
}

/// `(sort spec, ids in order)` on the draft copy.
fn sort_cases() -> Vec<(&'static [&'static str], &'static [&'static str])> {
    vec![
        (&[], &["d8", "d7", "d6", "d5", "d4", "d3", "d2", "d1"]),
        (
            &["views"],
            &["d7", "d4", "d1", "d3", "d8", "d2", "d5", "d6"],
        ),
        (
            &["-views"],
            &["d2", "d5", "d6", "d8", "d3", "d1", "d4", "d7"],
        ),
        (
            &["title"],
            &["d4", "d3", "d8", "d1", "d2", "d7", "d5", "d6"],
        ),
        (
            &["-publishedAt"],
            &["d2", "d4", "d5", "d6", "d7", "d1", "d8", "d3"],
        ),
        (
            &["publishedAt"],
            &["d3", "d8", "d1", "d2", "d4", "d5", "d6", "d7"],
        ),
        (
            &["featured"],
            &["d2", "d1", "d3", "d4", "d5", "d6", "d7", "d8"],
        ),
        (
            &["-slug", "createdAt"],
            &["d3", "d4", "d5", "d6", "d7", "d8", "d1", "d2"],
        ),
        (
            &["date", "-title"],
            &["d3", "d1", "d2", "d5", "d6", "d7", "d8", "d4"],
        ),
        (
            &["secret"],
            &["d8", "d7", "d6", "d5", "d4", "d3", "d2", "d1"],
        ),
    ]
}

/// One engine's way to create the fixture and run a compiled statement.
trait Engine {
    const DIALECT: Dialect;
    const JSON_TYPE: &'static str;
    async fn execute(&mut self, sql: &str, binds: Vec<Bind>);
    async fn ids(&mut self, sql: &str, binds: Vec<Bind>) -> Vec<String>;
}

impl Engine for sqlx::SqliteConnection {
    const DIALECT: Dialect = Dialect::Sqlite;
    const JSON_TYPE: &'static str = "TEXT";

    async fn execute(&mut self, sql: &str, binds: Vec<Bind>) {
        let mut args = SqliteArguments::default();
        binds
            .into_iter()
            .for_each(|b| b.add_to_sqlite(&mut args).expect("bind"));
        sqlx::query_with(sqlx::AssertSqlSafe(sql.to_string()), args)
            .execute(self)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    async fn ids(&mut self, sql: &str, binds: Vec<Bind>) -> Vec<String> {
        let mut args = SqliteArguments::default();
        binds
            .into_iter()
            .for_each(|b| b.add_to_sqlite(&mut args).expect("bind"));
        sqlx::query_scalar_with(sqlx::AssertSqlSafe(sql.to_string()), args)
            .fetch_all(self)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }
}

impl Engine for sqlx::PgConnection {
    const DIALECT: Dialect = Dialect::Postgres;
    const JSON_TYPE: &'static str = "JSONB";

    async fn execute(&mut self, sql: &str, binds: Vec<Bind>) {
        let mut args = PgArguments::default();
        binds
            .into_iter()
            .for_each(|b| b.add_to_postgres(&mut args).expect("bind"));
        sqlx::query_with(sqlx::AssertSqlSafe(sql.to_string()), args)
            .execute(self)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    async fn ids(&mut self, sql: &str, binds: Vec<Bind>) -> Vec<String> {
        let mut args = PgArguments::default();
        binds
            .into_iter()
            .for_each(|b| b.add_to_postgres(&mut args).expect("bind"));
        sqlx::query_scalar_with(sqlx::AssertSqlSafe(sql.to_string()), args)
            .fetch_all(self)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }
}

async fn create_fixture<E: Engine>(db: &mut E) {
    let json = E::JSON_TYPE;
    let create = format!(
        "CREATE TABLE documents (id TEXT PRIMARY KEY, type TEXT NOT NULL DEFAULT 'post', \
         draft_data {json} NOT NULL, published_data {json}, created_at BIGINT NOT NULL, \
         updated_at BIGINT NOT NULL, published_at BIGINT)"
    );
    db.execute(&create, vec![]).await;
    // Binds are typed by value (a NULL is text), so every column gets an explicit cast.
    let insert = format!(
        "INSERT INTO documents (id, draft_data, published_data, created_at, updated_at, published_at) \
         VALUES ($1, CAST($2 AS {json}), CAST($3 AS {json}), $4, $4, CAST($5 AS BIGINT))"
    );
    for (id, draft, published, created, published_at) in rows() {
        let published = published.map_or(Bind::Null, |v| Bind::Text(v.to_string()));
        let published_at = published_at.map_or(Bind::Null, Bind::Int);
        let binds = vec![
            text(id),
            text(&draft.to_string()),
            published,
            Bind::Int(created),
            published_at,
        ];
        db.execute(&insert, binds).await;
    }
}

/// Every field of [`Post`] with its kind.
fn post_fields() -> Vec<(Vec<String>, FieldKind)> {
    [
        ("title", FieldKind::String),
        ("seo.description", FieldKind::String),
        ("views", FieldKind::Number),
        ("featured", FieldKind::Boolean),
        ("date", FieldKind::Date),
        ("slug", FieldKind::Slug),
        ("author", FieldKind::Reference),
        ("tags", FieldKind::StringArray),
        ("meta", FieldKind::Other),
    ]
    .into_iter()
    .map(|(path, kind)| (path.split('.').map(String::from).collect(), kind))
    .collect()
}

/// Adds the field columns of every [`Post`] field (PostgreSQL), fills them and names them.
async fn add_generated_columns<E: Engine>(db: &mut E) -> GeneratedColumns {
    let columns = GeneratedColumns::default();
    for (segments, kind) in post_fields() {
        for data in [DataColumn::Draft, DataColumn::Published] {
            if let Some(g) = generated_column("post", &segments, kind, data) {
                let sql = format!("ALTER TABLE documents {}", g.add_columns().join(", "));
                db.execute(&sql, vec![]).await;
                // What the type's trigger assigns on every write (crate::field_indexes).
                for (name, value) in g.assignments() {
                    db.execute(&format!("UPDATE documents SET {name} = {value}"), vec![])
                        .await;
                }
                columns.insert(g.name);
            }
        }
    }
    columns
}

/// Runs every case and reports every failure at once; with `generated`, through the
/// generated columns.
async fn check_engine<E: Engine>(db: &mut E, with_generated: bool) {
    create_fixture(db).await;
    let columns = if with_generated {
        add_generated_columns(db).await
    } else {
        GeneratedColumns::default()
    };
    let generated = with_generated.then_some(Generated {
        doc_type: "post",
        columns: &columns,
    });
    let mut failures = Vec::new();
    for (where_, expected) in filter_cases() {
        let filter = parse(&where_, &Post);
        let c = compile_filter_with(&filter, E::DIALECT, DataColumn::Draft, 1, generated);
        if with_generated && where_.to_string().contains("greater_than\":4}") {
            assert!(
                c.sql.contains("f_"),
                "the generated column is used: {}",
                c.sql
            );
        }
        let sql = format!("SELECT id FROM documents WHERE {} ORDER BY id", c.sql);
        let got = db.ids(&sql, c.binds).await;
        if got != expected {
            failures.push(format!(
                "{where_}: expected {expected:?}, got {got:?}\n  {sql}"
            ));
        }
    }
    for (spec, expected) in sort_cases() {
        let order = compile_sort_with(
            &parse_sort(spec, &Post),
            E::DIALECT,
            DataColumn::Draft,
            &Filter::All,
            generated,
        );
        let sql = format!("SELECT id FROM documents ORDER BY {order}");
        let got = db.ids(&sql, vec![]).await;
        if got != expected {
            failures.push(format!(
                "sort {spec:?}: expected {expected:?}, got {got:?}\n  {sql}"
            ));
        }
    }
    // The published copy, after a bind of the caller's: placeholders start at 2.
    let published = parse(&json!({ "title": { "contains": "PUBLISHED" } }), &Post);
    for (column, expected) in [
        (DataColumn::Published, &["d1"][..]),
        (DataColumn::Draft, &[]),
    ] {
        let c = compile_filter_with(&published, E::DIALECT, column, 2, generated);
        let sql = format!(
            "SELECT id FROM documents WHERE id <> $1 AND {} ORDER BY id",
            c.sql
        );
        let mut binds = vec![text("d2")];
        binds.extend(c.binds);
        let got = db.ids(&sql, binds).await;
        if got != expected {
            failures.push(format!(
                "{column:?} column: expected {expected:?}, got {got:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{:?}:\n{}",
        E::DIALECT,
        failures.join("\n")
    );
}

#[tokio::test]
async fn executes_on_sqlite() {
    use sqlx::Connection;
    let mut conn = sqlx::SqliteConnection::connect("sqlite::memory:")
        .await
        .expect("sqlite");
    check_engine(&mut conn, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn executes_on_postgres() {
    crate::testing::with_database(Dialect::Postgres, |url| async move {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&url).await.expect("postgres");
        check_engine(&mut conn, false).await;
        conn.close().await.expect("close");
    })
    .await;
}

/// The same cases through the generated columns: not one result may change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn executes_on_postgres_through_generated_columns() {
    crate::testing::with_database(Dialect::Postgres, |url| async move {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&url).await.expect("postgres");
        check_engine(&mut conn, true).await;
        conn.close().await.expect("close");
    })
    .await;
}

/// A text column keeps a value's first TEXT_PREFIX characters (an index entry has a size
/// limit): values that differ only beyond the cut still compare, match and sort exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_strings_compare_exactly_through_their_cut_columns() {
    crate::testing::with_database(Dialect::Postgres, |url| async move {
        use sqlx::Connection;
        let mut db = sqlx::PgConnection::connect(&url).await.expect("postgres");
        let common = "x".repeat(super::generated::TEXT_PREFIX + 50);
        let (a, b) = (format!("{common}a"), format!("{common}b"));
        db.execute(
            &format!(
                "CREATE TABLE documents (id TEXT PRIMARY KEY, type TEXT NOT NULL DEFAULT 'post', \
                 draft_data {} NOT NULL)",
                <sqlx::PgConnection as Engine>::JSON_TYPE
            ),
            vec![],
        )
        .await;
        for (id, title) in [("a", &a), ("b", &b), ("short", &"xy".to_string())] {
            db.execute(
                "INSERT INTO documents (id, draft_data) VALUES ($1, jsonb_build_object('title', $2::text))",
                vec![text(id), text(title)],
            )
            .await;
        }
        let columns = GeneratedColumns::default();
        let segments = vec!["title".to_string()];
        let g = generated_column("post", &segments, FieldKind::String, DataColumn::Draft).unwrap();
        db.execute(&format!("ALTER TABLE documents {}", g.add_columns().join(", ")), vec![])
            .await;
        for (name, value) in g.assignments() {
            db.execute(&format!("UPDATE documents SET {name} = {value}"), vec![]).await;
        }
        columns.insert(g.name.clone());
        let generated = Some(Generated { doc_type: "post", columns: &columns });
        for (where_, expected) in [
            (json!({ "title": { "equals": a } }), &["a"][..]),
            (json!({ "title": { "equals": b } }), &["b"]),
            (json!({ "title": { "in": [a, "xy"] } }), &["a", "short"]),
            (json!({ "title": { "not_equals": a } }), &["b", "short"]),
            (json!({ "title": { "greater_than": a } }), &["b", "short"]),
            (json!({ "title": { "less_than_equal": a } }), &["a"]),
            (json!({ "title": { "less_than": b } }), &["a"]),
            (json!({ "title": { "greater_than_equal": "xx" } }), &["a", "b", "short"]),
        ] {
            let filter = parse(&where_, &Post);
            let c = compile_filter_with(&filter, Dialect::Postgres, DataColumn::Draft, 1, generated);
            assert!(c.sql.contains(&g.name), "the column is used: {}", c.sql);
            let sql = format!("SELECT id FROM documents WHERE {} ORDER BY id", c.sql);
            assert_eq!(db.ids(&sql, c.binds).await, expected, "{where_}");
        }
        let order = compile_sort_with(
            &parse_sort(&["-title"], &Post),
            Dialect::Postgres,
            DataColumn::Draft,
            &Filter::All,
            generated,
        );
        let got = db.ids(&format!("SELECT id FROM documents ORDER BY {order}"), vec![]).await;
        assert_eq!(got, ["short", "b", "a"], "{order}");
        db.close().await.expect("close");
    })
    .await;
}

/// Every bind a condition through the field columns makes is a placeholder of its SQL, in
/// order: a list whose `null` (or value of another type) rules the column out binds nothing
/// for it (found by the `where_filter` fuzz target, where the column's placeholders were bound
/// before the `null` was seen and then left out of the SQL).
#[test]
fn column_equality_binds_only_what_its_sql_uses() {
    let columns = GeneratedColumns::default();
    for (segments, kind) in post_fields() {
        if let Some(g) = generated_column("post", &segments, kind, DataColumn::Draft) {
            columns.insert(g.name);
        }
    }
    let generated = Some(Generated {
        doc_type: "post",
        columns: &columns,
    });
    for where_ in [
        json!({ "views": { "in": [10, null] } }),
        json!({ "views": { "in": [10, "10"] } }),
        json!({ "slug": { "not_in": ["a", "b", null] } }),
        json!({ "title": { "in": ["a", 5] }, "views": { "equals": 3 } }),
    ] {
        let filter = parse(&where_, &Post);
        let c = compile_filter_with(&filter, Dialect::Postgres, DataColumn::Draft, 1, generated);
        let mut used: Vec<usize> = Vec::new();
        for part in c.sql.split('$').skip(1) {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            let n: usize = digits.parse().unwrap();
            if !used.contains(&n) {
                used.push(n);
            }
        }
        let expected: Vec<usize> = (1..=c.binds.len()).collect();
        assert_eq!(used, expected, "{where_}: {}", c.sql);
    }
}
