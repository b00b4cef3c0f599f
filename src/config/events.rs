//! `events.*`: the live event stream (CONTRACT.md section 16).

use serde::Deserialize;

use super::{Config, ConfigError};

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EventsConfig {
    /// Open event streams (GET /api/events/stream) one organization may hold on one instance;
    /// past it a new stream is refused with 429.
    pub max_streams: u32,
}

impl Default for EventsConfig {
    fn default() -> Self {
        EventsConfig { max_streams: 100 }
    }
}

impl Config {
    /// A cap of zero would refuse every stream: say so at start instead.
    pub(super) fn check_events(&self) -> Result<(), ConfigError> {
        if self.events.max_streams == 0 {
            return Err(ConfigError("events.maxStreams must be at least 1".into()));
        }
        Ok(())
    }
}
