//! The operators: each condition of a `where` clause as SQL over its `Target`, with the
//! semantics of CONTRACT.md section 12 on both engines.

use cms_core::FieldKind;
use cms_core::filter::{Comparand, Condition, Filter, Op, Scalar};

use super::bind::{json_of, number_bind, sqlite_bind_of};
use super::fold::{Anchor, postgres_regex, sqlite_glob};
use super::generated::TEXT_PREFIX;
use super::target::{JsonType, Target};
use super::{Bind, DataColumn, Generated};
use crate::Dialect;

pub(super) struct Compiler<'a> {
    pub(super) dialect: Dialect,
    pub(super) data: DataColumn,
    pub(super) column: &'static str,
    pub(super) next: usize,
    pub(super) binds: Vec<Bind>,
    /// PostgreSQL only.
    pub(super) generated: Option<Generated<'a>>,
    /// The declared path and kind of the condition being compiled.
    pub(super) field: Option<(Vec<String>, FieldKind)>,
}

impl Compiler<'_> {
    pub(super) fn filter(&mut self, filter: &Filter) -> String {
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
        self.field = Some((c.path.segments().to_vec(), c.kind));
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
            Op::Like(words) => self.text_match(&target, array, words, Anchor::Anywhere),
            Op::Contains(s) => {
                self.text_match(&target, array, std::slice::from_ref(s), Anchor::Anywhere)
            }
            Op::StartsWith(s) => {
                self.text_match(&target, array, std::slice::from_ref(s), Anchor::Start)
            }
            Op::EndsWith(s) => {
                self.text_match(&target, array, std::slice::from_ref(s), Anchor::End)
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
                let narrowed = self.generated_equality(values);
                let placeholders: Vec<String> = values
                    .iter()
                    .filter_map(json_of)
                    .map(|v| format!("{}::jsonb", self.bind(Bind::Json(v))))
                    .collect();
                let exact = (!placeholders.is_empty())
                    .then(|| member_of(&target.value(), &placeholders))?;
                Some(match narrowed {
                    Some(narrowed) => format!("({narrowed} AND {exact})"),
                    None => exact,
                })
            }
            Dialect::Sqlite => self.sqlite_present_match(target, values),
        }
    }

    /// PostgreSQL: a condition on the field's column that every match satisfies (an index
    /// condition under row-level security), when every value is of the field's own type; the
    /// JSON equality beside it then decides. `None` when the column is not ready or a value of
    /// another type could match a stored value the column holds as NULL.
    fn generated_equality(&mut self, values: &[Scalar]) -> Option<String> {
        let (segments, kind) = self.field.clone()?;
        let g = self
            .generated
            .and_then(|g| g.column(&segments, kind, self.data))?;
        // Every value decides before any is bound: a placeholder bound and then left out of the
        // SQL would shift every later one.
        let keys: Option<Vec<(Bind, &str)>> = values
            .iter()
            .map(|value| match (value, kind) {
                (Scalar::Number(n), FieldKind::Number) => {
                    Some((number_bind(n), "::numeric::float8"))
                }
                (
                    Scalar::String(s),
                    FieldKind::String | FieldKind::Date | FieldKind::Slug | FieldKind::Reference,
                ) => Some((Bind::Text(text_prefix(s)), "")),
                _ => None,
            })
            .collect();
        let keys = keys.filter(|keys| !keys.is_empty())?;
        let placeholders: Vec<String> = keys
            .into_iter()
            .map(|(bind, cast)| format!("{}{cast}", self.bind(bind)))
            .collect();
        Some(member_of(&g.name, &placeholders))
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
                // The column holds the value's first TEXT_PREFIX characters: a value beyond
                // the bound has a prefix at or beyond the bound's prefix (an index condition);
                // a column shorter than the cut is the whole value and decides, one as long as
                // the cut may have been cut and the JSON decides, as without the column.
                (
                    Comparand::String(s),
                    FieldKind::String | FieldKind::Date | FieldKind::Slug | FieldKind::Reference,
                    None,
                ) => {
                    let prefix = self.bind(Bind::Text(text_prefix(s)));
                    let p = self.bind(Bind::Text(s.clone()));
                    let wide = if op.starts_with('>') { ">=" } else { "<=" };
                    let json = postgres_text_ordering(target, op, &p);
                    return format!(
                        "({0} {wide} {prefix} AND ((char_length({0}) < {TEXT_PREFIX} AND {0} {op} {p}) \
                         OR (char_length({0}) >= {TEXT_PREFIX} AND {json})))",
                        g.name
                    );
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
                postgres_text_ordering(target, op, &p)
            }
        }
    }

    /// Every value must occur in the stored string at `anchor`, case folded (see
    /// [`super::fold`]); for an array field, one element must hold them all.
    fn text_match(
        &mut self,
        target: &Target,
        array: bool,
        values: &[String],
        anchor: Anchor,
    ) -> String {
        // No stored string holds a NUL (every write refuses one, and PostgreSQL cannot
        // store it), so such a value matches nothing, alike on both engines.
        if values.iter().any(|v| v.contains('\0')) {
            return self.constant(false);
        }
        let element = match (array, self.dialect) {
            (false, _) => target.text(),
            (true, Dialect::Sqlite) => "e.value".to_string(),
            (true, Dialect::Postgres) => "(e.v #>> '{}')".to_string(),
        };
        let matches: Vec<String> = values
            .iter()
            .map(|value| match self.dialect {
                Dialect::Sqlite => {
                    let p = self.bind(Bind::Text(sqlite_glob(value, anchor)));
                    format!("{element} GLOB {p}")
                }
                // "C": a regular expression refuses a nondeterministic collation, and this
                // one compares code points only.
                Dialect::Postgres => {
                    let p = self.bind(Bind::Text(postgres_regex(value, anchor)));
                    format!("{element} COLLATE \"C\" ~ {p}")
                }
            })
            .collect();
        let matches = matches.join(" AND ");
        match (array, self.dialect) {
            (false, _) => format!("({} AND {matches})", target.is_type(JsonType::String)),
            (true, Dialect::Sqlite) => format!(
                "({} AND EXISTS (SELECT 1 FROM json_each({}, '$.{}') AS e WHERE e.type = 'text' AND {matches}))",
                target.is_type(JsonType::Array),
                target.column,
                target.segments.join("."),
            ),
            // The CASE keeps jsonb_array_elements away from non-arrays, which would raise.
            (true, Dialect::Postgres) => format!(
                "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN {} THEN {} END) AS e(v) WHERE jsonb_typeof(e.v) = 'string' AND {matches})",
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

/// PostgreSQL: the stored string compared in byte order ("C") with the placeholder `p`;
/// values of another JSON type never match.
fn postgres_text_ordering(target: &Target, op: &str, p: &str) -> String {
    format!(
        "({} AND {} COLLATE \"C\" {op} {p})",
        target.is_type(JsonType::String),
        target.text()
    )
}

/// The part of a string a text column keeps (see [`TEXT_PREFIX`]).
fn text_prefix(value: &str) -> String {
    value.chars().take(TEXT_PREFIX).collect()
}
