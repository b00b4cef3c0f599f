//! The capabilities this instance knows: the core ones and those plugins declared.

use cms_core::{Capability, CapabilityInfo, CapabilitySet, CoreCapability};

/// Every declared capability, with its catalog entry. Only declared capabilities may be granted
/// to a role or a key.
#[derive(Debug, Clone)]
pub struct CapabilityRegistry {
    every: CapabilitySet,
    catalog: Vec<CapabilityInfo>,
}

impl Default for CapabilityRegistry {
    fn default() -> Self {
        CapabilityRegistry::with_plugin_capabilities(Vec::<Capability>::new())
    }
}

impl CapabilityRegistry {
    /// The core capabilities plus the given plugin capabilities, described by their names.
    pub fn with_plugin_capabilities(plugin: impl IntoIterator<Item = Capability>) -> Self {
        Self::with_catalog(plugin.into_iter().map(|name| CapabilityInfo {
            title: name.to_string(),
            description: String::new(),
            group: "plugins".into(),
            plugin: None,
            name,
        }))
    }

    /// The core capabilities plus the plugin capabilities of these catalog entries (a core
    /// capability among them keeps its core entry).
    pub fn with_catalog(plugin: impl IntoIterator<Item = CapabilityInfo>) -> Self {
        let mut every = CapabilitySet::all_core();
        let mut catalog: Vec<CapabilityInfo> =
            CoreCapability::ALL.iter().map(|c| c.info()).collect();
        for info in plugin {
            if matches!(info.name, Capability::Plugin(_)) && !every.contains(&info.name) {
                every.insert(info.name.clone());
                catalog.push(info);
            }
        }
        CapabilityRegistry { every, catalog }
    }

    pub fn every(&self) -> &CapabilitySet {
        &self.every
    }

    /// Every declared capability with its title, description and group: core ones first, then
    /// plugins' in declaration order.
    pub fn catalog(&self) -> &[CapabilityInfo] {
        &self.catalog
    }

    /// Parses a capability and checks it is declared here.
    pub fn parse(&self, raw: &str) -> Option<Capability> {
        raw.parse::<Capability>()
            .ok()
            .filter(|c| self.every.contains(c))
    }
}
