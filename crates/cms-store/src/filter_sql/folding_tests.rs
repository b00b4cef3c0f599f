//! Case folding on both engines: the text operators give the same answers on SQLite and
//! PostgreSQL for non-ASCII text, and each engine matches a character's pattern with exactly
//! the characters that fold like it in the Rust table, for every character that has case
//! variants.

use cms_core::FieldLookup;
use cms_core::filter::parse;
use serde_json::{Value, json};
use sqlx::postgres::PgArguments;
use sqlx::sqlite::SqliteArguments;
use sqlx::{Arguments, Connection};

use super::fold::{Anchor, postgres_regex, sqlite_glob};
use super::*;

struct Words;

impl FieldLookup for Words {
    fn field_kind(&self, path: &[&str]) -> Option<FieldKind> {
        match path {
            ["title"] => Some(FieldKind::String),
            ["tags"] => Some(FieldKind::StringArray),
            _ => None,
        }
    }
}

fn rows() -> Vec<(&'static str, Value)> {
    vec![
        (
            "école",
            json!({ "title": "L'ÉCOLE des femmes", "tags": ["Théâtre"] }),
        ),
        ("sisyphus", json!({ "title": "ΣΊΣΥΦΟΣ", "tags": ["μύθος"] })),
        ("sisyphus-lower", json!({ "title": "ο σίσυφος" })),
        ("strasse", json!({ "title": "Straße" })),
        ("strasse-capital", json!({ "title": "STRAẞE" })),
        ("strasse-ss", json!({ "title": "STRASSE" })),
        ("moscow", json!({ "title": "МОСКВА", "tags": ["Город"] })),
        ("istanbul", json!({ "title": "İstanbul" })),
        ("diyarbakir", json!({ "title": "DİYARBAKIR" })),
        ("ascii", json!({ "title": "Istanbul kelvin" })),
        ("kelvin", json!({ "title": "300 \u{212A}" })),
        ("wildcards", json!({ "title": "a*b?c[d]e%f_g\\h.i(j)" })),
        ("emoji", json!({ "title": "😀 Smile" })),
    ]
}

/// `(where, matching ids)`: what simple case folding says, identical on both engines.
fn cases() -> Vec<(Value, Vec<&'static str>)> {
    vec![
        (json!({ "title": { "contains": "école" } }), vec!["école"]),
        (json!({ "title": { "contains": "ÉCOLE" } }), vec!["école"]),
        (json!({ "title": { "starts_with": "l'éc" } }), vec!["école"]),
        // Final and medial sigma fold alike.
        (
            json!({ "title": { "contains": "σίσυφος" } }),
            vec!["sisyphus", "sisyphus-lower"],
        ),
        (
            json!({ "title": { "ends_with": "ΦΟΣ" } }),
            vec!["sisyphus", "sisyphus-lower"],
        ),
        (
            json!({ "title": { "ends_with": "ς" } }),
            vec!["sisyphus", "sisyphus-lower"],
        ),
        // ß and ẞ are one letter; "ss" is two (full folding, not simple).
        (
            json!({ "title": { "contains": "straße" } }),
            vec!["strasse", "strasse-capital"],
        ),
        (
            json!({ "title": { "contains": "STRAẞE" } }),
            vec!["strasse", "strasse-capital"],
        ),
        (
            json!({ "title": { "contains": "strasse" } }),
            vec!["strasse-ss"],
        ),
        (json!({ "title": { "like": "москва" } }), vec!["moscow"]),
        (json!({ "tags": { "contains": "ГОРОД" } }), vec!["moscow"]),
        (json!({ "tags": { "starts_with": "thé" } }), vec!["école"]),
        (json!({ "tags": { "like": "ΜΎΘΟΣ" } }), vec!["sisyphus"]),
        // Dotted capital I and dotless small i fold only to themselves (Turkic rules are
        // not simple folding); plain I and i fold together.
        (
            json!({ "title": { "starts_with": "istanbul" } }),
            vec!["ascii"],
        ),
        (
            json!({ "title": { "starts_with": "İstanbul" } }),
            vec!["istanbul"],
        ),
        (json!({ "title": { "contains": "diyar" } }), vec![]),
        (
            json!({ "title": { "contains": "dİyarbakir" } }),
            vec!["diyarbakir"],
        ),
        (json!({ "title": { "contains": "dİyarbakır" } }), vec![]),
        (
            json!({ "title": { "contains": "dİYARBAKIR" } }),
            vec!["diyarbakir"],
        ),
        // KELVIN SIGN folds to k.
        (
            json!({ "title": { "contains": "K" } }),
            vec!["ascii", "diyarbakir", "kelvin"],
        ),
        (json!({ "title": { "ends_with": "300 k" } }), vec!["kelvin"]),
        // Every character of the value is literal on both engines.
        (
            json!({ "title": { "contains": "a*B?C[d]E%F_g\\H.I(J)" } }),
            vec!["wildcards"],
        ),
        (json!({ "title": { "contains": "*" } }), vec!["wildcards"]),
        (json!({ "title": { "contains": "." } }), vec!["wildcards"]),
        (json!({ "title": { "contains": "a.b" } }), vec![]),
        (json!({ "title": { "contains": "[d]" } }), vec!["wildcards"]),
        (json!({ "title": { "like": "😀 SMILE" } }), vec!["emoji"]),
        (json!({ "title": { "starts_with": "😀" } }), vec!["emoji"]),
    ]
}

