//! Localized fields (CONTRACT.md section 17): where they may be declared, and the two shapes of
//! data they give a document.
//!
//! A document is stored with every locale: a localized field's value is an object keyed by
//! locale tag (`{"en": "Hi", "de": "Hallo"}`), holding only the locales that have a value. A
//! request in one locale sees the plain value instead ([`Schemas::localize`]) and writes plain
//! values that change only its own locale ([`Schemas::write_locale`]).
//!
//! A stored value that is not keyed by locale (content saved before the field became
//! localized) is read as the default locale's value, and the next write in any locale keys it
//! under the default: turning `localized` on needs no migration.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};

use super::model::{Field, FieldType};
use super::registry::Schemas;
use super::validate::candidates;
use super::{SchemaError, index, join};
use crate::locale::LocaleTag;

/// For one read in one locale: field path (`title`, `seo.title`, `blocks[2].text`) → the locale
/// whose value was served, for the values taken from a fallback rather than the locale asked.
pub type FallbackLocales = BTreeMap<String, String>;

impl Schemas {
    /// Whether documents of `type_name` have a localized field anywhere (nested ones too).
    pub fn is_localized_type(&self, type_name: &str) -> bool {
        self.localized_types.contains(type_name)
    }

    /// Refuses a localized field inside another one (through nested objects, named object
    /// types and arrays): a value has one locale, never a locale inside a locale.
    pub(super) fn check_localized(&self) -> Result<(), SchemaError> {
        for schema in self.all() {
            for field in &schema.fields {
                self.no_nested_localized(&schema.name, field, &field.name, false)?;
            }
        }
        Ok(())
    }

    fn no_nested_localized(
        &self,
        schema: &str,
        field: &Field,
        path: &str,
        inside: bool,
    ) -> Result<(), SchemaError> {
        if field.localized && inside {
            return Err(SchemaError::new(
                Some(schema),
                Some(path),
                "a localized field cannot be inside another localized field",
            ));
        }
        let inside = inside || field.localized;
        if let Some(fields) = self.children(&field.ty) {
            for child in fields {
                self.no_nested_localized(schema, child, &join(path, &child.name), inside)?;
            }
        }
        if let FieldType::Array { of, .. } = &field.ty {
            for member in of {
                self.no_nested_localized(schema, member, &format!("{path}[]"), inside)?;
            }
        }
        Ok(())
    }

    /// The document types that hold a localized field anywhere.
    pub(super) fn find_localized_types(&self) -> HashSet<String> {
        self.documents()
            .filter(|s| s.fields.iter().any(|f| self.holds_localized(f)))
            .map(|s| s.name.clone())
            .collect()
    }

    /// Whether `field` is localized or holds a localized field (object types cannot contain
    /// themselves, so this ends).
    fn holds_localized(&self, field: &Field) -> bool {
        field.localized || self.type_holds_localized(&field.ty)
    }

    fn type_holds_localized(&self, ty: &FieldType) -> bool {
        match ty {
            FieldType::Array { of, .. } => of.iter().any(|m| self.holds_localized(m)),
            _ => self
                .children(ty)
                .is_some_and(|fields| fields.iter().any(|f| self.holds_localized(f))),
        }
    }

    /// `data` (stored, every locale) as served in one locale: each localized value replaced by
    /// the first value `chain` finds (the locale asked, its fallbacks, the default), or left
    /// out when no locale of the chain has one. Answers the values served from a fallback.
    pub fn localize(
        &self,
        type_name: &str,
        data: &mut Value,
        chain: &[&LocaleTag],
    ) -> FallbackLocales {
        let mut served = FallbackLocales::new();
        if let (Some(schema), Some(map)) = (self.get(type_name), data.as_object_mut()) {
            self.localize_object(&schema.fields, map, "", chain, &mut served);
        }
        served
    }

    fn localize_object(
        &self,
        fields: &[Field],
        map: &mut Map<String, Value>,
        path: &str,
        chain: &[&LocaleTag],
        served: &mut FallbackLocales,
    ) {
        for field in fields {
            let Some(value) = map.get_mut(&field.name) else {
                continue;
            };
            let path = join(path, &field.name);
            if !field.localized {
                self.localize_value(&field.ty, value, &path, chain, served);
                continue;
            }
            match self.pick(&field.ty, value, chain) {
                Some((tag, picked)) => {
                    if chain.first().is_some_and(|asked| *asked != tag) {
                        served.insert(path, tag.to_string());
                    }
                    *value = picked;
                }
                None => {
                    map.remove(&field.name);
                }
            }
        }
    }

