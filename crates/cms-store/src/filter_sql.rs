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
//! - text matching is case-insensitive with `%`, `_` and `\` of the value taken literally
//!   (SQLite's `lower` and `LIKE` fold ASCII only; PostgreSQL's `ILIKE` folds by locale);
//! - text orders byte-wise (SQLite's default, PostgreSQL `COLLATE "C"`), so dates and
//!   strings order the same on both engines;
//! - missing values (and values of another JSON type than the field's kind) sort as the
//!   largest: last ascending, first descending.
//!
//! Column names are unqualified (`draft_data`, `created_at`, `id`): the caller's query must
//! have exactly one `documents` row source in scope.

use cms_core::FieldKind;
use cms_core::filter::{
    BuiltinColumn, Comparand, Condition, Direction, Filter, Op, Scalar, SortKey,
};
use serde_json::{Number, Value};
use sqlx::Arguments;
use sqlx::error::BoxDynError;
use sqlx::postgres::PgArguments;
use sqlx::sqlite::SqliteArguments;

use crate::Dialect;

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

/// A value for one `$n` placeholder, in the type the SQL expects for it.
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    /// A JSON value: `jsonb` on PostgreSQL, its JSON text on SQLite.
    Json(Value),
}

impl Bind {
    /// Appends this value to SQLite arguments (after any the caller bound before).
    pub fn add_to_sqlite(self, args: &mut SqliteArguments) -> Result<(), BoxDynError> {
        match self {
            Bind::Null => args.add(None::<String>),
            Bind::Bool(b) => args.add(b),
            Bind::Int(i) => args.add(i),
            Bind::Float(f) => args.add(f),
            Bind::Text(s) => args.add(s),
            Bind::Json(v) => args.add(v.to_string()),
        }
    }

    /// Appends this value to PostgreSQL arguments (after any the caller bound before).
    pub fn add_to_postgres(self, args: &mut PgArguments) -> Result<(), BoxDynError> {
        match self {
            Bind::Null => args.add(None::<String>),
            Bind::Bool(b) => args.add(b),
            Bind::Int(i) => args.add(i),
            Bind::Float(f) => args.add(f),
            Bind::Text(s) => args.add(s),
            Bind::Json(v) => args.add(v),
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
    if segments.is_empty() || !segments.iter().all(|s| is_identifier(s)) {
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

/// The generated columns that exist on PostgreSQL's `documents` (by name): filled by the store
/// as it creates them, read by every list query. Only a column named here is ever referred to,
/// so an instance that has not (yet) created one stays on the JSON expressions.
#[derive(Debug, Default)]
pub struct GeneratedColumns(std::sync::RwLock<std::collections::HashSet<String>>);

impl GeneratedColumns {
    pub fn insert(&self, name: String) {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(name);
    }

    pub fn contains(&self, name: &str) -> bool {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(name)
    }
}

/// The generated columns a query over rows of `doc_type` may use.
#[derive(Debug, Clone, Copy)]
pub struct Generated<'a> {
    pub doc_type: &'a str,
    pub columns: &'a GeneratedColumns,
}

impl Generated<'_> {
    /// The existing generated column(s) for a field of this type.
    fn column(
        &self,
        segments: &[String],
        kind: FieldKind,
        data: DataColumn,
    ) -> Option<GeneratedColumn> {
        let generated = generated_column(self.doc_type, segments, kind, data)?;
        self.columns.contains(&generated.name).then_some(generated)
    }
}

/// PostgreSQL STORED generated columns holding one field's scalar of one document type and
/// copy as plain SQL values, NULL for other types' rows and for values of another JSON type:
/// - strings, dates, slugs and references: one `text COLLATE "C"` column, exactly the value the
///   JSON expressions compare and sort by (`Target::sort_value`);
/// - numbers: a `float8` column (the index key: float8 comparisons are leakproof, numeric ones
///   are not) and the exact `numeric` value beside it (`exact`, carried in the index), which
///   decides where float8 rounding ties (integers beyond 2^53).
///
/// Using them changes no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedColumn {
    /// `f_` and 16 hex digits of FNV-1a over type, path, copy and kind.
    pub name: String,
    /// The column type, collation included.
    pub sql_type: &'static str,
    /// The generation expression (IMMUTABLE: jsonb operators, `jsonb_typeof`, casts).
    pub expression: String,
    /// Numbers: the exact value's column (`n_` and the same digits, `numeric`) and expression.
    pub exact: Option<(String, String)>,
}

impl GeneratedColumn {
    /// `ADD COLUMN` clauses for `ALTER TABLE documents`.
    pub fn add_columns(&self) -> Vec<String> {
        let mut clauses = vec![format!(
            "ADD COLUMN IF NOT EXISTS {} {} GENERATED ALWAYS AS ({}) STORED",
            self.name, self.sql_type, self.expression
        )];
        if let Some((name, expression)) = &self.exact {
            clauses.push(format!(
                "ADD COLUMN IF NOT EXISTS {name} numeric GENERATED ALWAYS AS ({expression}) STORED"
            ));
        }
        clauses
    }

