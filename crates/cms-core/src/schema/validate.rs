//! Document data against its schema, at two levels (CONTRACT.md section 2): the structure a
//! draft must have to be saved at all, and the constraints a document must meet to be
//! published. One walker does both, so the two levels cannot drift apart.

use serde_json::{Map, Value};

use super::localize::Stored;
use super::model::{Field, FieldType};
use super::place::At;
use super::registry::Schemas;
use crate::issue::{Issue, Issues};

impl Schemas {
    /// What refuses a draft save (400): data that is not an object, undeclared keys, values of
    /// the wrong JSON type. `null` is "no value" for any field.
    pub fn check_structure(&self, type_name: &str, data: &Value) -> Vec<Issue> {
        self.walk(type_name, data, Mode::Structure)
    }

    /// Everything [`Schemas::check_structure`] reports, plus what blocks publishing: required
    /// values, lengths, ranges, patterns, options, formats, item counts. Reference targets are
    /// not checked (they need the database): see [`Schemas::references`].
    pub fn validate_for_publish(&self, type_name: &str, data: &Value) -> Vec<Issue> {
        self.walk(type_name, data, Mode::Publish)
    }

    /// [`Schemas::check_structure`] for a value described by `fields` declared outside any
    /// schema (an event's payload, checked first with [`Schemas::check_fields`]).
    pub fn check_structure_of(&self, fields: &[Field], data: &Value) -> Vec<Issue> {
        self.walk_fields(fields, data, Mode::Structure)
    }

    /// [`Schemas::validate_for_publish`] for a value described by `fields` declared outside
    /// any schema: the issues look exactly like a document's.
    pub fn validate_fields(&self, fields: &[Field], data: &Value) -> Vec<Issue> {
        self.walk_fields(fields, data, Mode::Publish)
    }

    fn walk(&self, type_name: &str, data: &Value, mode: Mode) -> Vec<Issue> {
        match self.get(type_name) {
            Some(schema) => self.walk_fields(&schema.fields, data, mode),
            None => {
                let mut issues = Issues::new();
                issues.add("", "unknown", format!("unknown type \"{type_name}\""));
                issues.into_vec()
            }
        }
    }

    fn walk_fields(&self, fields: &[Field], data: &Value, mode: Mode) -> Vec<Issue> {
        let mut walker = Walker {
            schemas: self,
            mode,
            issues: Issues::new(),
        };
        match data {
            Value::Object(map) => walker.object(fields, map, &At::root(), true),
            _ => walker.issue(&At::root(), "type", "data must be an object"),
        }
        walker.issues.into_vec()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Structure,
    Publish,
}

struct Walker<'a> {
    schemas: &'a Schemas,
    mode: Mode,
    issues: Issues,
}

/// The JSON type an optional key of a composite value (reference, image, slug) must have.
#[derive(Clone, Copy)]
enum Shape {
    String,
    Bool,
    Object,
    /// Checked by the caller.
    Own,
}

/// Keys every nested object may carry besides its declared fields: `_type` names the member
/// type in an array, `_key` identifies an array item for editors (Portable Text convention).
const META_KEYS: [(&str, Shape); 2] = [("_type", Shape::String), ("_key", Shape::String)];

