//! The SQL both engines share: a part's rows under a filter, their count, and the multi-row
//! insert of a loaded entry.

use serde_json::Value;

use super::{Filter, Kind, Load, Part, Row, Rows};
use crate::Result;

/// The SELECT of a part's rows under a filter, in no particular order: one statement streams
/// them all, so no page repeats a search (a keyset page per organization would scan the rows
/// of every other organization again where no index leads with it).
pub(crate) fn select_sql<DB: sqlx::Database>(
    part: &Part,
    filter: Filter<'_>,
) -> sqlx::QueryBuilder<DB>
where
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let columns: Vec<String> = part.columns.iter().map(|c| quoted(c.name)).collect();
    let mut sql = sqlx::QueryBuilder::new(format!(
        "SELECT {} FROM {} WHERE TRUE",
        columns.join(", "),
        part.table
    ));
    push_filter(&mut sql, part, filter);
    sql
}

/// The COUNT of a part's rows under a filter.
pub(crate) fn count_sql<DB: sqlx::Database>(
    part: &Part,
    filter: Filter<'_>,
) -> sqlx::QueryBuilder<DB>
where
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let mut sql =
        sqlx::QueryBuilder::new(format!("SELECT COUNT(*) FROM {} WHERE TRUE", part.table));
    push_filter(&mut sql, part, filter);
    sql
}

fn push_filter<DB: sqlx::Database>(
    sql: &mut sqlx::QueryBuilder<DB>,
    part: &Part,
    filter: Filter<'_>,
) where
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    if let Some(only) = part.only {
        sql.push(format!(" AND {only}"));
    }
    let column = match part.rows {
        Rows::Organizations => "id",
        Rows::Organization(c) | Rows::OrganizationOrInstance(c) | Rows::People(c) => c,
        Rows::Instance => "",
    };
    let list = |sql: &mut sqlx::QueryBuilder<DB>, ids: &[String]| {
        let mut values = sql.separated(", ");
        for id in ids {
            values.push_bind(id.clone());
        }
        // An empty list is no list in SQL: a value no id takes.
        if ids.is_empty() {
            values.push_bind(String::new());
        }
    };
    match filter {
        Filter::All => {}
        Filter::Organization(id) => {
            sql.push(format!(" AND {column} = "));
            sql.push_bind(id.to_string());
            // Rows of a document are found through the organization's documents: their
            // tables have no index leading with the organization.
            if let Some(document) = part.of_document {
                sql.push(format!(
                    " AND {document} IN (SELECT id FROM documents WHERE organization_id = "
                ));
                sql.push_bind(id.to_string());
                sql.push(")");
            }
        }
        Filter::NoOrganization => {
            sql.push(format!(" AND {column} IS NULL"));
        }
        Filter::Organizations(ids) => {
            sql.push(format!(" AND {column} IN ("));
            list(sql, ids);
            sql.push(")");
        }
        Filter::PeopleOf(ids) => {
            for (i, (table, person)) in [
                ("members", "user_id"),
                ("invitations", "invited_by"),
                ("api_keys", "created_by"),
            ]
            .into_iter()
            .enumerate()
            {
                let joint = if i == 0 { " AND (" } else { " OR " };
                sql.push(format!(
                    "{joint}{column} IN (SELECT {person} FROM {table} WHERE organization_id IN ("
                ));
                list(sql, ids);
                sql.push("))");
            }
            sql.push(")");
        }
    }
}

/// A column name as SQL (`values` is a keyword on both engines).
fn quoted(name: &str) -> String {
    format!("\"{name}\"")
}

/// The INSERT of `rows` of `part`, with its conflict clause.
pub(crate) fn insert_sql<DB: sqlx::Database>(part: &Part, rows: &[Row]) -> sqlx::QueryBuilder<DB>
where
    for<'q> Option<String>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Option<i64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Option<i32>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Option<f64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Option<bool>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Option<sqlx::types::Json<Value>>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let columns: Vec<String> = part.columns.iter().map(|c| quoted(c.name)).collect();
    let mut sql = sqlx::QueryBuilder::new(format!(
        "INSERT INTO {} ({}) ",
        part.table,
        columns.join(", ")
    ));
    sql.push_values(rows, |mut values, row| {
        for column in part.columns {
            let value = row.get(column.name).unwrap_or(&Value::Null);
            match column.kind {
                Kind::Text => values.push_bind(value.as_str().map(str::to_string)),
                Kind::Integer => values.push_bind(value.as_i64()),
                Kind::Integer32 => {
                    values.push_bind(value.as_i64().and_then(|v| i32::try_from(v).ok()))
                }
                Kind::Real => values.push_bind(value.as_f64()),
                Kind::Boolean => values.push_bind(value.as_bool()),
                Kind::Json => values.push_bind(match value {
                    Value::Null => None,
                    v => Some(sqlx::types::Json(v.clone())),
                }),
            };
        }
    });
    if let Load::Upsert(target) = part.load {
        let updates: Vec<String> = part
            .columns
            .iter()
            .filter(|c| !target.contains(&c.name))
            .map(|c| format!("{0} = excluded.{0}", quoted(c.name)))
            .collect();
        sql.push(format!(
            " ON CONFLICT ({}) DO UPDATE SET {}",
            target.join(", "),
            updates.join(", ")
        ));
    }
    sql
}

/// One column of a fetched row as JSON, by its kind.
pub(crate) fn value_of<'r, R: sqlx::Row>(row: &'r R, index: usize, kind: Kind) -> Result<Value>
where
    usize: sqlx::ColumnIndex<R>,
    Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    Option<i32>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    Option<f64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    Option<bool>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    Option<sqlx::types::Json<Value>>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(match kind {
        Kind::Text => row.try_get::<Option<String>, _>(index)?.map(Value::String),
        Kind::Integer => row.try_get::<Option<i64>, _>(index)?.map(Value::from),
        Kind::Integer32 => row.try_get::<Option<i32>, _>(index)?.map(Value::from),
        Kind::Real => row
            .try_get::<Option<f64>, _>(index)?
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        Kind::Boolean => row.try_get::<Option<bool>, _>(index)?.map(Value::Bool),
        Kind::Json => row
            .try_get::<Option<sqlx::types::Json<Value>>, _>(index)?
            .map(|j| j.0),
    }
    .unwrap_or(Value::Null))
}
