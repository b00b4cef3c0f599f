//! Schema and field access rules (SPEC.md "Schema access rules"), typed.
//!
//! A schema file can only hold role lists: `"access": { "publish": ["editor", "admin"] }` on a
//! document schema, `"access": { "read": ["admin"], "update": ["admin"] }` on a field. Role
//! lists are matched literally against the caller's effective organization role; an operation
//! without a rule falls back to the capability check alone. Policy functions (Rust closures)
//! are registered by host applications in the service layer, which owns the caller's identity.
//!
//! [`FieldRules`] is the compiled form the service layer applies to document data: only the
//! fields that carry a rule, or contain one, are kept, so a type without field rules compiles
//! to an empty tree and costs nothing on reads and writes.

use serde_json::{Map, Value, json};

use super::model::{Field, FieldType};
use super::registry::Schemas;
use super::validate::candidates;
use crate::role::RoleName;

macro_rules! operations {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            pub fn parse(s: &str) -> Option<$name> {
                match s { $($text => Some($name::$variant),)+ _ => None }
            }
        }
    };
}

operations! {
    /// What a schema access rule can govern.
    Operation {
        Read => "read",
        Create => "create",
        Update => "update",
        Delete => "delete",
        Publish => "publish",
        Unpublish => "unpublish",
    }
}

operations! {
    /// What a field access rule can govern.
    FieldOperation {
        Read => "read",
        Update => "update",
    }
}

/// The role names an operation is open to. Empty means nobody (but instance administrators,
/// who bypass every rule).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RoleList(Vec<RoleName>);

impl RoleList {
    pub fn new(roles: impl IntoIterator<Item = RoleName>) -> RoleList {
        RoleList(roles.into_iter().collect())
    }

    /// Whether a caller with this effective role name (none: not a member) is listed.
    pub fn allows(&self, role: Option<&str>) -> bool {
        role.is_some_and(|role| self.0.iter().any(|r| r.as_str() == role))
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(RoleName::as_str)
    }

    fn to_json(&self) -> Value {
        Value::Array(self.names().map(|n| json!(n)).collect())
    }
}

/// The access rules of a document schema: one optional role list per operation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchemaAccess {
    rules: Vec<(Operation, RoleList)>,
}

impl SchemaAccess {
    /// The role list of `operation`; `None`: the capability check alone decides.
    pub fn rule(&self, operation: Operation) -> Option<&RoleList> {
        self.rules
            .iter()
            .find(|(op, _)| *op == operation)
            .map(|(_, list)| list)
    }

    /// Sets (or replaces) the rule of one operation.
    pub fn set(&mut self, operation: Operation, roles: RoleList) {
        self.rules.retain(|(op, _)| *op != operation);
        self.rules.push((operation, roles));
        self.rules.sort_by_key(|(op, _)| *op);
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The declared operations with their lists, in [`Operation::ALL`] order.
    pub fn rules(&self) -> impl Iterator<Item = (Operation, &RoleList)> {
        self.rules.iter().map(|(op, list)| (*op, list))
    }

    /// The JSON shape it was declared in; `None` when there is no rule.
    pub fn to_json(&self) -> Option<Value> {
        rules_json(self.rules().map(|(op, list)| (op.as_str(), list)))
    }

    /// Parses `access` of a document schema. `Err` is a message; the parser adds where.
    pub fn from_json(value: &Value) -> Result<SchemaAccess, String> {
        let mut access = SchemaAccess::default();
        for (key, list) in entries(value, Operation::ALL.iter().map(|o| o.as_str()))? {
            let op = Operation::parse(key).expect("checked by entries");
            access.set(op, role_list(key, list)?);
        }
        Ok(access)
    }
}

/// The access rules of one field: who may read it and who may update it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldAccess {
    pub read: Option<RoleList>,
    pub update: Option<RoleList>,
}

impl FieldAccess {
    pub fn is_empty(&self) -> bool {
        self.read.is_none() && self.update.is_none()
    }

    pub fn rule(&self, operation: FieldOperation) -> Option<&RoleList> {
        match operation {
            FieldOperation::Read => self.read.as_ref(),
            FieldOperation::Update => self.update.as_ref(),
        }
    }

    pub fn to_json(&self) -> Option<Value> {
        let rules = FieldOperation::ALL
            .iter()
            .filter_map(|op| self.rule(*op).map(|list| (op.as_str(), list)));
        rules_json(rules)
    }

    /// Parses `access` of a field. `Err` is a message; the parser adds where.
    pub fn from_json(value: &Value) -> Result<FieldAccess, String> {
        let mut access = FieldAccess::default();
        for (key, list) in entries(value, FieldOperation::ALL.iter().map(|o| o.as_str()))? {
            let list = Some(role_list(key, list)?);
            match FieldOperation::parse(key).expect("checked by entries") {
                FieldOperation::Read => access.read = list,
                FieldOperation::Update => access.update = list,
            }
        }
        Ok(access)
    }
}

fn rules_json<'a>(rules: impl Iterator<Item = (&'a str, &'a RoleList)>) -> Option<Value> {
    let map: Map<String, Value> = rules
        .map(|(op, list)| (op.to_string(), list.to_json()))
        .collect();
    (!map.is_empty()).then_some(Value::Object(map))
}

