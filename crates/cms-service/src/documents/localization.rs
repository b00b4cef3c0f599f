//! The locale of a document read or write (CONTRACT.md section 17).
//!
//! Documents are stored with every locale (`cms_core::schema` module `localize`); this module
//! decides, per request, which locale the caller reads and writes: the `locale` it named,
//! checked against its organization's locales, or the default. A read in one locale serves
//! plain values with `_meta.locale` and `_meta.fallbackLocales`; `locale=*` serves the stored
//! shape. Requests on types without localized fields that name no locale skip all of it.

use std::sync::Arc;

use cms_core::schema::{FallbackLocales, Schemas};
use cms_core::{LocaleChoice, LocaleTag, Locales};
use cms_store::Tx;
use serde_json::Value;

use super::{DocumentService, DocumentView, Perspective};
use crate::error::Result;
use crate::locales::choose;

/// How one request treats localized fields.
#[derive(Debug, Clone)]
pub(crate) struct Localization {
    locales: Arc<Locales>,
    choice: LocaleChoice,
    /// The request named a locale: every document it shows says which (`_meta.locale`), even
    /// of types without localized fields.
    named: bool,
}

impl Localization {
    /// The locale queries read localized fields in: the one asked, the default for `*`.
    pub(crate) fn query_locale(&self) -> &LocaleTag {
        match &self.choice {
            LocaleChoice::One(tag) => tag,
            LocaleChoice::All => self.locales.default_locale(),
        }
    }

    /// Everything of this localization that shapes a body: whether the request named a
    /// locale, and the chain values are looked for in (the organization's locales decide it),
    /// or `*`. Part of a document read's entity tag.
    pub(crate) fn fingerprint(&self) -> String {
        let named = if self.named { "named" } else { "default" };
        match self.chain() {
            Some(chain) => {
                let tags: Vec<&str> = chain.iter().map(|t| t.as_str()).collect();
                format!("{named}:{}", tags.join(","))
            }
            None => format!("{named}:*"),
        }
    }

    /// Where values are looked for, for a read in one locale; `None` for `*`.
    pub(crate) fn chain(&self) -> Option<Vec<&LocaleTag>> {
        match &self.choice {
            LocaleChoice::One(tag) => Some(self.locales.chain(tag)),
            LocaleChoice::All => None,
        }
    }

    /// `view` as the request reads it: localized values in its locale (or all of them), and
    /// `_meta` saying so when the type is localized or the request named a locale.
    /// `fallbackLocales` describes the copy `perspective` reads.
    pub(crate) fn show(
        &self,
        schemas: &Schemas,
        view: &mut DocumentView,
        perspective: Perspective,
    ) {
        let localized = schemas.is_localized_type(&view.doc_type);
        if !localized && !self.named {
            return;
        }
        let Some(chain) = self.chain() else {
            view.meta.locale = Some("*".to_owned());
            return;
        };
        view.meta.locale = Some(chain[0].to_string());
        let mut served = FallbackLocales::new();
        if localized {
            let draft = schemas.localize(&view.doc_type, &mut view.draft_data, &chain);
            let published = view
                .published_data
                .as_mut()
                .map(|data| schemas.localize(&view.doc_type, data, &chain));
            served = match perspective {
                Perspective::Draft => draft,
                Perspective::Published => published.unwrap_or_default(),
            };
        }
        view.meta.fallback_locales = Some(served);
    }

    /// A referenced document's data, embedded by `depth`, in the request's locale.
    pub(crate) fn show_data(&self, schemas: &Schemas, doc_type: &str, data: &mut Value) {
        if let Some(chain) = self.chain()
            && schemas.is_localized_type(doc_type)
        {
            schemas.localize(doc_type, data, &chain);
        }
    }

    /// The data a write stores: `incoming` as sent for `*`, else its values for the request's
    /// locale merged into `current`'s other locales.
    pub(crate) fn stored(
        &self,
        schemas: &Schemas,
        doc_type: &str,
        current: Option<&Value>,
        incoming: Value,
    ) -> Value {
        match &self.choice {
            LocaleChoice::One(tag) if schemas.is_localized_type(doc_type) => {
                schemas.write_locale(doc_type, current, &incoming, tag)
            }
            _ => incoming,
        }
    }
}

impl DocumentService<'_> {
    /// The localization of a request of `org` that asked for `requested`, about documents of
    /// which some are of a localized type when `localized`. The organization's locales are
    /// read in `tx` only when they matter: on an instance with several locales, for a request
    /// that names a locale or reaches a localized type.
    pub(super) async fn localization_in(
        &self,
        tx: &mut dyn Tx,
        org: &str,
        localized: bool,
        requested: Option<&str>,
    ) -> Result<Localization> {
        let locales = if localized || requested.is_some() {
            self.inner.organization_locales(tx, org).await?
        } else {
            self.schemas().shared_locales()
        };
        localization(locales, requested)
    }

    /// [`Self::localization_in`] for documents of one type.
    pub(super) async fn localization_of(
        &self,
        tx: &mut dyn Tx,
        org: &str,
        doc_type: &str,
        requested: Option<&str>,
    ) -> Result<Localization> {
        let localized = self.schemas().is_localized_type(doc_type);
        self.localization_in(tx, org, localized, requested).await
    }

    /// [`Self::localization_of`] in a read unit of its own, opened only when the
    /// organization's locales matter (see [`Self::localization_in`]).
    pub(super) async fn localization(
        &self,
        org: &str,
        doc_type: &str,
        requested: Option<&str>,
    ) -> Result<Localization> {
        let concerned = requested.is_some() || self.schemas().is_localized_type(doc_type);
        if !concerned || !self.schemas().locales().is_multilingual() {
            return localization(self.schemas().shared_locales(), requested);
        }
        let mut tx = self.inner.store.read_for(org).await?;
        self.localization_of(&mut *tx, org, doc_type, requested)
            .await
    }
}

/// What `requested` asks of `locales`.
fn localization(locales: Arc<Locales>, requested: Option<&str>) -> Result<Localization> {
    let choice = choose(&locales, requested)?;
    Ok(Localization {
        locales,
        choice,
        named: requested.is_some(),
    })
}
