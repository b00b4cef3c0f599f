//! The first-party plugins, enabled by default (`plugins.forms`, `plugins.webhooks`). They are
//! built with nothing but the public plugin API of [`crate::plugin`], like a host's own.

pub mod forms;
pub mod webhooks;

use std::sync::Arc;

use crate::Config;
use crate::plugin::Plugin;

type Plugins = Vec<Arc<dyn Plugin>>;

/// The first-party plugins the configuration enables: those registered before the host's
/// plugins, and those registered after them (`webhooks`, last as it always was; it no longer
/// depends on the order, since the relay, not a subscription, decides what it sends).
pub(crate) fn first_party(config: &Config) -> (Plugins, Plugins) {
    let mut before: Vec<Arc<dyn Plugin>> = Vec::new();
    let mut after: Vec<Arc<dyn Plugin>> = Vec::new();
    if config.plugins.forms {
        before.push(Arc::new(forms::Forms::new(&config.plugins)));
    }
    if config.plugins.webhooks {
        after.push(Arc::new(webhooks::Webhooks::new(&config.plugins)));
    }
    (before, after)
}
