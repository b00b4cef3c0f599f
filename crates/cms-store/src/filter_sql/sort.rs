//! Sort keys: the ORDER BY of a list, missing values last ascending and first descending.

use cms_core::FieldKind;
use cms_core::filter::{BuiltinColumn, Comparand, Condition, Direction, Filter, Op, SortKey};

use super::target::Target;
use super::{DataColumn, Generated};
use crate::Dialect;

/// An ORDER BY list (without `ORDER BY`). With keys, ties break by `id ASC`; without any, the
/// default order is newest first, `created_at DESC, id DESC`, which the
/// `documents_by_type` index serves.
pub fn compile_sort(keys: &[SortKey], dialect: Dialect, column: DataColumn) -> String {
    compile_sort_under(keys, dialect, column, &Filter::All)
}

/// [`compile_sort`] for rows already restricted by `filter`. On SQLite, a sort key whose path
/// the filter bounds with a comparison of the key's own type (`views > 5` for a sort on
/// `views`) can have no missing or other-typed values left, so it sorts by the plain indexed
/// expression: the expression index then yields the page in order and no row is sorted.
pub fn compile_sort_under(
    keys: &[SortKey],
    dialect: Dialect,
    column: DataColumn,
    filter: &Filter,
) -> String {
    compile_sort_with(keys, dialect, column, filter, None)
}

/// [`compile_sort_under`] for rows of one document type: on PostgreSQL a field key sorts by
/// the type's generated column where `generated` has one (the same values, `NULL` where the
/// JSON expression is `NULL`), which the column's index can yield in order.
pub fn compile_sort_with(
    keys: &[SortKey],
    dialect: Dialect,
    column: DataColumn,
    filter: &Filter,
    generated: Option<Generated<'_>>,
) -> String {
    let generated = generated.filter(|_| dialect == Dialect::Postgres);
    let mut parts: Vec<String> = keys
        .iter()
        .filter_map(|key| match key {
            SortKey::Field(path, kind, direction)
                if dialect == Dialect::Sqlite && bounded_by(filter, path.segments(), *kind) =>
            {
                let target = Target::new(dialect, column.name(), path.segments(), *kind);
                let direction = match direction {
                    Direction::Asc => "ASC",
                    Direction::Desc => "DESC",
                };
                Some(format!("{} {direction}", target.value()))
            }
            SortKey::Field(path, kind, direction) => {
                match generated.and_then(|g| g.column(path.segments(), *kind, column)) {
                    // float8 orders like the exact number except within rounding ties, which
                    // the exact value then orders; a text column like the whole value except
                    // among values cut to the same prefix, which the whole value then orders.
                    Some(g) => Some(match g.exact {
                        Some((exact, _)) => format!(
                            "{}, {}",
                            null_order(g.name, *direction),
                            null_order(exact, *direction)
                        ),
                        None => format!(
                            "{}, {}",
                            null_order(g.name, *direction),
                            sort_key(key, dialect, column.name())?
                        ),
                    }),
                    None => sort_key(key, dialect, column.name()),
                }
            }
            _ => sort_key(key, dialect, column.name()),
        })
        .collect();
    if parts.is_empty() {
        return "created_at DESC, id DESC".to_string();
    }
    parts.push("id ASC".to_string());
    parts.join(", ")
}

/// Whether a top-level condition of `filter` compares `path` with a value of `kind`'s type,
/// which (on SQLite) leaves only values of that type.
fn bounded_by(filter: &Filter, path: &[String], kind: FieldKind) -> bool {
    let conditions: Vec<&Condition> = match filter {
        Filter::Cond(c) => vec![c],
        Filter::And(items) => items
            .iter()
            .filter_map(|f| match f {
                Filter::Cond(c) => Some(c),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    conditions.iter().any(|c| {
        let comparand = match &c.op {
            Op::GreaterThan(v)
            | Op::GreaterThanEqual(v)
            | Op::LessThan(v)
            | Op::LessThanEqual(v) => v,
            _ => return false,
        };
        c.path.segments() == path
            && c.kind == kind
            && matches!(
                (comparand, kind),
                (Comparand::Number(_), FieldKind::Number)
                    | (Comparand::String(_), FieldKind::String | FieldKind::Date)
            )
    })
}

fn sort_key(key: &SortKey, dialect: Dialect, column: &'static str) -> Option<String> {
    let (expr, direction) = match key {
        SortKey::Column(builtin, direction) => (builtin_column(*builtin).to_string(), *direction),
        SortKey::Field(path, kind, direction) => {
            let target = Target::new(dialect, column, path.segments(), *kind);
            (target.sort_value(*kind)?, *direction)
        }
    };
    Some(null_order(expr, direction))
}

/// Missing values are the largest on both engines (SQLite's default is the smallest).
fn null_order(expr: String, direction: Direction) -> String {
    match direction {
        Direction::Asc => format!("{expr} ASC NULLS LAST"),
        Direction::Desc => format!("{expr} DESC NULLS FIRST"),
    }
}

fn builtin_column(column: BuiltinColumn) -> &'static str {
    match column {
        BuiltinColumn::PublishedAt => "published_at",
        BuiltinColumn::CreatedAt => "created_at",
        BuiltinColumn::UpdatedAt => "updated_at",
    }
}