async fn sqlite() -> sqlx::SqliteConnection {
    sqlx::SqliteConnection::connect("sqlite::memory:")
        .await
        .expect("sqlite")
}

fn sqlite_args(binds: Vec<Bind>) -> SqliteArguments {
    let mut args = SqliteArguments::default();
    binds
        .into_iter()
        .for_each(|b| b.add_to_sqlite(&mut args).expect("bind"));
    args
}

fn pg_args(binds: Vec<Bind>) -> PgArguments {
    let mut args = PgArguments::default();
    binds
        .into_iter()
        .for_each(|b| b.add_to_postgres(&mut args).expect("bind"));
    args
}

/// The ids each case matches on one engine, after loading [`rows`] into a `documents` table.
async fn answers_on_sqlite() -> Vec<Vec<String>> {
    let mut conn = sqlite().await;
    sqlx::query("CREATE TABLE documents (id TEXT PRIMARY KEY, draft_data TEXT NOT NULL)")
        .execute(&mut conn)
        .await
        .unwrap();
    for (id, data) in rows() {
        sqlx::query("INSERT INTO documents VALUES ($1, $2)")
            .bind(id)
            .bind(data.to_string())
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let mut answers = Vec::new();
    for (where_, _) in cases() {
        let c = compile_filter(
            &parse(&where_, &Words),
            Dialect::Sqlite,
            DataColumn::Draft,
            1,
        );
        let sql = format!("SELECT id FROM documents WHERE {} ORDER BY id", c.sql);
        let ids: Vec<String> =
            sqlx::query_scalar_with(sqlx::AssertSqlSafe(sql), sqlite_args(c.binds))
                .fetch_all(&mut conn)
                .await
                .unwrap();
        answers.push(ids);
    }
    answers
}

async fn answers_on_postgres(url: &str) -> Vec<Vec<String>> {
    let mut conn = sqlx::PgConnection::connect(url).await.expect("postgres");
    sqlx::query("CREATE TABLE documents (id TEXT PRIMARY KEY, draft_data JSONB NOT NULL)")
        .execute(&mut conn)
        .await
        .unwrap();
    for (id, data) in rows() {
        sqlx::query("INSERT INTO documents VALUES ($1, $2)")
            .bind(id)
            .bind(data)
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let mut answers = Vec::new();
    for (where_, _) in cases() {
        let c = compile_filter(
            &parse(&where_, &Words),
            Dialect::Postgres,
            DataColumn::Draft,
            1,
        );
        let sql = format!("SELECT id FROM documents WHERE {} ORDER BY id", c.sql);
        let ids: Vec<String> = sqlx::query_scalar_with(sqlx::AssertSqlSafe(sql), pg_args(c.binds))
            .fetch_all(&mut conn)
            .await
            .unwrap();
        answers.push(ids);
    }
    conn.close().await.unwrap();
    answers
}

fn check(dialect: Dialect, answers: Vec<Vec<String>>) {
    let failures: Vec<String> = cases()
        .into_iter()
        .zip(answers)
        .filter_map(|((where_, mut expected), got)| {
            expected.sort_unstable();
            (got != expected).then(|| format!("{where_}: expected {expected:?}, got {got:?}"))
        })
        .collect();
    assert!(failures.is_empty(), "{dialect:?}:\n{}", failures.join("\n"));
}

#[tokio::test]
async fn non_ascii_text_folds_by_simple_case_folding_on_sqlite() {
    check(Dialect::Sqlite, answers_on_sqlite().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_ascii_text_folds_by_simple_case_folding_on_postgres() {
    crate::testing::with_database(Dialect::Postgres, |url| async move {
        check(Dialect::Postgres, answers_on_postgres(&url).await);
    })
    .await;
}

// ----- identity with the Rust table -----------------------------------------------------------

/// Every character that has case variants, one of each class first (the patterns), then the
/// rest of every class, then characters without variants that are special in either
/// engine's pattern syntax or that sit next to folding ones (the haystack is all of them).
fn alphabet() -> (Vec<char>, Vec<char>) {
    let mut classes: Vec<&'static [char]> = cms_core::fold::all_chars()
        .filter_map(cms_core::fold::variants)
        .filter(|class| !class.is_empty())
        .collect();
    classes.sort_unstable();
    classes.dedup();
    let mut patterns: Vec<char> = classes.iter().map(|class| class[0]).collect();
    let specials = "*?[]^-\\.()|{}+$%_'\"0aZ\u{130}\u{131}\u{DF}\u{3C2}\u{1E9E}\u{10FFFF}\u{1F600}";
    patterns.extend(
        specials
            .chars()
            .filter(|c| cms_core::fold::variants(*c).is_none()),
    );
    let mut haystack: Vec<char> = classes
        .iter()
        .flat_map(|class| class.iter().copied())
        .collect();
    haystack.extend(
        patterns
            .iter()
            .filter(|c| cms_core::fold::variants(**c).is_none()),
    );
    haystack.sort_unstable();
    haystack.dedup();
    (patterns, haystack)
}

/// `(pattern index, haystack index)` of every pair whose characters fold alike.
fn expected_pairs(patterns: &[char], haystack: &[char]) -> Vec<(i64, i64)> {
    let fold = cms_core::fold::simple_fold;
    let mut pairs = Vec::new();
    for (i, p) in patterns.iter().enumerate() {
        for (j, h) in haystack.iter().enumerate() {
            if fold(*p) == fold(*h) {
                pairs.push((i as i64, j as i64));
            }
        }
    }
    pairs
}

fn json_strings(items: impl Iterator<Item = String>) -> String {
    Value::Array(items.map(Value::String).collect()).to_string()
}

/// SQLite's GLOB matches each character's pattern with exactly the characters of the same
/// fold: every pattern against every character of the haystack.
#[tokio::test]
async fn sqlite_matches_exactly_the_characters_that_fold_alike() {
    let (patterns, haystack) = alphabet();
    let mut conn = sqlite().await;
    let mut args = SqliteArguments::default();
    args.add(json_strings(
        patterns
            .iter()
            .map(|c| sqlite_glob(&c.to_string(), Anchor::Start)),
    ))
    .unwrap();
    args.add(json_strings(haystack.iter().map(char::to_string)))
        .unwrap();
    let got: Vec<(i64, i64)> = sqlx::query_as_with(
        "SELECT p.key, h.key FROM json_each($1) AS p, json_each($2) AS h \
         WHERE h.value GLOB p.value ORDER BY p.key, h.key",
        args,
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(got, expected_pairs(&patterns, &haystack));
}

/// The same on PostgreSQL's regular expressions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_matches_exactly_the_characters_that_fold_alike() {
    crate::testing::with_database(Dialect::Postgres, |url| async move {
        let (patterns, haystack) = alphabet();
        let mut conn = sqlx::PgConnection::connect(&url).await.expect("postgres");
        let regexes: Vec<String> = patterns
            .iter()
            .map(|c| format!("^{}$", postgres_regex(&c.to_string(), Anchor::Anywhere)))
            .collect();
        let hay: Vec<String> = haystack.iter().map(char::to_string).collect();
        // Patterns outside, so each regular expression is compiled once.
        let got: Vec<(i64, i64)> = sqlx::query_as(
            "SELECT p.i - 1, m.j - 1 FROM unnest($1::text[]) WITH ORDINALITY AS p(re, i) \
             CROSS JOIN LATERAL (SELECT h.j FROM unnest($2::text[]) WITH ORDINALITY AS h(c, j) \
             WHERE h.c COLLATE \"C\" ~ p.re) AS m ORDER BY 1, 2",
        )
        .bind(regexes)
        .bind(hay)
        .fetch_all(&mut conn)
        .await
        .unwrap();
        assert_eq!(got, expected_pairs(&patterns, &haystack));
        conn.close().await.unwrap();
    })
    .await;
}