impl Walker<'_> {
    fn issue(&mut self, at: &At, code: &str, message: impl Into<String>) {
        self.issues.add(&at.path, code, message);
    }

    fn publish(&self) -> bool {
        self.mode == Mode::Publish
    }

    /// The fields of one object level. At the document root the metadata keys are not
    /// allowed: they belong to nested objects only.
    fn object(&mut self, fields: &[Field], map: &Map<String, Value>, at: &At, root: bool) {
        for (key, value) in map {
            if fields.iter().any(|f| f.name == *key) {
                continue;
            }
            let meta = META_KEYS.iter().find(|(k, _)| !root && k == key);
            match meta {
                Some(&(_, shape)) => self.shape(value, shape, &at.key(key)),
                None => self.unknown(&at.key(key)),
            }
        }
        for field in fields {
            let value = map.get(&field.name);
            let at = at.field(field);
            if field.localized {
                self.localized(field, value, &at);
                continue;
            }
            if self.publish() && field.required && is_empty(&field.ty, value) {
                self.issue(&at, "required", format!("{} is required", at.label));
            }
            if let Some(value) = value.filter(|v| !v.is_null()) {
                self.value(&field.ty, value, &at);
            }
        }
    }

    /// A localized field (CONTRACT.md section 17): each locale's value is checked like a plain
    /// value of the field, at `path.<tag>`; `required` binds the default locale only. A value
    /// saved before the field was localized counts as the default locale's.
    fn localized(&mut self, field: &Field, value: Option<&Value>, at: &At) {
        let locales = self.schemas.locales();
        let default = locales.default_locale().as_str();
        let stored = value
            .filter(|v| !v.is_null())
            .map(|v| self.schemas.stored(&field.ty, v));
        let default_value = match stored {
            None => None,
            Some(Stored::Unkeyed(value)) => {
                self.value(&field.ty, value, at);
                Some(value)
            }
            Some(Stored::Keyed(map)) => {
                for (tag, value) in map {
                    let in_locale = at.locale(tag);
                    if locales.find(tag).is_none() {
                        self.issue(
                            &in_locale,
                            "locale",
                            format!("{tag} is not an available locale"),
                        );
                    } else if !value.is_null() {
                        self.value(&field.ty, value, &in_locale);
                    }
                }
                map.get(default)
            }
        };
        if self.publish() && field.required && is_empty(&field.ty, default_value) {
            self.issue(
                &at.locale(default),
                "required",
                format!("{} is required in the default locale ({default})", at.label),
            );
        }
    }

    fn unknown(&mut self, at: &At) {
        self.issue(
            at,
            "unknown",
            format!("{} is not a declared field", at.path),
        );
    }

    fn wrong_type(&mut self, at: &At, expected: &str) {
        self.issue(at, "type", format!("{} must be {expected}", at.label));
    }

    /// One non-null value of a declared field (or array member).
    fn value(&mut self, ty: &FieldType, value: &Value, at: &At) {
        match ty {
            FieldType::Number { min, max, integer } => self.number(value, *min, *max, *integer, at),
            FieldType::Boolean if !value.is_boolean() => self.wrong_type(at, "true or false"),
            FieldType::Boolean | FieldType::Json => {}
            FieldType::Slug { .. } => self.slug(value, at),
            FieldType::Reference { .. } => self.reference(value, at),
            FieldType::Image { .. } => self.asset(value, at, "an image", IMAGE_KEYS),
            FieldType::File { .. } => self.asset(value, at, "a file", FILE_KEYS),
            FieldType::Array {
                of,
                min_items,
                max_items,
            } => self.array(of, *min_items, *max_items, value, at),
            FieldType::Object { .. } | FieldType::Named(_) => {
                let fields = self.schemas.children(ty).unwrap_or_default();
                match value.as_object() {
                    Some(map) => self.object(fields, map, at, false),
                    None => self.wrong_type(at, "an object"),
                }
            }
            FieldType::Block => self.block(value, at),
            _ => self.string_like(ty, value, at),
        }
    }

    /// Checks the optional keys of a composite value: known keys by shape, others unknown.
    fn keys(&mut self, map: &Map<String, Value>, at: &At, allowed: &[(&str, Shape)]) {
        for (key, value) in map {
            match allowed.iter().find(|(k, _)| k == key) {
                Some(&(_, shape)) => self.shape(value, shape, &at.key(key)),
                None => self.unknown(&at.key(key)),
            }
        }
    }

    fn shape(&mut self, value: &Value, shape: Shape, at: &At) {
        let (ok, expected) = match shape {
            Shape::String => (value.is_string(), "a string"),
            Shape::Bool => (value.is_boolean(), "true or false"),
            Shape::Object => (value.is_object(), "an object"),
            Shape::Own => (true, ""),
        };
        if !ok && !value.is_null() {
            self.wrong_type(at, expected);
        }
    }

    fn slug(&mut self, value: &Value, at: &At) {
        match value.as_object() {
            Some(map) => self.keys(map, at, &SLUG_KEYS),
            None => self.wrong_type(at, "a slug ({ \"current\": string })"),
        }
    }

    fn reference(&mut self, value: &Value, at: &At) {
        let expected = "a reference ({ \"_ref\": id })";
        let Some(map) = value.as_object() else {
            return self.wrong_type(at, expected);
        };
        match map.get("_ref") {
            Some(Value::String(_)) => {}
            Some(Value::Null) | None => self.wrong_type(at, expected),
            Some(_) => self.wrong_type(&at.key("_ref"), "a string"),
        }
        self.keys(map, at, &REFERENCE_KEYS);
    }

    /// An image or file: `asset` may be missing in a draft (nothing uploaded yet), but when
    /// present it is `{ "_ref": assetId }`.
    fn asset(&mut self, value: &Value, at: &At, what: &str, allowed: &[(&str, Shape)]) {
        let Some(map) = value.as_object() else {
            return self.wrong_type(at, &format!("{what} ({{ \"asset\": {{ \"_ref\": id }} }})"));
        };
        self.keys(map, at, allowed);
        let asset = at.key("asset");
        match map.get("asset") {
            None | Some(Value::Null) => {}
            Some(Value::Object(fields)) => {
                if !fields.get("_ref").is_some_and(Value::is_string) {
                    self.wrong_type(&asset.key("_ref"), "a string");
                }
                self.keys(fields, &asset, &ASSET_KEYS);
            }
            Some(_) => self.wrong_type(&asset, "an object ({ \"_ref\": id })"),
        }
    }

    fn number(
        &mut self,
        value: &Value,
        min: Option<f64>,
        max: Option<f64>,
        integer: bool,
        at: &At,
    ) {
        let Some(n) = value.as_f64() else {
            return self.wrong_type(at, "a number");
        };
        if !self.publish() {
            return;
        }
        let label = &at.label;
        if let Some(min) = min.filter(|m| n < *m) {
            self.issue(at, "min", format!("{label} is at least {min}"));
        }
        if let Some(max) = max.filter(|m| n > *m) {
            self.issue(at, "max", format!("{label} is at most {max}"));
        }
        if integer && n.fract() != 0.0 {
            self.issue(at, "integer", format!("{label} is a whole number"));
        }
    }

    /// Strings, texts, URLs, e-mails, dates, datetimes: a JSON string, then (publishing) its
    /// constraints. An empty string is "no value": `required` reports it, nothing else does.
    fn string_like(&mut self, ty: &FieldType, value: &Value, at: &At) {
        let Some(s) = value.as_str() else {
            return self.wrong_type(at, "a string");
        };
        if !self.publish() || s.is_empty() {
            return;
        }
        let label = &at.label;
        match ty {
            FieldType::String {
                min_length,
                max_length,
                pattern,
                options,
            } => {
                self.lengths(s, *min_length, *max_length, at);
                if pattern.as_ref().is_some_and(|p| !p.is_match(s)) {
                    self.issue(
                        at,
                        "pattern",
                        format!("{label} does not match the required pattern"),
                    );
                }
                if let Some(options) = options.as_ref().filter(|o| !o.iter().any(|o| o == s)) {
                    let message = format!("{label} is one of: {}", options.join(", "));
                    self.issue(at, "options", message);
                }
            }
            FieldType::Text {
                min_length,
                max_length,
            } => self.lengths(s, *min_length, *max_length, at),
            _ => self.format(ty, s, at),
        }
    }

    fn lengths(&mut self, s: &str, min: Option<u64>, max: Option<u64>, at: &At) {
        let n = s.chars().count() as u64;
        let label = &at.label;
        if let Some(min) = min.filter(|m| n < *m) {
            self.issue(
                at,
                "minLength",
                format!("{label} is at least {min} characters"),
            );
        }
        if let Some(max) = max.filter(|m| n > *m) {
            self.issue(
                at,
                "maxLength",
                format!("{label} is at most {max} characters"),
            );
        }
    }

    fn format(&mut self, ty: &FieldType, s: &str, at: &At) {
        let (ok, expected) = match ty {
            FieldType::Date => (formats::is_date(s), "a date (YYYY-MM-DD)"),
            FieldType::Datetime => (formats::is_datetime(s), "a date and time (RFC 3339)"),
            FieldType::Url => (formats::is_http_url(s), "an absolute http(s) URL"),
            FieldType::Email => (formats::is_email(s), "an e-mail address"),
            _ => (true, ""),
        };
        if !ok {
            self.issue(at, "format", format!("{} is {expected}", at.label));
        }
    }

    fn array(&mut self, of: &[Field], min: Option<u64>, max: Option<u64>, value: &Value, at: &At) {
        let Some(items) = value.as_array() else {
            return self.wrong_type(at, "an array");
        };
        if self.publish() {
            let n = items.len() as u64;
            let label = &at.label;
            if let Some(min) = min.filter(|m| n < *m) {
                self.issue(at, "minItems", format!("{label} has at least {min} items"));
            }
            if let Some(max) = max.filter(|m| n > *m) {
                self.issue(at, "maxItems", format!("{label} has at most {max} items"));
            }
        }
        for (i, item) in items.iter().enumerate() {
            self.member(of, item, &at.item(i));
        }
    }

    /// One array item: find the member definitions it can be, then check it against the first
    /// that accepts it (or report the first candidate's issues when none does).
    fn member(&mut self, of: &[Field], item: &Value, at: &At) {
        let candidates = match candidates(of, item) {
            Ok(candidates) => candidates,
            Err(expected) => return self.wrong_type(at, &expected),
        };
        let mut first_issues = None;
        for candidate in candidates {
            let mut trial = Walker {
                schemas: self.schemas,
                mode: self.mode,
                issues: Issues::new(),
            };
            trial.value(&candidate.ty, item, at);
            if trial.issues.is_empty() {
                return;
            }
            first_issues.get_or_insert(trial.issues);
        }
        for issue in first_issues.map(Issues::into_vec).unwrap_or_default() {
            self.issues.push(issue);
        }
    }

    /// Portable Text: an array of objects, each with a string `_type`; a `block` also has
    /// arrays of objects for `children` and `markDefs` when present.
    fn block(&mut self, value: &Value, at: &At) {
        let Some(items) = value.as_array() else {
            return self.wrong_type(at, "an array of blocks");
        };
        for (i, item) in items.iter().enumerate() {
            let at = at.item(i);
            let Some(map) = item.as_object() else {
                self.wrong_type(&at, "an object");
                continue;
            };
            match map.get("_type") {
                Some(Value::String(t)) if t == "block" => {
                    self.object_list(map.get("children"), &at.key("children"));
                    self.object_list(map.get("markDefs"), &at.key("markDefs"));
                }
                Some(Value::String(_)) => {}
                _ => self.wrong_type(&at.key("_type"), "a string"),
            }
        }
    }

    fn object_list(&mut self, value: Option<&Value>, at: &At) {
        match value {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for (i, _) in items.iter().enumerate().filter(|(_, v)| !v.is_object()) {
                    self.wrong_type(&at.item(i), "an object");
                }
            }
            Some(_) => self.wrong_type(at, "an array of objects"),
        }
    }
}