    fn localize_value(
        &self,
        ty: &FieldType,
        value: &mut Value,
        path: &str,
        chain: &[&LocaleTag],
        served: &mut FallbackLocales,
    ) {
        if !self.type_holds_localized(ty) {
            return;
        }
        match (ty, value) {
            (FieldType::Array { of, .. }, Value::Array(items)) => {
                for (i, item) in items.iter_mut().enumerate() {
                    if let Some(member) = member_of(of, item) {
                        self.localize_value(&member.ty, item, &index(path, i), chain, served);
                    }
                }
            }
            (_, Value::Object(map)) => {
                if let Some(fields) = self.children(ty) {
                    self.localize_object(fields, map, path, chain, served);
                }
            }
            _ => {}
        }
    }

    /// The first non-null value of `chain` in a stored localized value, with its locale.
    fn pick<'c>(
        &self,
        ty: &FieldType,
        value: &Value,
        chain: &[&'c LocaleTag],
    ) -> Option<(&'c LocaleTag, Value)> {
        match self.stored(ty, value) {
            Stored::Keyed(map) => chain.iter().find_map(|tag| {
                map.get(tag.as_str())
                    .filter(|v| !v.is_null())
                    .map(|v| (*tag, v.clone()))
            }),
            Stored::Unkeyed(value) => chain
                .iter()
                .find(|tag| **tag == self.locales.default_locale())
                .filter(|_| !value.is_null())
                .map(|tag| (*tag, value.clone())),
        }
    }