    /// The index serving comparisons, sorts and exact counts: it ends with `id`, the tie-break
    /// of every sorted list, and carries the exact number, so a count is index-only.
    pub fn index(&self) -> String {
        let include = match &self.exact {
            Some((name, _)) => format!(" INCLUDE ({name})"),
            None => String::new(),
        };
        format!(
            "CREATE INDEX IF NOT EXISTS documents_{0} ON documents (organization_id, type, {0}, id){include}",
            self.name
        )
    }
}

/// The generated column(s) for a field, `None` for kinds without them (booleans, arrays,
/// objects) and for names that are not identifiers.
pub fn generated_column(
    doc_type: &str,
    segments: &[String],
    kind: FieldKind,
    data: DataColumn,
) -> Option<GeneratedColumn> {
    let type_ok = !doc_type.is_empty()
        && doc_type
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !type_ok || segments.is_empty() || !segments.iter().all(|s| is_identifier(s)) {
        return None;
    }
    let target = Target::new(Dialect::Postgres, data.name(), segments, kind);
    let hash = crate::fnv1a(&format!(
        "{doc_type}:{}:{}:{kind:?}",
        segments.join("."),
        data.name()
    ));
    let when = |ty| {
        format!(
            "CASE WHEN type = '{doc_type}' AND {} THEN",
            target.is_type(ty)
        )
    };
    Some(match kind {
        FieldKind::Number => GeneratedColumn {
            name: format!("f_{hash:016x}"),
            sql_type: "float8",
            expression: format!("{} {}::float8 END", when(JsonType::Number), target.value()),
            exact: Some((
                format!("n_{hash:016x}"),
                format!("{} {}::numeric END", when(JsonType::Number), target.value()),
            )),
        },
        FieldKind::String | FieldKind::Date | FieldKind::Slug | FieldKind::Reference => {
            GeneratedColumn {
                name: format!("f_{hash:016x}"),
                sql_type: "text COLLATE \"C\"",
                expression: format!("{} {} END", when(JsonType::String), target.text()),
                exact: None,
            }
        }
        FieldKind::Boolean | FieldKind::StringArray | FieldKind::Other => return None,
    })
}

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
                    // the exact value then orders.
                    Some(g) => Some(match g.exact {
                        Some((exact, _)) => format!(
                            "{}, {}",
                            null_order(g.name, *direction),
                            null_order(exact, *direction)
                        ),
                        None => null_order(g.name, *direction),
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

/// The JSON types a clause can ask the stored value to have.
#[derive(Clone, Copy)]
enum JsonType {
    Number,
    String,
    Boolean,
    Array,
}

/// The stored value a condition or sort key looks at: a field path inside one JSON column,
/// extended by `current` for slugs and `_ref` for references.
struct Target {
    dialect: Dialect,
    column: &'static str,
    segments: Vec<String>,
}

impl Target {
    fn new(dialect: Dialect, column: &'static str, segments: &[String], kind: FieldKind) -> Self {
        let mut segments = segments.to_vec();
        match kind {
            FieldKind::Slug => segments.push("current".into()),
            FieldKind::Reference => segments.push("_ref".into()),
            _ => {}
        }
        debug_assert!(segments.iter().all(|s| is_identifier(s)));
        Target {
            dialect,
            column,
            segments,
        }
    }

    /// SQLite `json_extract(col, '$.a.b')` (the native SQL value); PostgreSQL `(col #> '{a,b}')`
    /// (jsonb).
    fn value(&self) -> String {
        match self.dialect {
            Dialect::Sqlite => format!(
                "json_extract({}, '$.{}')",
                self.column,
                self.segments.join(".")
            ),
            Dialect::Postgres => format!("({} #> '{{{}}}')", self.column, self.segments.join(",")),
        }
    }

    /// The value as text: PostgreSQL `(col #>> '{a,b}')`; on SQLite the native value already is.
    fn text(&self) -> String {
        match self.dialect {
            Dialect::Sqlite => self.value(),
            Dialect::Postgres => {
                format!("({} #>> '{{{}}}')", self.column, self.segments.join(","))
            }
        }
    }

    /// The JSON type name, NULL when the path is missing.
    fn type_name(&self) -> String {
        match self.dialect {
            Dialect::Sqlite => {
                format!(
                    "json_type({}, '$.{}')",
                    self.column,
                    self.segments.join(".")
                )
            }
            Dialect::Postgres => format!("jsonb_typeof({})", self.value()),
        }
    }

    fn is_type(&self, ty: JsonType) -> String {
        let name = self.type_name();
        match (self.dialect, ty) {
            (Dialect::Sqlite, JsonType::Number) => format!("{name} IN ('integer','real')"),
            (Dialect::Sqlite, JsonType::String) => format!("{name} = 'text'"),
            (Dialect::Sqlite, JsonType::Boolean) => format!("{name} IN ('true','false')"),
            (Dialect::Postgres, JsonType::Number) => format!("{name} = 'number'"),
            (Dialect::Postgres, JsonType::String) => format!("{name} = 'string'"),
            (Dialect::Postgres, JsonType::Boolean) => format!("{name} = 'boolean'"),
            (_, JsonType::Array) => format!("{name} = 'array'"),
        }
    }

    /// Absent or JSON null. Never SQL NULL, so it is safe under NOT.
    fn missing(&self) -> String {
        format!("{} = 'null'", self.null_safe_type())
    }

    fn present(&self) -> String {
        format!("{} <> 'null'", self.null_safe_type())
    }

    fn null_safe_type(&self) -> String {
        match self.dialect {
            Dialect::Sqlite => format!("IFNULL({}, 'null')", self.type_name()),
            Dialect::Postgres => format!("coalesce({}, 'null')", self.type_name()),
        }
    }

    /// The value to order by for `kind`; values of another JSON type order as missing, so
    /// both engines agree even on data that does not match its schema.
    fn sort_value(&self, kind: FieldKind) -> Option<String> {
        let (ty, then) = match (kind, self.dialect) {
            (FieldKind::Number, Dialect::Sqlite) => (JsonType::Number, self.value()),
            (FieldKind::Number, Dialect::Postgres) => {
                (JsonType::Number, format!("{}::numeric", self.value()))
            }
            (FieldKind::Boolean, Dialect::Sqlite) => (JsonType::Boolean, self.value()),
            (FieldKind::Boolean, Dialect::Postgres) => {
                (JsonType::Boolean, format!("{}::boolean", self.value()))
            }
            (FieldKind::StringArray | FieldKind::Other, _) => return None,
            (_, _) => (JsonType::String, self.text()),
        };
        let collate = match (ty, self.dialect) {
            (JsonType::String, Dialect::Postgres) => " COLLATE \"C\"",
            _ => "",
        };
        Some(format!(
            "(CASE WHEN {} THEN {then} END){collate}",
            self.is_type(ty)
        ))
    }
}

fn is_identifier(segment: &str) -> bool {
    let mut bytes = segment.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

struct Compiler<'a> {
    dialect: Dialect,
    data: DataColumn,
    column: &'static str,
    next: usize,
    binds: Vec<Bind>,
    /// PostgreSQL only.
    generated: Option<Generated<'a>>,
}

impl Compiler<'_> {
    fn filter(&mut self, filter: &Filter) -> String {
        match filter {
            Filter::All => self.constant(true),
            Filter::Nothing => self.constant(false),
            Filter::And(members) => self.junction(members, " AND ", true),
            Filter::Or(members) => self.junction(members, " OR ", false),
            Filter::Cond(condition) => self.condition(condition),
        }
    }

    fn constant(&self, value: bool) -> String {
        let text = match (self.dialect, value) {
            (Dialect::Sqlite, true) => "1=1",
            (Dialect::Sqlite, false) => "1=0",
            (Dialect::Postgres, true) => "TRUE",
            (Dialect::Postgres, false) => "FALSE",
        };
        text.to_string()
    }

    fn junction(&mut self, members: &[Filter], joiner: &str, empty: bool) -> String {
        if members.is_empty() {
            return self.constant(empty);
        }
        let parts: Vec<String> = members.iter().map(|m| self.filter(m)).collect();
        format!("({})", parts.join(joiner))
    }

    /// A fresh placeholder carrying `bind`.
    fn bind(&mut self, bind: Bind) -> String {
        let placeholder = format!("${}", self.next);
        self.next += 1;
        self.binds.push(bind);
        placeholder
    }

    fn condition(&mut self, c: &Condition) -> String {
        let target = Target::new(self.dialect, self.column, c.path.segments(), c.kind);
        let array = c.kind == FieldKind::StringArray;
        match &c.op {
            Op::Equals(v) => self.in_list(&target, std::slice::from_ref(v)),
            Op::NotEquals(v) => self.not_in_list(&target, std::slice::from_ref(v)),
            Op::In(values) => self.in_list(&target, values),
            Op::NotIn(values) => self.not_in_list(&target, values),
            Op::Exists(true) => target.present(),
            Op::Exists(false) => target.missing(),
            Op::GreaterThan(v) => self.ordering(c, &target, ">", v),
            Op::GreaterThanEqual(v) => self.ordering(c, &target, ">=", v),
            Op::LessThan(v) => self.ordering(c, &target, "<", v),
            Op::LessThanEqual(v) => self.ordering(c, &target, "<=", v),
            Op::Like(words) => {
                let patterns = words.iter().map(|w| format!("%{}%", escape_like(w)));
                self.text_match(&target, array, patterns.collect())
            }
            Op::Contains(s) => {
                self.text_match(&target, array, vec![format!("%{}%", escape_like(s))])
            }
            Op::StartsWith(s) => {
                self.text_match(&target, array, vec![format!("{}%", escape_like(s))])
            }
            Op::EndsWith(s) => {
                self.text_match(&target, array, vec![format!("%{}", escape_like(s))])
            }
        }
    }

    /// Matches when the stored value equals one of `values` (null meaning missing or null).
    fn in_list(&mut self, target: &Target, values: &[Scalar]) -> String {
        let has_null = values.contains(&Scalar::Null);
        let mut terms = Vec::new();
        if has_null {
            terms.push(target.missing());
        }
        if let Some(present) = self.present_match(target, values) {
            terms.push(present);
        }
        match terms.len() {
            0 => self.constant(false),
            1 => terms.remove(0),
            _ => format!("({})", terms.join(" OR ")),
        }
    }

    /// The negation of [`Compiler::in_list`], written so SQL NULL never decides: a missing
    /// value matches unless null is in the list.
    fn not_in_list(&mut self, target: &Target, values: &[Scalar]) -> String {
        let has_null = values.contains(&Scalar::Null);
        match (has_null, self.present_match(target, values)) {
            (false, None) => self.constant(true),
            (true, None) => target.present(),
            (false, Some(m)) => format!("({} OR NOT {m})", target.missing()),
            (true, Some(m)) => format!("({} AND NOT {m})", target.present()),
        }
    }

    /// Equality with the non-null `values`, for a present, non-null stored value (where it is
    /// never SQL NULL). `None` when there is no non-null value.
    fn present_match(&mut self, target: &Target, values: &[Scalar]) -> Option<String> {
        match self.dialect {
            Dialect::Postgres => {
                let placeholders: Vec<String> = values
                    .iter()
                    .filter_map(json_of)
                    .map(|v| format!("{}::jsonb", self.bind(Bind::Json(v))))
                    .collect();
                (!placeholders.is_empty()).then(|| member_of(&target.value(), &placeholders))
            }
            Dialect::Sqlite => self.sqlite_present_match(target, values),
        }
    }

    /// SQLite: one typed group per JSON type, because `json_extract` returns `true` as 1 and
    /// `"5"` and `5` compare by SQL rules; the `json_type` guard tells them apart.
    fn sqlite_present_match(&mut self, target: &Target, values: &[Scalar]) -> Option<String> {
        let mut groups = Vec::new();
        for ty in [JsonType::Boolean, JsonType::Number, JsonType::String] {
            let placeholders: Vec<String> = values
                .iter()
                .filter_map(|v| sqlite_bind_of(v, ty))
                .map(|b| self.bind(b))
                .collect();
            if !placeholders.is_empty() {
                let member = member_of(&target.value(), &placeholders);
                groups.push(format!("({} AND {member})", target.is_type(ty)));
            }
        }
        match groups.len() {
            0 => None,
            1 => groups.pop(),
            _ => Some(format!("({})", groups.join(" OR "))),
        }
    }

    /// `>`, `>=`, `<`, `<=`: numerically against stored numbers for a number, as text
    /// (byte order) against stored strings for a string.
    fn ordering(&mut self, c: &Condition, target: &Target, op: &str, value: &Comparand) -> String {
        // The generated column holds exactly the value the JSON expression compares below
        // (NULL for another JSON type, where the expression is NULL or false; conditions are
        // never negated, so the two agree), as numeric or as "C"-collated text.
        let generated = self
            .generated
            .and_then(|g| g.column(c.path.segments(), c.kind, self.data));
        if let Some(g) = generated {
            match (value, c.kind, g.exact) {
                // float8 rounding is monotone, so `x > p` implies `float8(x) >= float8(p)`: the
                // float8 bound (leakproof, an index condition) narrows to a range the exact
                // comparison, on the value the index carries, then decides.
                (Comparand::Number(n), FieldKind::Number, Some((exact, _))) => {
                    let p = self.bind(number_bind(n));
                    let wide = if op.starts_with('>') { ">=" } else { "<=" };
                    return format!(
                        "({} {wide} {p}::numeric::float8 AND {exact} {op} {p}::numeric)",
                        g.name
                    );
                }
                (
                    Comparand::String(s),
                    FieldKind::String | FieldKind::Date | FieldKind::Slug | FieldKind::Reference,
                    None,
                ) => {
                    let p = self.bind(Bind::Text(s.clone()));
                    return format!("{} {op} {p}", g.name);
                }
                _ => {}
            }
        }
        match (value, self.dialect) {
            // SQLite orders every number below every text value, so `< ''` keeps stored
            // strings out while both bounds stay on the one indexed expression: the range is
            // answered from the expression index, counts included, without reading rows.
            (Comparand::Number(n), Dialect::Sqlite) => {
                let p = self.bind(number_bind(n));
                let v = target.value();
                format!("({v} {op} {p} AND {v} < '')")
            }
            (Comparand::Number(n), Dialect::Postgres) => {
                let p = self.bind(number_bind(n));
                // The CASE keeps the cast away from non-numbers, which would raise an error.
                format!(
                    "(CASE WHEN {} THEN {}::numeric END) {op} {p}::numeric",
                    target.is_type(JsonType::Number),
                    target.value()
                )
            }
            // `>= ''` keeps stored numbers out (they order below every text) on the indexed
            // expression alone, as above.
            (Comparand::String(s), Dialect::Sqlite) => {
                let p = self.bind(Bind::Text(s.clone()));
                let v = target.value();
                format!("({v} {op} {p} AND {v} >= '')")
            }
            (Comparand::String(s), Dialect::Postgres) => {
                let p = self.bind(Bind::Text(s.clone()));
                format!(
                    "({} AND {} COLLATE \"C\" {op} {p})",
                    target.is_type(JsonType::String),
                    target.text()
                )
            }
        }
    }

    /// Every pattern must match the stored string; for an array field, one element must match
    /// them all.
    fn text_match(&mut self, target: &Target, array: bool, patterns: Vec<String>) -> String {
        let element = match (array, self.dialect) {
            (false, Dialect::Sqlite) => format!("lower({})", target.value()),
            (false, Dialect::Postgres) => target.text(),
            (true, Dialect::Sqlite) => "lower(e.value)".to_string(),
            (true, Dialect::Postgres) => "(e.v #>> '{}')".to_string(),
        };
        let likes: Vec<String> = patterns
            .into_iter()
            .map(|pattern| {
                let p = self.bind(Bind::Text(pattern));
                match self.dialect {
                    Dialect::Sqlite => format!("{element} LIKE lower({p}) ESCAPE '\\'"),
                    Dialect::Postgres => format!("{element} ILIKE {p} ESCAPE '\\'"),
                }
            })
            .collect();
        let likes = likes.join(" AND ");
        match (array, self.dialect) {
            (false, _) => format!("({} AND {likes})", target.is_type(JsonType::String)),
            (true, Dialect::Sqlite) => format!(
                "({} AND EXISTS (SELECT 1 FROM json_each({}, '$.{}') AS e WHERE e.type = 'text' AND {likes}))",
                target.is_type(JsonType::Array),
                target.column,
                target.segments.join("."),
            ),
            // The CASE keeps jsonb_array_elements away from non-arrays, which would raise.
            (true, Dialect::Postgres) => format!(
                "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN {} THEN {} END) AS e(v) WHERE jsonb_typeof(e.v) = 'string' AND {likes})",
                target.is_type(JsonType::Array),
                target.value(),
            ),
        }
    }
}

/// `x = $1` for one placeholder, `x IN ($1, $2)` for several.
fn member_of(expr: &str, placeholders: &[String]) -> String {
    match placeholders {
        [one] => format!("{expr} = {one}"),
        many => format!("{expr} IN ({})", many.join(", ")),
    }
}

fn json_of(value: &Scalar) -> Option<Value> {
    match value {
        Scalar::Null => None,
        Scalar::Bool(b) => Some(Value::Bool(*b)),
        Scalar::Number(n) => Some(Value::Number(n.clone())),
        Scalar::String(s) => Some(Value::String(s.clone())),
    }
}

/// The SQLite bind of `value` when it belongs to the group of JSON type `ty`.
fn sqlite_bind_of(value: &Scalar, ty: JsonType) -> Option<Bind> {
    match (value, ty) {
        (Scalar::Bool(b), JsonType::Boolean) => Some(Bind::Bool(*b)),
        (Scalar::Number(n), JsonType::Number) => Some(number_bind(n)),
        (Scalar::String(s), JsonType::String) => Some(Bind::Text(s.clone())),
        _ => None,
    }
}

/// Integers stay exact; anything else is a double. `as_f64` only fails with serde_json's
/// `arbitrary_precision` (not enabled) on out-of-range input: NaN then matches nothing on SQLite.
fn number_bind(n: &Number) -> Bind {
    match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => Bind::Int(i),
        (None, Some(f)) => Bind::Float(f),
        (None, None) => Bind::Float(f64::NAN),
    }
}

/// Makes `%`, `_` and the escape character itself literal in a LIKE pattern.
fn escape_like(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for ch in value.chars() {
        if matches!(ch, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use cms_core::FieldLookup;
    use cms_core::filter::{parse, parse_sort};
    use proptest::prelude::*;
    use serde_json::json;

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
        let unbounded =
            cms_core::filter::parse(&json!({ "title": { "greater_than": "a" } }), &Post);
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
            "(json_type(draft_data, '$.title') = 'text' AND lower(json_extract(draft_data, '$.title')) LIKE lower($1) ESCAPE '\\' AND lower(json_extract(draft_data, '$.title')) LIKE lower($2) ESCAPE '\\')"
        );
        assert_eq!(c.binds, vec![text("%Hello%"), text("%world%")]);
    }

    #[test]
    fn string_operators_escape_wildcards() {
        let c = pg(json!({ "title": { "contains": "50%_\\" } }));
        assert_eq!(
            c.sql,
            "(jsonb_typeof((draft_data #> '{title}')) = 'string' AND (draft_data #>> '{title}') ILIKE $1 ESCAPE '\\')"
        );
        assert_eq!(c.binds, vec![text("%50\\%\\_\\\\%")]);
        assert_eq!(
            pg(json!({ "title": { "starts_with": "a" } })).binds,
            vec![text("a%")]
        );
        assert_eq!(
            lite(json!({ "title": { "ends_with": "a" } })).binds,
            vec![text("%a")]
        );
    }

    #[test]
    fn contains_on_arrays_matches_any_element() {
        assert_eq!(
            lite(json!({ "tags": { "contains": "x" } })).sql,
            "(json_type(draft_data, '$.tags') = 'array' AND EXISTS (SELECT 1 FROM json_each(draft_data, '$.tags') AS e WHERE e.type = 'text' AND lower(e.value) LIKE lower($1) ESCAPE '\\'))"
        );
        assert_eq!(
            pg(json!({ "tags": { "contains": "x" } })).sql,
            "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof((draft_data #> '{tags}')) = 'array' THEN (draft_data #> '{tags}') END) AS e(v) WHERE jsonb_typeof(e.v) = 'string' AND (e.v #>> '{}') ILIKE $1 ESCAPE '\\')"
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
        "LIKE",
        "ILIKE",
        "ESCAPE",
        "COLLATE",
        "TRUE",
        "FALSE",
        "IFNULL",
        "coalesce",
        "lower",
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
        "\\", "{}", "",
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
                    "#>>", "#>", "::", "<>", "<=", ">=", "=", "<", ">", "(", ")", ",", ".", "1",
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

    /// Adds the generated columns of every [`Post`] field (PostgreSQL) and names them.
    async fn add_generated_columns<E: Engine>(db: &mut E) -> GeneratedColumns {
        let columns = GeneratedColumns::default();
        for (segments, kind) in post_fields() {
            for data in [DataColumn::Draft, DataColumn::Published] {
                if let Some(g) = generated_column("post", &segments, kind, data) {
                    let sql = format!("ALTER TABLE documents {}", g.add_columns().join(", "));
                    db.execute(&sql, vec![]).await;
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
}
