use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::field_kind::FieldLookup;

/// A document type with one field of every kind, one nested object and one nested field.
struct Post;

impl FieldLookup for Post {
    fn field_kind(&self, path: &[&str]) -> Option<FieldKind> {
        Some(match path {
            ["title"] | ["body"] | ["seo", "description"] => FieldKind::String,
            ["views"] => FieldKind::Number,
            ["featured"] => FieldKind::Boolean,
            ["date"] | ["at"] => FieldKind::Date,
            ["slug"] => FieldKind::Slug,
            ["author"] => FieldKind::Reference,
            ["tags"] => FieldKind::StringArray,
            ["seo"] | ["meta"] => FieldKind::Other,
            ["createdAt"] => FieldKind::String,
            _ => return None,
        })
    }

    fn is_datetime(&self, path: &[&str]) -> bool {
        path == ["at"]
    }
}

fn p(where_: Value) -> Filter {
    parse(&where_, &Post)
}

/// The single condition `where_` parses to.
fn op(where_: Value) -> Op {
    match p(where_) {
        Filter::Cond(c) => c.op,
        other => panic!("expected one condition, got {other:?}"),
    }
}

fn s(v: &str) -> Scalar {
    Scalar::String(v.into())
}

fn n(v: i64) -> Scalar {
    Scalar::Number(v.into())
}

// ----- whole clause ---------------------------------------------------------------------------

#[test]
fn absent_and_empty_where_match_everything() {
    assert_eq!(p(Value::Null), Filter::All);
    assert_eq!(p(json!({})), Filter::All);
}

#[test]
fn non_object_where_matches_nothing() {
    for v in [
        json!([]),
        json!("title"),
        json!(1),
        json!(true),
        json!([{}]),
    ] {
        assert_eq!(p(v), Filter::Nothing);
    }
}

#[test]
fn condition_carries_path_and_kind() {
    let Filter::Cond(c) = p(json!({ "seo.description": { "equals": "x" } })) else {
        panic!("not a condition");
    };
    assert_eq!(c.path.segments(), ["seo", "description"]);
    assert_eq!(c.path.dotted(), "seo.description");
    assert_eq!(c.kind, FieldKind::String);
    assert_eq!(c.op, Op::Equals(s("x")));
}

// ----- operators ------------------------------------------------------------------------------

#[test]
fn equals_takes_every_scalar() {
    assert_eq!(
        op(json!({ "title": { "equals": "a" } })),
        Op::Equals(s("a"))
    );
    assert_eq!(op(json!({ "views": { "equals": 5 } })), Op::Equals(n(5)));
    assert_eq!(
        op(json!({ "featured": { "equals": true } })),
        Op::Equals(Scalar::Bool(true))
    );
    assert_eq!(
        op(json!({ "title": { "equals": null } })),
        Op::Equals(Scalar::Null)
    );
    // Exact and type-aware: a string on a number field is a valid clause that matches nothing.
    assert_eq!(
        op(json!({ "views": { "equals": "5" } })),
        Op::Equals(s("5"))
    );
}

#[test]
fn equals_with_array_or_object_is_malformed() {
    assert_eq!(p(json!({ "title": { "equals": ["a"] } })), Filter::Nothing);
    assert_eq!(
        p(json!({ "title": { "equals": { "a": 1 } } })),
        Filter::Nothing
    );
    assert_eq!(p(json!({ "title": { "not_equals": [] } })), Filter::Nothing);
}

#[test]
fn not_equals() {
    assert_eq!(
        op(json!({ "title": { "not_equals": "a" } })),
        Op::NotEquals(s("a"))
    );
    assert_eq!(
        op(json!({ "slug": { "not_equals": "a" } })),
        Op::NotEquals(s("a"))
    );
}

#[test]
fn in_and_not_in_take_arrays_of_scalars() {
    assert_eq!(
        op(json!({ "title": { "in": ["a", 1, null, false] } })),
        Op::In(vec![s("a"), n(1), Scalar::Null, Scalar::Bool(false)])
    );
    assert_eq!(
        op(json!({ "author": { "not_in": ["x"] } })),
        Op::NotIn(vec![s("x")])
    );
}

