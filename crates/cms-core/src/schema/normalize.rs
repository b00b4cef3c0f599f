//! The stored form of document data: what a write does to values besides checking them.
//! Today one rule (CONTRACT.md section 14): a `datetime` is stored in UTC with milliseconds
//! ([`crate::time::normalize_datetime`]), so that `where` ranges and sorts, which compare
//! stored text, compare instants on both engines.

use serde_json::{Map, Value};

use super::localize::Stored;
use super::model::{Field, FieldType};
use super::registry::Schemas;
use super::validate::candidates;
use crate::time::normalize_datetime;

impl Schemas {
    /// Rewrites every `datetime` value of `data` (a document of `type_name`, stored shape:
    /// localized values keyed by locale) into its stored form, at the top, in objects, in
    /// array items and in every locale. A value that is not a readable date-time stays as
    /// it is: a draft may hold it, and publishing reports it (`format`). Undeclared keys and
    /// values of the wrong type are left for the structure check to judge.
    pub fn normalize(&self, type_name: &str, data: &mut Value) {
        if let (Some(schema), Some(map)) = (self.get(type_name), data.as_object_mut()) {
            self.normalize_object(&schema.fields, map);
        }
    }

    fn normalize_object(&self, fields: &[Field], map: &mut Map<String, Value>) {
        for field in fields {
            let Some(value) = map.get_mut(&field.name) else {
                continue;
            };
            let keyed =
                field.localized && matches!(self.stored(&field.ty, value), Stored::Keyed(_));
            match value {
                Value::Object(locales) if keyed => {
                    for value in locales.values_mut() {
                        self.normalize_value(&field.ty, value);
                    }
                }
                value => self.normalize_value(&field.ty, value),
            }
        }
    }

    fn normalize_value(&self, ty: &FieldType, value: &mut Value) {
        match (ty, value) {
            (FieldType::Datetime, Value::String(s)) => {
                if let Some(stored) = normalize_datetime(s) {
                    *s = stored;
                }
            }
            (FieldType::Array { of, .. }, Value::Array(items)) => {
                for item in items {
                    // The member an item is read as, as validation and localization pick it.
                    let member = candidates(of, item).ok().and_then(|c| c.first().copied());
                    if let Some(member) = member {
                        self.normalize_value(&member.ty, item);
                    }
                }
            }
            (ty, Value::Object(map)) => {
                if let Some(fields) = self.children(ty) {
                    self.normalize_object(fields, map);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use crate::locale::Locales;
    use crate::schema::{Schemas, parse_schemas};

    fn schemas() -> Schemas {
        let parsed = parse_schemas(&json!([
            {"type": "object", "name": "window", "fields": [
                {"name": "opens", "type": "datetime"},
                {"name": "day", "type": "date"}
            ]},
            {"type": "document", "name": "event", "fields": [
                {"name": "at", "type": "datetime"},
                {"name": "label", "type": "string"},
                {"name": "day", "type": "date"},
                {"name": "local", "type": "datetime", "localized": true},
                {"name": "window", "type": "window"},
                {"name": "inline", "type": "object", "fields": [
                    {"name": "at", "type": "datetime"}
                ]},
                {"name": "times", "type": "array", "of": [{"type": "datetime"}]},
                {"name": "slots", "type": "array", "of": [{"type": "window"}]},
                {"name": "raw", "type": "json"}
            ]}
        ]))
        .unwrap();
        let available = ["en", "de"].map(String::from);
        let locales = Locales::new(&available, None, &BTreeMap::new()).unwrap();
        Schemas::new(parsed).unwrap().with_locales(locales)
    }

    const IN_PARIS: &str = "2026-11-26T10:00:00+01:00";
    const STORED: &str = "2026-11-26T09:00:00.000Z";

    #[test]
    fn every_datetime_is_stored_in_utc_with_milliseconds() {
        let mut data = json!({
            "at": IN_PARIS,
            "label": IN_PARIS,
            "day": "2026-11-26",
            "local": {"en": IN_PARIS, "de": "2026-11-26T09:00:00Z"},
            "window": {"opens": IN_PARIS, "day": "2026-11-26"},
            "inline": {"at": "2026-11-26t04:00:00-05:00"},
            "times": [IN_PARIS, "not a time"],
            "slots": [{"opens": IN_PARIS}],
            "raw": {"at": IN_PARIS}
        });
        schemas().normalize("event", &mut data);
        assert_eq!(
            data,
            json!({
                "at": STORED,
                "label": IN_PARIS,
                "day": "2026-11-26",
                "local": {"en": STORED, "de": STORED},
                "window": {"opens": STORED, "day": "2026-11-26"},
                "inline": {"at": STORED},
                "times": [STORED, "not a time"],
                "slots": [{"opens": STORED}],
                "raw": {"at": IN_PARIS}
            })
        );
    }

    #[test]
    fn a_localized_value_saved_before_localization_is_normalized_too() {
        let mut data = json!({"local": IN_PARIS});
        schemas().normalize("event", &mut data);
        assert_eq!(data, json!({"local": STORED}));
    }

    #[test]
    fn what_is_not_a_datetime_stays_for_the_checks_to_judge() {
        let s = schemas();
        for value in [json!("tomorrow"), json!(5), json!(null), json!({"x": 1})] {
            let mut data = json!({"at": value.clone(), "undeclared": IN_PARIS});
            s.normalize("event", &mut data);
            assert_eq!(data, json!({"at": value, "undeclared": IN_PARIS}));
        }
        let mut not_an_object = json!([IN_PARIS]);
        s.normalize("event", &mut not_an_object);
        assert_eq!(not_an_object, json!([IN_PARIS]));
        let mut unknown_type = json!({"at": IN_PARIS});
        s.normalize("nope", &mut unknown_type);
        assert_eq!(unknown_type, json!({"at": IN_PARIS}));
    }
}
