//! `where` clauses: bytes -> JSON -> `cms_core::filter::parse` against every registered document
//! type in every configured locale -> `cms_store::filter_sql` for both dialects, both data columns, with and without
//! PostgreSQL's generated columns. A top-level array of strings is also a `sort` list.
//! Invariants: no panic; every compiled SQL text holds only allowed literals, placeholders
//! numbered in order for exactly its binds, and no user string outside bind parameters.
#![no_main]

use cms_core::filter::{parse, parse_sort};
use cms_fuzz::{check_sql, document_types, schemas};
use cms_store::Dialect;
use cms_store::filter_sql::{
    DataColumn, Generated, GeneratedColumns, compile_filter, compile_filter_with,
    compile_sort_with, generated_column,
};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(where_) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let sort: Vec<&str> = match &where_ {
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        Value::String(s) => s.split(',').collect(),
        _ => Vec::new(),
    };
    let types = document_types();
    let locales = schemas().locales().available();
    // Every type, read in every locale: localized paths carry the locale's tag.
    for (doc_type, locale) in types
        .iter()
        .flat_map(|t| locales.iter().map(move |l| (*t, l)))
    {
        let lookup = schemas()
            .fields(doc_type)
            .expect("a registered type")
            .in_locale(locale);
        let filter = parse(&where_, &lookup);
        let keys = parse_sort(&sort, &lookup);
        // Every generated column the store would create for this type's indexed paths.
        let columns = GeneratedColumns::default();
        for (path, kind) in lookup.indexed_paths() {
            for data in [DataColumn::Draft, DataColumn::Published] {
                if let Some(g) = generated_column(doc_type, &path, kind, data) {
                    columns.insert(g.name);
                }
            }
        }
        let generated = Generated {
            doc_type,
            columns: &columns,
        };
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            for column in [DataColumn::Draft, DataColumn::Published] {
                for first in [1, 3] {
                    let c = compile_filter(&filter, dialect, column, first);
                    check_sql(&c.sql, &where_, first, c.binds.len());
                    let g = compile_filter_with(&filter, dialect, column, first, Some(generated));
                    check_sql(&g.sql, &where_, first, g.binds.len());
                }
                for g in [None, Some(generated)] {
                    let order = compile_sort_with(&keys, dialect, column, &filter, g);
                    check_sql(&order, &where_, 1, 0);
                }
            }
        }
    }
});