#[test]
fn in_without_array_is_malformed() {
    for clause in [json!("a"), json!(1), json!(null), json!({}), json!([["a"]])] {
        assert_eq!(
            p(json!({ "title": { "in": clause.clone() } })),
            Filter::Nothing
        );
        assert_eq!(p(json!({ "title": { "not_in": clause } })), Filter::Nothing);
    }
}

#[test]
fn empty_lists_are_constants() {
    assert_eq!(p(json!({ "title": { "in": [] } })), Filter::Nothing);
    assert_eq!(p(json!({ "title": { "not_in": [] } })), Filter::All);
}

#[test]
fn exists_takes_a_boolean_on_every_kind() {
    assert_eq!(op(json!({ "title": { "exists": true } })), Op::Exists(true));
    assert_eq!(
        op(json!({ "meta": { "exists": false } })),
        Op::Exists(false)
    );
    assert_eq!(op(json!({ "tags": { "exists": true } })), Op::Exists(true));
    for v in [json!("true"), json!(1), json!(null)] {
        assert_eq!(p(json!({ "title": { "exists": v } })), Filter::Nothing);
    }
}

#[test]
fn comparisons_take_numbers_and_strings() {
    let cases = [
        ("greater_than", Op::GreaterThan as fn(Comparand) -> Op),
        ("greater_than_equal", Op::GreaterThanEqual),
        ("less_than", Op::LessThan),
        ("less_than_equal", Op::LessThanEqual),
    ];
    for (name, make) in cases {
        assert_eq!(
            op(json!({ "views": { name: 3 } })),
            make(Comparand::Number(3.into()))
        );
        assert_eq!(
            op(json!({ "date": { name: "2024-01-01" } })),
            make(Comparand::String("2024-01-01".into()))
        );
        assert_eq!(
            op(json!({ "title": { name: "m" } })),
            make(Comparand::String("m".into()))
        );
        for bad in [json!(true), json!(null), json!([1]), json!({})] {
            assert_eq!(p(json!({ "views": { name: bad } })), Filter::Nothing);
        }
        for kind_without_order in ["featured", "tags", "meta"] {
            assert_eq!(
                p(json!({ kind_without_order: { name: 1 } })),
                Filter::Nothing
            );
        }
    }
}

#[test]
fn like_splits_words() {
    assert_eq!(
        op(json!({ "title": { "like": "  Hello\tWORLD  " } })),
        Op::Like(vec!["Hello".into(), "WORLD".into()])
    );
}

#[test]
fn blank_or_non_string_like_is_malformed() {
    for v in [
        json!(""),
        json!("   \n"),
        json!(1),
        json!(["a"]),
        json!(null),
    ] {
        assert_eq!(p(json!({ "title": { "like": v } })), Filter::Nothing);
    }
}

#[test]
fn string_operators() {
    assert_eq!(
        op(json!({ "title": { "contains": "50%" } })),
        Op::Contains("50%".into())
    );
    assert_eq!(
        op(json!({ "title": { "starts_with": "a_" } })),
        Op::StartsWith("a_".into())
    );
    assert_eq!(
        op(json!({ "title": { "ends_with": "z" } })),
        Op::EndsWith("z".into())
    );
    // An empty needle is a valid clause: it matches every string.
    assert_eq!(
        op(json!({ "title": { "contains": "" } })),
        Op::Contains(String::new())
    );
}

#[test]
fn string_operators_need_a_string_value() {
    for name in ["contains", "starts_with", "ends_with"] {
        for v in [json!(1), json!(true), json!(null), json!(["a"]), json!({})] {
            assert_eq!(p(json!({ "title": { name: v } })), Filter::Nothing);
        }
    }
}

#[test]
fn string_operators_on_numbers_and_booleans_are_malformed() {
    for name in ["like", "contains", "starts_with", "ends_with"] {
        for field in ["views", "featured", "meta"] {
            assert_eq!(p(json!({ field: { name: "a" } })), Filter::Nothing);
        }
    }
}

