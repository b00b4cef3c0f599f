//! The SQL of the `where` language and of list sorting: the only place it is written.
//!
//! A [`Filter`] from `cms_core::filter` becomes a boolean SQL expression over one JSON column of
//! `documents`. Every value a client sent travels as a bind parameter ([`Bind`]); the only text
//! of the client's that reaches the SQL is a [`cms_core::filter::FieldPath`], whose segments are
//! identifiers the document type declares (the type guarantees it). Paths are written as
//! literals rather than binds so that expression indexes (`json_extract(draft_data,
//! '$.title')`, `(draft_data #>> '{title}')`) can match.
//!
//! Semantics are those of CONTRACT.md section 12, the same on both engines:
//! - comparisons are type-aware: the JSON type of the stored value is checked, so `"5"` never
//!   equals `5` and `true` never equals `1` (SQLite's `json_extract` alone conflates them);
//! - null and missing are one value: `equals: null` matches both, `not_equals`/`not_in` of
//!   non-null values match both;
//! - text matching folds case with Unicode simple case folding and takes every character of
//!   the value literally, on both engines alike (`fold`: the value becomes a pattern of the
//!   characters that fold like each of its characters; neither engine folds);
//! - text orders byte-wise (SQLite's default, PostgreSQL `COLLATE "C"`), so dates and
//!   strings order the same on both engines;
//! - missing values (and values of another JSON type than the field's kind) sort as the
//!   largest: last ascending, first descending.
//!
//! Column names are unqualified (`draft_data`, `created_at`, `id`): the caller's query must
//! have exactly one `documents` row source in scope.
//!
//! The parts: [`Bind`] and the values clients send (`bind`), where a stored value is and how
//! each engine reads it (`target`), the operators (`condition`), the text operators' case
//! folding patterns (`fold`), sort keys (`sort`), and
//! PostgreSQL's generated columns for indexed fields with the registry the units of work share
//! (`generated`).

mod bind;
mod condition;
mod fold;
mod generated;
mod sort;
mod target;

#[cfg(test)]
mod folding_tests;
#[cfg(test)]
mod tests;

use cms_core::FieldKind;
use cms_core::filter::Filter;

use crate::Dialect;
use condition::Compiler;
use target::{JsonType, Target, is_path_segment};

pub use bind::Bind;
pub use generated::{Generated, GeneratedColumn, GeneratedColumns, generated_column};
pub use sort::{compile_sort, compile_sort_under, compile_sort_with};

/// Which copy of a document a query evaluates (its perspective).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataColumn {
    Draft,
    Published,
}

impl DataColumn {
    pub fn name(self) -> &'static str {
        match self {
            DataColumn::Draft => "draft_data",
            DataColumn::Published => "published_data",
        }
    }
}

/// A boolean SQL expression and the values of its placeholders, in placeholder order.
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
    pub sql: String,
    pub binds: Vec<Bind>,
}

/// Compiles `filter` over `column`, numbering placeholders from `first_placeholder` (so the
/// expression can follow binds the caller already placed, e.g. organization and type).
pub fn compile_filter(
    filter: &Filter,
    dialect: Dialect,
    column: DataColumn,
    first_placeholder: usize,
) -> Compiled {
    compile_filter_with(filter, dialect, column, first_placeholder, None)
}

/// [`compile_filter`] for rows of one document type, which on PostgreSQL compares through the
/// type's generated columns ([`generated_column`]) where `generated` has them: the same
/// results, but plain `numeric`/`text` comparisons the planner may use as index conditions
/// under row-level security (the JSON operators are not leakproof).
pub fn compile_filter_with(
    filter: &Filter,
    dialect: Dialect,
    column: DataColumn,
    first_placeholder: usize,
    generated: Option<Generated<'_>>,
) -> Compiled {
    let mut compiler = Compiler {
        dialect,
        data: column,
        column: column.name(),
        next: first_placeholder,
        binds: Vec::new(),
        generated: generated.filter(|_| dialect == Dialect::Postgres),
        field: None,
    };
    let sql = compiler.filter(filter);
    Compiled {
        sql,
        binds: compiler.binds,
    }
}

/// The expressions the compiled filters use for a declared path, so that an expression index
/// on them serves `where` clauses on that field. `None` when a segment is not an identifier
/// (schema names always are; this keeps the function safe on any input).
pub fn index_expressions(
    segments: &[String],
    kind: FieldKind,
    dialect: Dialect,
    column: DataColumn,
) -> Option<Vec<String>> {
    if segments.is_empty() || !segments.iter().all(|s| is_path_segment(s)) {
        return None;
    }
    let target = Target::new(dialect, column.name(), segments, kind);
    Some(match dialect {
        Dialect::Sqlite => vec![target.value()],
        Dialect::Postgres => match kind {
            FieldKind::Number => vec![
                target.value(),
                format!(
                    "(CASE WHEN {} THEN {}::numeric END)",
                    target.is_type(JsonType::Number),
                    target.value()
                ),
            ],
            _ => vec![target.value(), format!("({} COLLATE \"C\")", target.text())],
        },
    })
}