const SLUG_KEYS: [(&str, Shape); 3] = [("current", Shape::String), META_KEYS[0], META_KEYS[1]];
const REFERENCE_KEYS: [(&str, Shape); 4] = [
    ("_ref", Shape::Own),
    ("_weak", Shape::Bool),
    META_KEYS[0],
    META_KEYS[1],
];
const IMAGE_KEYS: &[(&str, Shape)] = &[
    ("asset", Shape::Own),
    ("alt", Shape::String),
    ("crop", Shape::Object),
    ("hotspot", Shape::Object),
    META_KEYS[0],
    META_KEYS[1],
];
const FILE_KEYS: &[(&str, Shape)] = &[("asset", Shape::Own), META_KEYS[0], META_KEYS[1]];
const ASSET_KEYS: [(&str, Shape); 2] = [("_ref", Shape::Own), ("_type", Shape::String)];

/// Whether a field's value counts as missing for `required`: absent, null, an empty string,
/// a slug without a `current`, an image or file without an asset.
fn is_empty(ty: &FieldType, value: Option<&Value>) -> bool {
    let Some(value) = value else { return true };
    match (ty, value) {
        (_, Value::Null) => true,
        (_, Value::String(s)) => s.is_empty(),
        (FieldType::Slug { .. }, v) => v
            .get("current")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty),
        (FieldType::Image { .. } | FieldType::File { .. }, v) => {
            v.get("asset").is_none_or(Value::is_null)
        }
        _ => false,
    }
}