#[test]
fn string_operators_apply_to_string_like_kinds() {
    for field in ["title", "date", "slug", "author", "tags"] {
        assert_eq!(
            op(json!({ field: { "contains": "a" } })),
            Op::Contains("a".into())
        );
    }
}

#[test]
fn other_kinds_only_take_exists() {
    for name in ["equals", "not_equals", "greater_than", "contains", "like"] {
        assert_eq!(p(json!({ "meta": { name: "a" } })), Filter::Nothing);
    }
    assert_eq!(p(json!({ "meta": { "in": ["a"] } })), Filter::Nothing);
}

// ----- non-validation rules ---------------------------------------------------------------------

#[test]
fn unknown_operator_drops_the_clause() {
    assert_eq!(p(json!({ "title": { "regex": ".*" } })), Filter::All);
    assert_eq!(
        p(json!({ "title": { "near": 1 }, "views": { "equals": 1 } })),
        Filter::Cond(Condition {
            path: FieldPath(vec!["views".into()]),
            kind: FieldKind::Number,
            op: Op::Equals(n(1)),
        })
    );
    // Operator names are case-sensitive.
    assert_eq!(p(json!({ "title": { "EQUALS": "a" } })), Filter::All);
}

#[test]
fn undeclared_field_matches_nothing_whatever_the_operator() {
    assert_eq!(p(json!({ "secret": { "equals": 1 } })), Filter::Nothing);
    assert_eq!(p(json!({ "secret": { "unknown_op": 1 } })), Filter::Nothing);
    assert_eq!(
        p(json!({ "seo.missing": { "exists": true } })),
        Filter::Nothing
    );
}

#[test]
fn undeclared_field_is_never_dropped_by_or() {
    assert_eq!(
        p(json!({ "or": [{ "secret": { "equals": 1 } }] })),
        Filter::Nothing
    );
}

#[test]
fn segments_must_be_identifiers() {
    for field in [
        "",
        ".title",
        "title.",
        "seo..description",
        "ti-tle",
        "1title",
        "title ",
        "seo.description'",
        "títle",
    ] {
        assert_eq!(
            p(json!({ field: { "exists": true } })),
            Filter::Nothing,
            "{field}"
        );
    }
}

#[test]
fn field_mapped_to_non_object_is_malformed() {
    for v in [json!("a"), json!(1), json!(null), json!(["equals", "a"])] {
        assert_eq!(p(json!({ "title": v })), Filter::Nothing);
    }
}

#[test]
fn zero_or_several_operators_are_malformed() {
    assert_eq!(p(json!({ "title": {} })), Filter::Nothing);
    assert_eq!(
        p(json!({ "title": { "equals": "a", "contains": "b" } })),
        Filter::Nothing
    );
    // Several operators is malformed even when one of them is unknown.
    assert_eq!(
        p(json!({ "title": { "equals": "a", "regex": "b" } })),
        Filter::Nothing
    );
}

#[test]
fn several_fields_are_anded() {
    let Filter::And(members) = p(json!({
        "title": { "equals": "a" },
        "views": { "greater_than": 1 },
    })) else {
        panic!("expected And");
    };
    assert_eq!(members.len(), 2);
}

#[test]
fn malformed_clause_makes_the_conjunction_nothing() {
    assert_eq!(
        p(json!({ "title": { "equals": "a" }, "views": "x" })),
        Filter::Nothing
    );
}

#[test]
fn and_or_take_arrays_of_where_objects() {
    let f = p(json!({ "or": [
        { "title": { "equals": "a" } },
        { "and": [{ "views": { "equals": 1 } }, { "featured": { "equals": true } }] },
    ] }));
    let Filter::Or(members) = f else {
        panic!("expected Or");
    };
    assert!(matches!(&members[1], Filter::And(inner) if inner.len() == 2));
}