/// The entries of an `access` object, each key one of `allowed`.
fn entries(
    value: &Value,
    allowed: impl Iterator<Item = &'static str> + Clone,
) -> Result<Vec<(&str, &Value)>, String> {
    let map = value.as_object().ok_or("access must be an object")?;
    map.iter()
        .map(|(key, list)| {
            if allowed.clone().any(|a| a == key) {
                Ok((key.as_str(), list))
            } else {
                let expected: Vec<&str> = allowed.clone().collect();
                Err(format!(
                    "access: unknown operation \"{key}\" (expected {})",
                    expected.join(", ")
                ))
            }
        })
        .collect()
}

/// An array of role names. A policy function cannot be written in JSON: Rust host
/// applications register those with the service.
fn role_list(key: &str, value: &Value) -> Result<RoleList, String> {
    let items = value.as_array().ok_or_else(|| {
        format!(
            "access.{key} must be an array of role names (policy functions are registered in Rust)"
        )
    })?;
    let mut roles = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let name = item
            .as_str()
            .ok_or_else(|| format!("access.{key}[{i}] must be a string (a role name)"))?;
        let role = name
            .parse::<RoleName>()
            .map_err(|e| format!("access.{key}[{i}]: \"{name}\" is not a role name: {e}"))?;
        roles.push(role);
    }
    Ok(RoleList(roles))
}

/// The field rules of one document type, compiled for applying to its data.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldRules {
    fields: Vec<FieldNode>,
}

#[derive(Debug, Clone, PartialEq)]
struct FieldNode {
    name: String,
    access: FieldAccess,
    nested: Nested,
}

/// The rules below a field, by the shape of its value.
#[derive(Debug, Clone, PartialEq)]
enum Nested {
    None,
    /// An inline or named object: its fields' rules.
    Object(FieldRules),
    /// An array: every member definition (to pick an item's member as validation does) and,
    /// at the same index, the rules of that member (empty for members without any).
    Members {
        of: Vec<Field>,
        rules: Vec<FieldRules>,
    },
}

/// Whether the caller satisfies a role list: the one question field rules ask.
pub trait RoleMatch {
    fn allows(&self, roles: &RoleList) -> bool;
}

impl<F: Fn(&RoleList) -> bool> RoleMatch for F {
    fn allows(&self, roles: &RoleList) -> bool {
        self(roles)
    }
}

impl FieldRules {
    /// The rules of `fields` (a document type's or an object's), resolving named object types
    /// through `schemas`. `schemas` is coherent (no object type contains itself), so this ends.
    pub fn compile(schemas: &Schemas, fields: &[Field]) -> FieldRules {
        let fields = fields
            .iter()
            .filter_map(|field| {
                let nested = Self::nested(schemas, &field.ty);
                let keep = !field.access.is_empty() || nested != Nested::None;
                keep.then(|| FieldNode {
                    name: field.name.clone(),
                    access: field.access.clone(),
                    nested,
                })
            })
            .collect();
        FieldRules { fields }
    }

    fn nested(schemas: &Schemas, ty: &FieldType) -> Nested {
        if let FieldType::Array { of, .. } = ty {
            let rules: Vec<FieldRules> =
                of.iter().map(|m| Self::of_value(schemas, &m.ty)).collect();
            return if rules.iter().all(FieldRules::is_empty) {
                Nested::None
            } else {
                Nested::Members {
                    of: of.clone(),
                    rules,
                }
            };
        }
        let rules = Self::of_value(schemas, ty);
        if rules.is_empty() {
            Nested::None
        } else {
            Nested::Object(rules)
        }
    }

    /// The rules inside an object-shaped value of type `ty`; empty for other types.
    fn of_value(schemas: &Schemas, ty: &FieldType) -> FieldRules {
        schemas
            .children(ty)
            .map(|fields| Self::compile(schemas, fields))
            .unwrap_or_default()
    }

    /// No field of the type carries a rule: nothing to strip, drop or hide.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Whether some field of the type (at any depth) is one the caller may not read. Such a
    /// caller must not see a digest of the whole data either (`publishedHash`): with the rest
    /// of the data in hand, a guessable hidden value could be confirmed by hashing guesses.
    pub fn hides_from(&self, caller: &dyn RoleMatch) -> bool {
        self.fields.iter().any(|node| {
            node.access.read.as_ref().is_some_and(|r| !caller.allows(r))
                || match &node.nested {
                    Nested::None => false,
                    Nested::Object(rules) => rules.hides_from(caller),
                    Nested::Members { rules, .. } => rules.iter().any(|r| r.hides_from(caller)),
                }
        })
    }

    /// Removes every field the caller may not read from `data` (at any depth).
    pub fn strip(&self, data: &mut Value, caller: &dyn RoleMatch) {
        let Some(map) = data.as_object_mut() else {
            return;
        };
        for node in &self.fields {
            if node.access.read.as_ref().is_some_and(|r| !caller.allows(r)) {
                map.remove(&node.name);
            } else if let Some(value) = map.get_mut(&node.name) {
                node.nested.strip(value, caller);
            }
        }
    }

