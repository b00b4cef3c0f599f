//! The capabilities this instance knows: the core ones and those plugins declared.

use cms_core::{Capability, CapabilitySet};

/// Every declared capability. Only declared capabilities may be granted to a role or a key.
#[derive(Debug, Clone)]
pub struct CapabilityRegistry {
    every: CapabilitySet,
}

impl Default for CapabilityRegistry {
    fn default() -> Self {
        CapabilityRegistry {
            every: CapabilitySet::all_core(),
        }
    }
}

impl CapabilityRegistry {
    /// The core capabilities plus the given plugin capabilities.
    pub fn with_plugin_capabilities(plugin: impl IntoIterator<Item = Capability>) -> Self {
        let mut every = CapabilitySet::all_core();
        for cap in plugin {
            every.insert(cap);
        }
        CapabilityRegistry { every }
    }

    pub fn every(&self) -> &CapabilitySet {
        &self.every
    }

    /// Parses a capability and checks it is declared here.
    pub fn parse(&self, raw: &str) -> Option<Capability> {
        raw.parse::<Capability>()
            .ok()
            .filter(|c| self.every.contains(c))
    }
}