#[test]
fn and_or_of_the_wrong_shape_are_malformed() {
    for key in ["and", "or"] {
        for v in [
            json!({}),
            json!("a"),
            json!(null),
            json!([1]),
            json!([{}, []]),
        ] {
            assert_eq!(p(json!({ key: v })), Filter::Nothing, "{key}");
        }
    }
}

#[test]
fn empty_and_is_all_empty_or_is_nothing() {
    assert_eq!(p(json!({ "and": [] })), Filter::All);
    assert_eq!(p(json!({ "or": [] })), Filter::Nothing);
    assert_eq!(p(json!({ "and": [{}] })), Filter::All);
    assert_eq!(p(json!({ "or": [{}] })), Filter::All);
}

#[test]
fn or_with_a_dropped_member_is_all() {
    assert_eq!(
        p(json!({ "or": [{ "title": { "equals": "a" } }, { "title": { "nope": 1 } }] })),
        Filter::All
    );
}

#[test]
fn or_forgets_members_that_match_nothing() {
    assert_eq!(
        p(json!({ "or": [{ "title": { "equals": "a" } }, { "title": 1 }] })),
        p(json!({ "title": { "equals": "a" } }))
    );
}

#[test]
fn nested_and_is_flattened() {
    let Filter::And(members) = p(json!({
        "title": { "equals": "a" },
        "and": [{ "views": { "equals": 1 } }, { "featured": { "equals": true } }],
    })) else {
        panic!("expected And");
    };
    assert_eq!(members.len(), 3);
}

#[test]
fn simplification_rules() {
    let c = p(json!({ "title": { "equals": "a" } }));
    assert_eq!(Filter::and([Filter::All, c.clone()]), c);
    assert_eq!(Filter::and([Filter::Nothing, c.clone()]), Filter::Nothing);
    assert_eq!(Filter::and([]), Filter::All);
    assert_eq!(Filter::or([Filter::All, c.clone()]), Filter::All);
    assert_eq!(Filter::or([Filter::Nothing, c.clone()]), c);
    assert_eq!(Filter::or([]), Filter::Nothing);
}

fn nested(levels: usize) -> Value {
    let mut v = json!({ "title": { "equals": "a" } });
    for _ in 0..levels {
        v = json!({ "and": [v] });
    }
    v
}

#[test]
fn nesting_deeper_than_the_limit_matches_nothing() {
    assert!(matches!(p(nested(MAX_DEPTH)), Filter::Cond(_)));
    assert_eq!(p(nested(MAX_DEPTH + 1)), Filter::Nothing);
    // Far deeper input is refused without descending into it.
    assert_eq!(p(nested(200)), Filter::Nothing);
}

fn many_conditions(count: usize) -> Value {
    let items: Vec<Value> = (0..count)
        .map(|i| json!({ "views": { "equals": i } }))
        .collect();
    json!({ "or": items })
}

#[test]
fn more_conditions_than_the_limit_match_nothing() {
    // Each member costs two: the nested object and its field clause; `or` costs one.
    let fits = (MAX_CONDITIONS - 1) / 2;
    assert!(matches!(p(many_conditions(fits)), Filter::Or(_)));
    assert_eq!(p(many_conditions(fits + 1)), Filter::Nothing);
    // A dropped clause still counts: it still costs parsing.
    let items: Vec<Value> = (0..MAX_CONDITIONS)
        .map(|_| json!({ "title": { "x": 1 } }))
        .collect();
    assert_eq!(p(json!({ "and": items })), Filter::Nothing);
}

#[test]
fn more_values_than_the_limit_match_nothing() {
    let fits: Vec<i64> = (0..MAX_VALUES as i64).collect();
    assert!(matches!(
        p(json!({ "views": { "in": fits } })),
        Filter::Cond(_)
    ));
    let too_many: Vec<i64> = (0..=MAX_VALUES as i64).collect();
    assert_eq!(
        p(json!({ "views": { "not_in": too_many } })),
        Filter::Nothing
    );
}