/// The JSON type a member's values have, for matching array items to member definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsonType {
    String,
    Number,
    Bool,
    Object,
    Array,
}

fn json_type(value: &Value) -> Option<JsonType> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(_) => JsonType::Bool,
        Value::Number(_) => JsonType::Number,
        Value::String(_) => JsonType::String,
        Value::Array(_) => JsonType::Array,
        Value::Object(_) => JsonType::Object,
    })
}

fn member_type(ty: &FieldType) -> Option<JsonType> {
    Some(match ty {
        _ if ty.is_json_string() => JsonType::String,
        FieldType::Number { .. } => JsonType::Number,
        FieldType::Boolean => JsonType::Bool,
        FieldType::Array { .. } | FieldType::Block => JsonType::Array,
        FieldType::Json => return None,
        _ => JsonType::Object,
    })
}

/// The member definitions an array item may be, best first. Members match by JSON type (a
/// `json` member accepts anything nothing else does); among several object-like members the
/// item's `_type` decides, naming the member (preferred) or its type. `Err` says what the
/// item should have been.
pub(crate) fn candidates<'f>(of: &'f [Field], item: &Value) -> Result<Vec<&'f Field>, String> {
    let Some(t) = json_type(item) else {
        return Err("a value, not null".into());
    };
    let mut found: Vec<&Field> = of
        .iter()
        .filter(|m| member_type(&m.ty) == Some(t))
        .collect();
    if found.is_empty() {
        found = of
            .iter()
            .filter(|m| matches!(m.ty, FieldType::Json))
            .collect();
    }
    if found.is_empty() {
        let names: Vec<&str> = of.iter().map(|m| m.name.as_str()).collect();
        return Err(format!("one of: {}", names.join(", ")));
    }
    if t == JsonType::Object && found.len() > 1 {
        return by_type_key(found, item);
    }
    Ok(found)
}

