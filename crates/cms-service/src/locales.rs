//! The locales an organization works in (CONTRACT.md section 17): the instance's, which the
//! schemas carry, narrowed by the organization's own choice when it made one.

use std::collections::BTreeMap;
use std::sync::Arc;

use cms_core::{LocaleChoice, Locales};
use cms_store::Tx;
use serde::Serialize;

use crate::Inner;
use crate::actor::Actor;
use crate::error::{Error, Result};

/// GET /api/locales: what the active organization may read and write.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct LocalesView {
    /// Tags, the default first among equals only by configuration order.
    pub available: Vec<String>,
    pub default: String,
    /// Tag → the tag a missing value is looked for in next (every chain ends at `default`).
    pub fallbacks: BTreeMap<String, String>,
}

impl From<&Locales> for LocalesView {
    fn from(locales: &Locales) -> Self {
        LocalesView {
            available: locales
                .available()
                .iter()
                .map(ToString::to_string)
                .collect(),
            default: locales.default_locale().to_string(),
            fallbacks: locales
                .fallbacks()
                .iter()
                .map(|(from, to)| (from.to_string(), to.to_string()))
                .collect(),
        }
    }
}

pub struct LocaleService<'a> {
    inner: &'a Inner,
}

impl<'a> LocaleService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        LocaleService { inner }
    }

    /// The locales of the actor's active organization (the instance's without one). Any
    /// signed-in actor may ask: which languages exist is not a secret of the content.
    pub async fn get(&self, actor: &Actor) -> Result<LocalesView> {
        let locales = match &actor.organization_id {
            Some(org) => {
                let mut tx = self.inner.store.read_instance_wide().await?;
                self.inner.organization_locales(&mut *tx, org).await?
            }
            None => self.inner.schemas.shared_locales(),
        };
        Ok(LocalesView::from(&*locales))
    }
}

impl Inner {
    /// The locales `org` works in. An instance with one locale has nothing to narrow, so it
    /// reads nothing; otherwise the organization's row says. A stored choice that the
    /// configuration no longer fully allows keeps what it still allows (and the default).
    pub(crate) async fn organization_locales(
        &self,
        tx: &mut dyn Tx,
        org: &str,
    ) -> Result<Arc<Locales>> {
        let instance = self.schemas.locales();
        if !instance.is_multilingual() {
            return Ok(self.schemas.shared_locales());
        }
        let chosen = tx
            .organization_by_id(org)
            .await?
            .and_then(|o| o.locales)
            .map(|tags| tags.0);
        Ok(match chosen {
            None => self.schemas.shared_locales(),
            Some(tags) => {
                let mut kept: Vec<String> = tags
                    .into_iter()
                    .filter(|t| instance.find(t).is_some())
                    .collect();
                let default = instance.default_locale().to_string();
                if !kept.iter().any(|t| t.eq_ignore_ascii_case(&default)) {
                    kept.push(default);
                }
                match instance.narrowed(&kept) {
                    Ok(narrowed) => Arc::new(narrowed),
                    Err(_) => self.schemas.shared_locales(),
                }
            }
        })
    }
}

/// What a request's `locale` asks of `locales`; an unknown tag is a 400.
pub(crate) fn choose(locales: &Locales, raw: Option<&str>) -> Result<LocaleChoice> {
    locales.choose(raw).map_err(Error::bad_request)
}