#[test]
fn more_text_than_the_limit_matches_nothing() {
    let fits = "é".repeat(MAX_TEXT_CHARS);
    assert_eq!(
        op(json!({ "title": { "contains": fits.clone() } })),
        Op::Contains(fits)
    );
    // Counted over the whole filter, in characters, words of `like` included.
    let half = "x".repeat(MAX_TEXT_CHARS / 2);
    assert_eq!(
        p(json!({ "and": [
            { "title": { "starts_with": half.clone() } },
            { "body": { "like": format!("{half} y") } }
        ] })),
        Filter::Nothing
    );
    assert_eq!(
        p(json!({ "title": { "ends_with": "x".repeat(MAX_TEXT_CHARS + 1) } })),
        Filter::Nothing
    );
}

// ----- datetimes ------------------------------------------------------------------------------

#[test]
fn datetime_values_compare_as_instants_in_utc() {
    let paris = "2026-11-26T10:00:00+01:00";
    let utc = "2026-11-26T09:00:00.000Z";
    let c = |v: &str| Comparand::String(v.into());
    assert_eq!(
        op(json!({ "at": { "greater_than": paris } })),
        Op::GreaterThan(c(utc))
    );
    assert_eq!(
        op(json!({ "at": { "less_than_equal": "2026-11-26T04:00:00-05:00" } })),
        Op::LessThanEqual(c(utc))
    );
    assert_eq!(op(json!({ "at": { "equals": paris } })), Op::Equals(s(utc)));
    assert_eq!(
        op(json!({ "at": { "not_equals": paris } })),
        Op::NotEquals(s(utc))
    );
    assert_eq!(
        op(json!({ "at": { "in": [paris, null, 5, "2026-11-26T09:00:00Z"] } })),
        Op::In(vec![s(utc), Scalar::Null, n(5), s(utc)])
    );
    assert_eq!(
        op(json!({ "at": { "not_in": [paris] } })),
        Op::NotIn(vec![s(utc)])
    );
    // A prefix or anything else that is not a date-time stays text, as do text operators.
    assert_eq!(
        op(json!({ "at": { "greater_than_equal": "2026-11" } })),
        Op::GreaterThanEqual(c("2026-11"))
    );
    assert_eq!(
        op(json!({ "at": { "starts_with": paris } })),
        Op::StartsWith(paris.into())
    );
    // `date` fields and strings are not datetimes.
    assert_eq!(
        op(json!({ "date": { "equals": paris } })),
        Op::Equals(s(paris))
    );
    assert_eq!(
        op(json!({ "title": { "equals": paris } })),
        Op::Equals(s(paris))
    );
}

// ----- sorting ----------------------------------------------------------------------------------

fn field_key(path: &[&str], kind: FieldKind, direction: Direction) -> SortKey {
    SortKey::Field(
        FieldPath(path.iter().map(|s| s.to_string()).collect()),
        kind,
        direction,
    )
}

#[test]
fn sort_builtins_and_fields() {
    assert_eq!(
        parse_sort(&["-publishedAt", "createdAt", "-updatedAt"], &Post),
        vec![
            SortKey::Column(BuiltinColumn::PublishedAt, Direction::Desc),
            SortKey::Column(BuiltinColumn::CreatedAt, Direction::Asc),
            SortKey::Column(BuiltinColumn::UpdatedAt, Direction::Desc),
        ]
    );
    assert_eq!(
        parse_sort(
            &[
                "title",
                "-views",
                "seo.description",
                "slug",
                "author",
                "featured",
                "date"
            ],
            &Post
        ),
        vec![
            field_key(&["title"], FieldKind::String, Direction::Asc),
            field_key(&["views"], FieldKind::Number, Direction::Desc),
            field_key(&["seo", "description"], FieldKind::String, Direction::Asc),
            field_key(&["slug"], FieldKind::Slug, Direction::Asc),
            field_key(&["author"], FieldKind::Reference, Direction::Asc),
            field_key(&["featured"], FieldKind::Boolean, Direction::Asc),
            field_key(&["date"], FieldKind::Date, Direction::Asc),
        ]
    );
}