    /// Undoes, in `incoming`, every write to a field the caller may not update: such a field
    /// keeps its value in `stored` (the current data; `None` on create, where it is absent).
    /// A field the caller may not read is one they may not update either: they never saw its
    /// value, so a whole-draft write of theirs (which necessarily leaves it out) must not
    /// erase it, and they must not overwrite it blind.
    pub fn keep_unwritable(
        &self,
        incoming: &mut Value,
        stored: Option<&Value>,
        caller: &dyn RoleMatch,
    ) {
        let Some(map) = incoming.as_object_mut() else {
            return;
        };
        for node in &self.fields {
            let before = stored.and_then(|s| s.get(&node.name));
            let unreadable = node.access.read.as_ref().is_some_and(|r| !caller.allows(r));
            let unwritable = node
                .access
                .update
                .as_ref()
                .is_some_and(|r| !caller.allows(r));
            if unreadable || unwritable {
                match before {
                    Some(value) => map.insert(node.name.clone(), value.clone()),
                    None => map.remove(&node.name),
                };
            } else if let Nested::Object(rules) = &node.nested {
                keep_inside_object(rules, map, &node.name, before, caller);
            } else if let Some(value) = map.get_mut(&node.name) {
                node.nested.keep_unwritable(value, before, caller);
            }
        }
    }

    /// Whether the caller may read the field at a dotted path (paths descend objects only, as
    /// in the `where` language): false when the field or one containing it is hidden.
    pub fn readable(&self, path: &[&str], caller: &dyn RoleMatch) -> bool {
        let Some((first, rest)) = path.split_first() else {
            return true;
        };
        let Some(node) = self.fields.iter().find(|n| n.name == *first) else {
            return true;
        };
        if node.access.read.as_ref().is_some_and(|r| !caller.allows(r)) {
            return false;
        }
        match &node.nested {
            Nested::Object(rules) => rules.readable(rest, caller),
            _ => true,
        }
    }
}

impl Nested {
    fn strip(&self, value: &mut Value, caller: &dyn RoleMatch) {
        match self {
            Nested::None => {}
            Nested::Object(rules) => rules.strip(value, caller),
            Nested::Members { of, rules } => {
                for item in value.as_array_mut().into_iter().flatten() {
                    for rules in member_rules(of, rules, item) {
                        rules.strip(item, caller);
                    }
                }
            }
        }
    }

    fn keep_unwritable(&self, value: &mut Value, stored: Option<&Value>, caller: &dyn RoleMatch) {
        match self {
            Nested::None => {}
            Nested::Object(rules) => rules.keep_unwritable(value, stored, caller),
            Nested::Members { of, rules } => {
                let stored_items = stored.and_then(Value::as_array);
                for (i, item) in value.as_array_mut().into_iter().flatten().enumerate() {
                    let before = stored_items.and_then(|items| counterpart(items, item, i));
                    for rules in member_rules(of, rules, item) {
                        rules.keep_unwritable(item, before, caller);
                    }
                }
            }
        }
    }
}

/// A writable object holding unwritable fields may be rewritten, left out or nulled, but the
/// unwritable values inside it survive: leaving out `seo` must not erase `seo.internal` for
/// someone who may not update it. Array items, by contrast, may be removed with their content.
fn keep_inside_object(
    rules: &FieldRules,
    map: &mut Map<String, Value>,
    name: &str,
    before: Option<&Value>,
    caller: &dyn RoleMatch,
) {
    match map.get_mut(name) {
        Some(value) if value.is_object() => rules.keep_unwritable(value, before, caller),
        _ => {
            let mut kept = Value::Object(Map::new());
            rules.keep_unwritable(&mut kept, before, caller);
            if kept.as_object().is_some_and(|m| !m.is_empty()) {
                map.insert(name.to_string(), kept);
            }
        }
    }
}

/// The rules of every member definition an array item may be. Applying all of them is the
/// safe side when an item could be several members.
fn member_rules<'m>(of: &[Field], rules: &'m [FieldRules], item: &Value) -> Vec<&'m FieldRules> {
    let Ok(found) = candidates(of, item) else {
        return Vec::new();
    };
    found
        .into_iter()
        .filter_map(|member| of.iter().position(|f| std::ptr::eq(f, member)))
        .map(|i| &rules[i])
        .filter(|r| !r.is_empty())
        .collect()
}

/// The stored item an incoming array item replaces: the one with the same `_key`; for items
/// without keys on both sides, the one at the same position. A new keyed item has none, so its
/// unwritable fields are absent, as on create.
fn counterpart<'s>(stored: &'s [Value], item: &Value, i: usize) -> Option<&'s Value> {
    let key_of = |v: &Value| v.get("_key").and_then(Value::as_str).map(str::to_owned);
    match key_of(item) {
        Some(key) => stored.iter().find(|s| key_of(s).as_deref() == Some(&key)),
        None => stored.get(i).filter(|s| key_of(s).is_none()),
    }
}

#[cfg(test)]
mod tests;
