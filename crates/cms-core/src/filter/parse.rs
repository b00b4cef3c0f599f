//! From the JSON a client sent to a [`Filter`], with the non-validation rules of SPEC.md.

use serde_json::{Map, Value};

use super::{Comparand, Condition, FieldPath, Filter, Op, Scalar};
use crate::field_kind::{FieldKind, FieldLookup};
use crate::time::normalize_datetime;

/// Deepest nesting of `and`/`or` accepted; deeper input matches nothing. Keeps hostile input
/// from exhausting the stack here or in the SQL compiler.
pub const MAX_DEPTH: usize = 16;
/// Most clauses (field clauses plus nested where objects) in one filter; more matches nothing.
pub const MAX_CONDITIONS: usize = 256;
/// Most values (`in`/`not_in` members plus `like` words) in one filter; more matches nothing.
/// Each becomes a bind parameter, and both engines cap those.
pub const MAX_VALUES: usize = 1024;
/// Most characters in the values of the text operators (`like`, `contains`, `starts_with`,
/// `ends_with`) of one filter; more matches nothing. Each character becomes a class of the
/// characters that fold like it in a pattern the engine compiles (PostgreSQL refuses
/// regular expressions past a size, some tens of thousands of classes), and the filter is
/// for finding documents, not for comparing pages of text (`search` is).
pub const MAX_TEXT_CHARS: usize = 4096;

/// Parses a `where` clause. `null` (absent) and `{}` match everything; any other non-object
/// matches nothing. Never fails: see the module documentation for the rules.
pub fn parse(where_: &Value, lookup: &dyn FieldLookup) -> Filter {
    match where_ {
        Value::Null => Filter::All,
        Value::Object(map) => {
            let mut parser = Parser {
                lookup,
                conditions: 0,
                values: 0,
                text_chars: 0,
            };
            parser.object(map, 0).unwrap_or(Filter::Nothing)
        }
        _ => Filter::Nothing,
    }
}

/// A limit was exceeded: the whole filter matches nothing.
struct TooLarge;

struct Parser<'a> {
    lookup: &'a dyn FieldLookup,
    conditions: usize,
    values: usize,
    text_chars: usize,
}

/// What an operator name and its value amount to.
enum Parsed {
    /// Not an operator of the language: the clause is dropped.
    Unknown,
    /// A known operator with a value of the wrong shape, or not valid for the field's kind.
    Malformed,
    Op(Op),
}

impl Parser<'_> {
    /// One where object: its entries ANDed.
    fn object(&mut self, map: &Map<String, Value>, depth: usize) -> Result<Filter, TooLarge> {
        if depth > MAX_DEPTH {
            return Err(TooLarge);
        }
        let mut members = Vec::with_capacity(map.len());
        for (key, value) in map {
            self.count_condition()?;
            let member = match key.as_str() {
                "and" | "or" => self.logical(key == "and", value, depth)?,
                _ => self.field(key, value)?,
            };
            members.push(member);
        }
        Ok(Filter::and(members))
    }

    /// `and`/`or`: an array of where objects, anything else is malformed.
    fn logical(&mut self, is_and: bool, value: &Value, depth: usize) -> Result<Filter, TooLarge> {
        let Some(items) = value.as_array() else {
            return Ok(Filter::Nothing);
        };
        if !items.iter().all(Value::is_object) {
            return Ok(Filter::Nothing);
        }
        let mut members = Vec::with_capacity(items.len());
        for map in items.iter().filter_map(Value::as_object) {
            self.count_condition()?;
            members.push(self.object(map, depth + 1)?);
        }
        Ok(if is_and {
            Filter::and(members)
        } else {
            Filter::or(members)
        })
    }

    /// `field: { operator: value }`. The field is checked first, so an undeclared (or
    /// unreadable) field is `Nothing` whatever its operator: never dropped, never an oracle.
    fn field(&mut self, key: &str, value: &Value) -> Result<Filter, TooLarge> {
        let Some((path, kind)) = FieldPath::declared(key, self.lookup) else {
            return Ok(Filter::Nothing);
        };
        let Some(clause) = value.as_object().filter(|m| m.len() == 1) else {
            return Ok(Filter::Nothing);
        };
        let Some((name, arg)) = clause.iter().next() else {
            return Ok(Filter::Nothing);
        };
        Ok(match operator(name, arg, kind) {
            Parsed::Unknown => Filter::All,
            Parsed::Malformed => Filter::Nothing,
            Parsed::Op(op) => {
                self.count_values(&op)?;
                let segments: Vec<&str> = key.split('.').collect();
                let op = match self.lookup.is_datetime(&segments) {
                    true => in_utc(op),
                    false => op,
                };
                condition(path, kind, op)
            }
        })
    }

    fn count_condition(&mut self) -> Result<(), TooLarge> {
        self.conditions += 1;
        if self.conditions > MAX_CONDITIONS {
            return Err(TooLarge);
        }
        Ok(())
    }

    fn count_values(&mut self, op: &Op) -> Result<(), TooLarge> {
        self.values += match op {
            Op::In(values) | Op::NotIn(values) => values.len(),
            Op::Like(words) => words.len(),
            _ => 1,
        };
        if self.values > MAX_VALUES {
            return Err(TooLarge);
        }
        self.text_chars += match op {
            Op::Like(words) => words.iter().map(|w| w.chars().count()).sum(),
            Op::Contains(s) | Op::StartsWith(s) | Op::EndsWith(s) => s.chars().count(),
            _ => 0,
        };
        if self.text_chars > MAX_TEXT_CHARS {
            return Err(TooLarge);
        }
        Ok(())
    }
}

