//! `locales.*`: the languages documents are written in (CONTRACT.md section 17).

use std::collections::BTreeMap;

use cms_core::Locales;
use serde::Deserialize;

use super::{Config, ConfigError};

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LocalesConfig {
    /// BCP 47 tags (`en`, `de-AT`); the first is the default unless `default` says otherwise.
    pub available: Vec<String>,
    pub default: Option<String>,
    /// Tag → the tag a missing value is looked for in next (`de-AT = "de"`); every chain ends
    /// at the default. From the environment: `CMS_LOCALES_FALLBACKS="de-AT=de,fr-CA=fr"`.
    pub fallbacks: BTreeMap<String, String>,
}

impl Default for LocalesConfig {
    fn default() -> Self {
        LocalesConfig {
            available: vec!["en".into()],
            default: None,
            fallbacks: BTreeMap::new(),
        }
    }
}

impl Config {
    /// The instance's locales, checked: tags of the BCP 47 shape, the default and every
    /// fallback among the available ones, no fallback loop.
    pub fn locales(&self) -> Result<Locales, ConfigError> {
        let c = &self.locales;
        Locales::new(&c.available, c.default.as_deref(), &c.fallbacks)
            .map_err(|why| ConfigError(format!("locales: {why}")))
    }
}