#[test]
fn sort_ignores_unknown_unreadable_and_non_scalar_names() {
    let ignored = [
        "secret", "-secret", "tags", "meta", "seo", "", "-", "--title", "a b", "title;",
    ];
    assert_eq!(parse_sort(&ignored, &Post), vec![]);
}

#[test]
fn builtin_names_win_over_declared_fields() {
    assert_eq!(
        parse_sort(&["createdAt"], &Post),
        vec![SortKey::Column(BuiltinColumn::CreatedAt, Direction::Asc)]
    );
}

#[test]
fn sort_keeps_the_first_key_per_target_and_at_most_the_limit() {
    assert_eq!(
        parse_sort(&["-title", "title", "createdAt", "-createdAt"], &Post),
        vec![
            field_key(&["title"], FieldKind::String, Direction::Desc),
            SortKey::Column(BuiltinColumn::CreatedAt, Direction::Asc),
        ]
    );
    let many = [
        "title",
        "body",
        "views",
        "featured",
        "date",
        "slug",
        "author",
        "seo.description",
        "createdAt",
        "updatedAt",
    ];
    assert_eq!(parse_sort(&many, &Post).len(), MAX_SORT_KEYS);
}

// ----- properties -------------------------------------------------------------------------------

const KEYS: &[&str] = &[
    "title",
    "body",
    "views",
    "featured",
    "date",
    "slug",
    "author",
    "tags",
    "meta",
    "seo",
    "seo.description",
    "secret",
    "and",
    "or",
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
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(KEYS).prop_map(String::from),
        1 => any::<String>(),
        1 => "[a-z_.]{0,12}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[ a-zA-Z%_\\\\]{0,10}".prop_map(Value::String),
    ]
}

/// Arbitrary JSON, bounded in depth and size, with keys biased towards the language.
pub(crate) fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

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

/// Where objects that are mostly well-formed, so every operator is reached on every kind.
fn where_value() -> impl Strategy<Value = Value> {
    let clause = (key(), proptest::sample::select(OPERATORS), json_value())
        .prop_map(|(field, op, value)| json!({ field: { op: value } }));
    clause.prop_recursive(5, 48, 5, |inner| {
        (
            proptest::sample::select(&["and", "or"][..]),
            prop::collection::vec(inner.clone(), 0..5),
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

/// Every `And`/`Or` has at least two members, none of them a constant or of its own kind.
fn simplified(filter: &Filter) -> bool {
    match filter {
        Filter::And(members) => {
            members.len() >= 2
                && members.iter().all(|m| {
                    !matches!(m, Filter::All | Filter::Nothing | Filter::And(_)) && simplified(m)
                })
        }
        Filter::Or(members) => {
            members.len() >= 2
                && members.iter().all(|m| {
                    !matches!(m, Filter::All | Filter::Nothing | Filter::Or(_)) && simplified(m)
                })
        }
        Filter::Cond(c) => c.path.segments().iter().all(|s| is_identifier(s)),
        Filter::All | Filter::Nothing => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_never_panics_and_simplifies(v in json_value()) {
        let filter = parse(&v, &Post);
        prop_assert!(simplified(&filter), "{filter:?}");
    }

    #[test]
    fn parse_of_a_where_object_never_panics(entries in prop::collection::vec((key(), json_value()), 0..8)) {
        let v = Value::Object(entries.into_iter().collect());
        let filter = parse(&v, &Post);
        prop_assert!(simplified(&filter), "{filter:?}");
    }

    #[test]
    fn parse_of_mostly_well_formed_clauses_never_panics(v in where_value()) {
        let filter = parse(&v, &Post);
        prop_assert!(simplified(&filter), "{filter:?}");
    }

    #[test]
    fn parse_sort_never_panics(spec in prop::collection::vec(key(), 0..12)) {
        let spec: Vec<&str> = spec.iter().map(String::as_str).collect();
        let keys = parse_sort(&spec, &Post);
        prop_assert!(keys.len() <= MAX_SORT_KEYS);
    }
}