/// The values `op` compares a `datetime` field with, in the stored form of datetimes (UTC,
/// milliseconds), so that `equals`, `in` and the ranges compare instants. What is not a full
/// date-time stays as written: `greater_than: "2026-11"` still compares as text, as the
/// text operators always do (a prefix is not an instant).
fn in_utc(op: Op) -> Op {
    fn scalar(value: Scalar) -> Scalar {
        match value {
            Scalar::String(s) => Scalar::String(normalize_datetime(&s).unwrap_or(s)),
            other => other,
        }
    }
    fn comparand(value: Comparand) -> Comparand {
        match value {
            Comparand::String(s) => Comparand::String(normalize_datetime(&s).unwrap_or(s)),
            other => other,
        }
    }
    match op {
        Op::Equals(v) => Op::Equals(scalar(v)),
        Op::NotEquals(v) => Op::NotEquals(scalar(v)),
        Op::In(values) => Op::In(values.into_iter().map(scalar).collect()),
        Op::NotIn(values) => Op::NotIn(values.into_iter().map(scalar).collect()),
        Op::GreaterThan(v) => Op::GreaterThan(comparand(v)),
        Op::GreaterThanEqual(v) => Op::GreaterThanEqual(comparand(v)),
        Op::LessThan(v) => Op::LessThan(comparand(v)),
        Op::LessThanEqual(v) => Op::LessThanEqual(comparand(v)),
        other => other,
    }
}

/// A condition, except that empty lists become the constant they mean.
fn condition(path: FieldPath, kind: FieldKind, op: Op) -> Filter {
    match &op {
        Op::In(values) if values.is_empty() => Filter::Nothing,
        Op::NotIn(values) if values.is_empty() => Filter::All,
        _ => Filter::Cond(Condition { path, kind, op }),
    }
}

/// The families of operators, each with one rule of shape and one of applicable kinds.
#[derive(Clone, Copy)]
enum Family {
    Equality,
    List,
    Exists,
    Ordering,
    Text,
}

fn family(name: &str) -> Option<Family> {
    Some(match name {
        "equals" | "not_equals" => Family::Equality,
        "in" | "not_in" => Family::List,
        "exists" => Family::Exists,
        "greater_than" | "greater_than_equal" | "less_than" | "less_than_equal" => Family::Ordering,
        "like" | "contains" | "starts_with" | "ends_with" => Family::Text,
        _ => return None,
    })
}

/// Which kinds an operator family applies to. Slug and reference values are strings (their
/// `current` / `_ref`), so text and ordering operators apply to them as to strings.
fn applies(family: Family, kind: FieldKind) -> bool {
    use FieldKind as K;
    match family {
        Family::Exists => true,
        Family::Equality | Family::List => kind != K::Other,
        Family::Ordering => matches!(
            kind,
            K::Number | K::Date | K::String | K::Slug | K::Reference
        ),
        Family::Text => matches!(
            kind,
            K::String | K::Date | K::Slug | K::Reference | K::StringArray
        ),
    }
}

fn operator(name: &str, arg: &Value, kind: FieldKind) -> Parsed {
    let Some(family) = family(name) else {
        return Parsed::Unknown;
    };
    if !applies(family, kind) {
        return Parsed::Malformed;
    }
    let op = match name {
        "equals" => scalar(arg).map(Op::Equals),
        "not_equals" => scalar(arg).map(Op::NotEquals),
        "in" => scalars(arg).map(Op::In),
        "not_in" => scalars(arg).map(Op::NotIn),
        "exists" => arg.as_bool().map(Op::Exists),
        "greater_than" => comparand(arg).map(Op::GreaterThan),
        "greater_than_equal" => comparand(arg).map(Op::GreaterThanEqual),
        "less_than" => comparand(arg).map(Op::LessThan),
        "less_than_equal" => comparand(arg).map(Op::LessThanEqual),
        "like" => like_words(arg).map(Op::Like),
        "contains" => text(arg).map(Op::Contains),
        "starts_with" => text(arg).map(Op::StartsWith),
        "ends_with" => text(arg).map(Op::EndsWith),
        _ => None,
    };
    op.map_or(Parsed::Malformed, Parsed::Op)
}

fn scalar(value: &Value) -> Option<Scalar> {
    Some(match value {
        Value::Null => Scalar::Null,
        Value::Bool(b) => Scalar::Bool(*b),
        Value::Number(n) => Scalar::Number(n.clone()),
        Value::String(s) => Scalar::String(s.clone()),
        Value::Array(_) | Value::Object(_) => return None,
    })
}

/// An array of scalars; one array or object member makes the whole list malformed.
fn scalars(value: &Value) -> Option<Vec<Scalar>> {
    value.as_array()?.iter().map(scalar).collect()
}

fn comparand(value: &Value) -> Option<Comparand> {
    match value {
        Value::Number(n) => Some(Comparand::Number(n.clone())),
        Value::String(s) => Some(Comparand::String(s.clone())),
        _ => None,
    }
}

fn text(value: &Value) -> Option<String> {
    value.as_str().map(String::from)
}

/// `like` needs at least one word: a blank value would otherwise match every string.
fn like_words(value: &Value) -> Option<Vec<String>> {
    let words: Vec<String> = value
        .as_str()?
        .split_whitespace()
        .map(String::from)
        .collect();
    (!words.is_empty()).then_some(words)
}