fn by_type_key<'f>(found: Vec<&'f Field>, item: &Value) -> Result<Vec<&'f Field>, String> {
    let tag = item
        .get("_type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let by_name: Vec<&Field> = found.iter().copied().filter(|m| m.name == tag).collect();
    if !by_name.is_empty() {
        return Ok(by_name);
    }
    let by_type: Vec<&Field> = found
        .iter()
        .copied()
        .filter(|m| m.ty.type_name() == tag)
        .collect();
    if !by_type.is_empty() {
        return Ok(by_type);
    }
    let names: Vec<&str> = found.iter().map(|m| m.name.as_str()).collect();
    Err(format!(
        "an object whose _type is one of: {}",
        names.join(", ")
    ))
}

/// Whether `s` is what a `url` field accepts: an absolute `http` or `https` URL with a host,
/// without whitespace or control characters. Webhook endpoint URLs are held to it too.
pub fn is_http_url(s: &str) -> bool {
    formats::is_http_url(s)
}

/// Small format checks: no new dependencies, no network, deliberately simple.
mod formats {
    use chrono::NaiveDate;

    /// `YYYY-MM-DD`, exactly, and a real calendar date (chrono alone also accepts `2024-1-5`).
    pub fn is_date(s: &str) -> bool {
        let b = s.as_bytes();
        let shape = b.len() == 10
            && b.iter().enumerate().all(|(i, c)| {
                if i == 4 || i == 7 {
                    *c == b'-'
                } else {
                    c.is_ascii_digit()
                }
            });
        shape && NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
    }

    /// RFC 3339, with an instant the stored form can write (years 0000 to 9999 in UTC).
    pub fn is_datetime(s: &str) -> bool {
        crate::time::normalize_datetime(s).is_some()
    }

    /// An absolute `http` or `https` URL with a host; no whitespace or control characters.
    pub fn is_http_url(s: &str) -> bool {
        if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return false;
        }
        let lower = s.get(..8).unwrap_or(s).to_ascii_lowercase();
        let scheme_len = if lower.starts_with("https://") {
            8
        } else if lower.starts_with("http://") {
            7
        } else {
            return false;
        };
        let rest = &s[scheme_len..];
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        is_host_port(host_port)
    }

    /// `host`, `host:port` or `[ipv6]:port`.
    fn is_host_port(s: &str) -> bool {
        if let Some(v6) = s.strip_prefix('[') {
            let Some((addr, rest)) = v6.split_once(']') else {
                return false;
            };
            let addr_ok = !addr.is_empty()
                && addr
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
            return addr_ok && (rest.is_empty() || rest.strip_prefix(':').is_some_and(is_port));
        }
        let (host, port) = s.rsplit_once(':').unwrap_or((s, ""));
        !host.is_empty() && !host.chars().any(|c| "<>\"{}|\\^`[]:".contains(c)) && is_port(port)
    }

    fn is_port(p: &str) -> bool {
        p.len() <= 5 && p.chars().all(|c| c.is_ascii_digit())
    }

    /// `local@domain.tld`: one `@`, a non-empty local part, a domain of at least two
    /// non-empty dot-separated labels, no whitespace. Deliverability is not our business.
    pub fn is_email(s: &str) -> bool {
        let Some((local, domain)) = s.split_once('@') else {
            return false;
        };
        let labels: Vec<&str> = domain.split('.').collect();
        !local.is_empty()
            && s.len() <= 254
            && !domain.contains('@')
            && labels.len() >= 2
            && labels.iter().all(|l| !l.is_empty())
            && !s.chars().any(|c| c.is_whitespace() || c.is_control())
    }
}

#[cfg(test)]
mod tests;
