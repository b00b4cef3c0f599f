//! `translate_document`: the model writes a document's localized values in one locale from
//! another's, as one recorded write (so the turn's change set undoes it).
//!
//! The model reads the source first (`get_document` with `locale: from`), translates, and
//! submits the translated values in the source's shape. The write goes through the service
//! with `locale: to`, so every other locale is kept. A translation changes only the target
//! locale: a submission that would change a value shared by every locale (a non-localized
//! field, an array's items) or another locale's is refused before anything is written, since
//! a model copying a nested object back could otherwise alter the parts it was not meant to.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use cms_service::documents::{DraftUpdate, ReadOptions, merge_fields};
use cms_service::{Actor, Cms};

use crate::execute::{
    Outcome, arguments, document_of, document_schema, failure, latest, message, operation, to_value,
};
use crate::locale::{locales_of, localized_paths, tag_in};
use crate::tools::Core;

/// `translate_document` arguments.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Translate {
    collection: String,
    id: String,
    from: String,
    to: String,
    translations: Map<String, Value>,
    expected_revision: Option<i64>,
}

pub(crate) async fn run(cms: &Cms, actor: &Actor, args: Value) -> Outcome {
    let a: Translate = match arguments(args) {
        Ok(a) => a,
        Err(e) => return Outcome::read(Err(e)),
    };
    let planned = match plan(cms, actor, &a).await {
        Ok(p) => p,
        Err(e) => return Outcome::read(Err(e)),
    };
    let core = Core::TranslateDocument;
    let before = latest(cms, actor, &a.id).await;
    let updated = cms
        .documents()
        .update(
            actor,
            &a.id,
            DraftUpdate {
                data: planned.data,
                publish: false,
                // Guarded by the revision the translation was planned on: an edit landing in
                // between is reported, never overwritten.
                expected_revision: Some(a.expected_revision.unwrap_or(planned.revision)),
                locale: Some(planned.to.clone()),
            },
        )
        .await;
    match updated {
        Ok((document, validation)) => {
            let after = latest(cms, actor, &a.id).await;
            Outcome {
                result: to_value(json!({
                    "document": document,
                    "validation": validation,
                    "locale": planned.to,
                    "untranslated": planned.untranslated,
                })),
                operation: operation(core, &a.collection, Some(&a.id), true, before, after),
            }
        }
        Err(e) => Outcome {
            result: Err(failure(e)),
            operation: operation(core, &a.collection, Some(&a.id), false, before, before),
        },
    }
}

/// A checked translation: the draft to write in locale `to`, the revision it is based on, and
/// the localized values that still have a `from` value but no `to` value after it.
struct Planned {
    data: Value,
    revision: i64,
    to: String,
    untranslated: Vec<String>,
}

async fn plan(cms: &Cms, actor: &Actor, a: &Translate) -> Result<Planned, Value> {
    let schemas = cms.schemas();
    let schema = document_schema(cms, &a.collection)?;
    if !schemas.is_localized_type(&a.collection) {
        return Err(message(format!(
            "`{}` has no localized fields: it has one value per field for every locale",
            a.collection
        )));
    }
    if a.translations.is_empty() {
        return Err(message("`translations` names no field"));
    }
    if let Some(name) = a
        .translations
        .keys()
        .find(|k| !schema.fields.iter().any(|f| f.name == **k))
    {
        return Err(message(format!(
            "`{name}` is not a field of `{}`",
            a.collection
        )));
    }
    let locales = locales_of(cms, actor).await?;
    let from = tag_in(&locales, &a.from)?;
    let to = tag_in(&locales, &a.to)?;
    if from == to {
        return Err(message("`from` and `to` name the same locale"));
    }
    let read = ReadOptions {
        locale: Some("*".to_owned()),
        ..ReadOptions::default()
    };
    let current = document_of(cms, actor, &a.collection, &a.id, read).await?;
    let stored = &current.draft_data;
    // The target locale's own values (no fallbacks), with the translated fields merged in.
    let mut target = stored.clone();
    schemas.localize(&a.collection, &mut target, &[&to]);
    let data = merge_fields(&target, &a.translations);
    let written = schemas.write_locale(&a.collection, Some(stored), &data, &to);
    // Every locale but the target reads exactly as before.
    let mut changed: Vec<String> = Vec::new();
    for other in locales.available().iter().filter(|t| **t != to) {
        let mut was = stored.clone();
        schemas.localize(&a.collection, &mut was, &[other]);
        let mut now = written.clone();
        schemas.localize(&a.collection, &mut now, &[other]);
        for name in a.translations.keys() {
            if was.get(name) != now.get(name) && !changed.contains(name) {
                changed.push(name.clone());
            }
        }
    }
    if !changed.is_empty() {
        let localized = localized_paths(schemas, &a.collection);
        return Err(json!({
            "error": format!(
                "a translation changes only the `{to}` values of localized fields; these fields would also change values shared by every locale or another locale's: {}. Keep their other parts exactly as get_document shows them.",
                changed.join(", ")
            ),
            "localizedFields": localized,
        }));
    }
    let mut untranslated: Vec<String> = schemas
        .localize(&a.collection, &mut written.clone(), &[&to, &from])
        .into_iter()
        .filter(|(_, served)| *served == from.as_str())
        .map(|(path, _)| path)
        .collect();
    untranslated.sort();
    Ok(Planned {
        data,
        revision: current.meta.revision,
        to: to.to_string(),
        untranslated,
    })
}