    /// A stored value of `field` per locale: `(None, value)` for a field that is not
    /// localized, else each available locale's value (a value saved before the field was
    /// localized being the default locale's). For checks that hold per locale (slugs).
    pub fn values_by_locale<'v>(
        &self,
        field: &Field,
        value: &'v Value,
    ) -> Vec<(Option<&LocaleTag>, &'v Value)> {
        if !field.localized {
            return vec![(None, value)];
        }
        match self.stored(&field.ty, value) {
            Stored::Keyed(map) => map
                .iter()
                .filter_map(|(tag, v)| Some((Some(self.locales.find(tag)?), v)))
                .collect(),
            Stored::Unkeyed(value) => vec![(Some(self.locales.default_locale()), value)],
        }
    }

    /// How a stored localized value of type `ty` holds its locales. An object is keyed by
    /// locale when the type's own values are not objects, or when every key is an available
    /// locale; anything else was saved before the field was localized.
    pub(super) fn stored<'v>(&self, ty: &FieldType, value: &'v Value) -> Stored<'v> {
        match value.as_object() {
            Some(map)
                if !takes_object(ty) || map.keys().all(|k| self.locales.find(k).is_some()) =>
            {
                Stored::Keyed(map)
            }
            _ => Stored::Unkeyed(value),
        }
    }

    /// The stored data after a write of `incoming` (plain values, as read in `tag`) over
    /// `current` (stored, every locale; `None` for a new document): each localized value
    /// takes `incoming`'s value for `tag` (a missing or null one removes `tag`'s) and keeps
    /// every other locale's; everything else is `incoming`'s, as a whole-draft write is,
    /// except that an object left out keeps its localized fields' other locales. Array items
    /// keep their other locales when they keep their `_key` (else their position).
    pub fn write_locale(
        &self,
        type_name: &str,
        current: Option<&Value>,
        incoming: &Value,
        tag: &LocaleTag,
    ) -> Value {
        match (self.get(type_name), incoming.as_object()) {
            (Some(schema), Some(map)) => Value::Object(self.write_object(
                &schema.fields,
                current.and_then(Value::as_object),
                map,
                tag,
            )),
            _ => incoming.clone(),
        }
    }

    fn write_object(
        &self,
        fields: &[Field],
        current: Option<&Map<String, Value>>,
        incoming: &Map<String, Value>,
        tag: &LocaleTag,
    ) -> Map<String, Value> {
        // Undeclared keys pass through for the structure check to judge.
        let mut out: Map<String, Value> = incoming
            .iter()
            .filter(|(k, _)| !fields.iter().any(|f| f.name == **k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for field in fields {
            let new = incoming.get(&field.name);
            let old = current.and_then(|c| c.get(&field.name));
            if field.localized {
                let mut locales = self.locales_of(&field.ty, old);
                match new.filter(|v| !v.is_null()) {
                    Some(value) => locales.insert(tag.to_string(), value.clone()),
                    None => locales.remove(tag.as_str()),
                };
                if !locales.is_empty() {
                    out.insert(field.name.clone(), Value::Object(locales));
                }
            } else if let Some(value) = new.filter(|v| !v.is_null()) {
                out.insert(
                    field.name.clone(),
                    self.write_value(&field.ty, old, value, tag),
                );
            } else if let Some(kept) = old.and_then(|old| self.other_locales(&field.ty, old, tag)) {
                // An object left out of a write in one locale still holds the other locales'
                // values of its localized fields: they are not this write's to remove.
                out.insert(field.name.clone(), kept);
            } else if let Some(value) = new {
                out.insert(field.name.clone(), value.clone());
            }
        }
        out
    }

    /// What remains of a stored object value (inline or named) when a write in `tag` leaves
    /// it out: its localized fields' other locales, if any. Arrays are shared structure: an
    /// array left out is removed in every locale, as any structural edit is.
    fn other_locales(&self, ty: &FieldType, old: &Value, tag: &LocaleTag) -> Option<Value> {
        let fields = self.children(ty)?;
        if !self.type_holds_localized(ty) {
            return None;
        }
        let kept = self.write_object(fields, old.as_object(), &Map::new(), tag);
        (!kept.is_empty()).then_some(Value::Object(kept))
    }

    /// A stored localized value's locales, a value saved before localization counting as the
    /// default locale's.
    fn locales_of(&self, ty: &FieldType, stored: Option<&Value>) -> Map<String, Value> {
        match stored.filter(|v| !v.is_null()).map(|v| self.stored(ty, v)) {
            None => Map::new(),
            Some(Stored::Keyed(map)) => map.clone(),
            Some(Stored::Unkeyed(value)) => {
                Map::from_iter([(self.locales.default_locale().to_string(), value.clone())])
            }
        }
    }

    fn write_value(
        &self,
        ty: &FieldType,
        old: Option<&Value>,
        new: &Value,
        tag: &LocaleTag,
    ) -> Value {
        if !self.type_holds_localized(ty) {
            return new.clone();
        }
        match (ty, new) {
            (FieldType::Array { of, .. }, Value::Array(items)) => {
                let old_items = old.and_then(Value::as_array).map(Vec::as_slice);
                let items = items.iter().enumerate().map(|(i, item)| {
                    let Some(member) = member_of(of, item) else {
                        return item.clone();
                    };
                    let previous = old_items.and_then(|olds| same_item(olds, item, i));
                    self.write_value(&member.ty, previous, item, tag)
                });
                Value::Array(items.collect())
            }
            (_, Value::Object(map)) => match self.children(ty) {
                Some(fields) => Value::Object(self.write_object(
                    fields,
                    old.and_then(Value::as_object),
                    map,
                    tag,
                )),
                None => new.clone(),
            },
            _ => new.clone(),
        }
    }
}

/// How a stored localized value holds its locales.
pub(super) enum Stored<'v> {
    /// Locale tag → that locale's value.
    Keyed(&'v Map<String, Value>),
    /// Saved before the field was localized: the default locale's value.
    Unkeyed(&'v Value),
}

/// Whether a type's own values are JSON objects (so an object is not by itself keyed).
fn takes_object(ty: &FieldType) -> bool {
    matches!(
        ty,
        FieldType::Slug { .. }
            | FieldType::Reference { .. }
            | FieldType::Image { .. }
            | FieldType::File { .. }
            | FieldType::Object { .. }
            | FieldType::Named(_)
            | FieldType::Json
    )
}

/// The member definition an array item is read as (the first candidate when several fit).
fn member_of<'f>(of: &'f [Field], item: &Value) -> Option<&'f Field> {
    candidates(of, item).ok()?.into_iter().next()
}

/// The stored item `item` continues: the one with its `_key`, else the one at its position.
fn same_item<'v>(olds: &'v [Value], item: &Value, i: usize) -> Option<&'v Value> {
    match item.get("_key").and_then(Value::as_str) {
        Some(key) => olds
            .iter()
            .find(|o| o.get("_key").and_then(Value::as_str) == Some(key)),
        None => olds.get(i),
    }
}

#[cfg(test)]
mod tests;
