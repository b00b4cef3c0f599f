//! What reacts to events and runs jobs: event consumers and job handlers, registered from Rust
//! (the plugin issue exposes the same registry as extension points).

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::JobView;
use crate::events::{EventTypes, EventView, namespaced};
use crate::queue::is_reserved_job_type;
use crate::{Cms, Error};

/// A handler's failure: the job is retried with backoff, then dead-lettered.
pub type HandlerError = Box<dyn std::error::Error + Send + Sync>;

/// What a handler receives beside its event or job: database access through the service layer
/// (so every rule holds), a logger (a span naming the job; log with `tracing` inside it) and
/// its settings: for a consumer or handler of a plugin that declared settings, that plugin's
/// values in the event's or job's organization, secrets decrypted
/// ([`crate::PluginSettingsService::values_for`]); otherwise the settings registered with it
/// (`{}` when none were).
pub struct HandlerContext {
    pub cms: Cms,
    /// The id of the job being run: for a consumer, its delivery job, the same on every retry
    /// of that delivery (a stable name for it, such as a webhook's `x-cms-delivery`).
    pub job_id: String,
    pub log: tracing::Span,
    pub settings: Value,
}

#[async_trait]
pub trait EventHandler: Send + Sync + 'static {
    /// Delivery is at least once: the same event may arrive again (dedupe by `event.id`).
    async fn handle(&self, ctx: &HandlerContext, event: &EventView) -> Result<(), HandlerError>;
}

#[async_trait]
pub trait JobHandler: Send + Sync + 'static {
    async fn run(&self, ctx: &HandlerContext, job: &JobView) -> Result<(), HandlerError>;
}

/// An event consumer: subscribed to event types by exact name.
#[derive(Clone)]
pub struct Consumer {
    pub id: String,
    pub events: Vec<String>,
    /// Attempts per delivery; the queue default when `None`.
    pub max_attempts: Option<i64>,
    pub handler: Arc<dyn EventHandler>,
    /// Handed to the handler as [`HandlerContext::settings`], unless the consumer belongs to
    /// a plugin with declared settings.
    pub settings: Value,
    /// The plugin the consumer belongs to. When that plugin declared settings, the handler
    /// receives the organization's values of them instead of `settings`.
    pub plugin: Option<String>,
}

#[derive(Clone)]
pub(crate) struct HandlerEntry {
    pub(crate) handler: Arc<dyn JobHandler>,
    pub(crate) settings: Value,
    /// As [`Consumer::plugin`].
    pub(crate) plugin: Option<String>,
}

/// Consumers and job handlers, checked when registered.
#[derive(Clone, Default)]
pub struct Registry {
    consumers: Vec<Consumer>,
    handlers: HashMap<String, HandlerEntry>,
}

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("an event consumer with id `{0}` is already registered")]
    DuplicateConsumer(String),
    #[error("a handler for job type `{0}` is already registered")]
    DuplicateHandler(String),
    #[error("`{0}` is not a namespaced name (like `vendor.thing`)")]
    NotNamespaced(String),
    #[error("job type `{0}` belongs to the service (as every type under `cms.` does)")]
    Reserved(String),
    #[error("consumer `{0}` subscribes to no event")]
    NoEvents(String),
    #[error("maxAttempts of consumer `{0}` must be 1 or more")]
    Attempts(String),
}

impl Registry {
    pub fn consumer(mut self, consumer: Consumer) -> Result<Self, RegistryError> {
        if consumer.id.trim().is_empty() || self.consumers.iter().any(|c| c.id == consumer.id) {
            return Err(RegistryError::DuplicateConsumer(consumer.id));
        }
        if consumer.events.is_empty() {
            return Err(RegistryError::NoEvents(consumer.id));
        }
        if let Some(bad) = consumer.events.iter().find(|e| !namespaced(e)) {
            return Err(RegistryError::NotNamespaced(bad.clone()));
        }
        if consumer.max_attempts.is_some_and(|n| n < 1) {
            return Err(RegistryError::Attempts(consumer.id));
        }
        self.consumers.push(consumer);
        Ok(self)
    }

    pub fn job_handler(
        self,
        job_type: &str,
        handler: Arc<dyn JobHandler>,
    ) -> Result<Self, RegistryError> {
        self.job_handler_with_settings(job_type, handler, Value::Object(Default::default()))
    }

    /// A job handler that receives `settings` as [`HandlerContext::settings`].
    pub fn job_handler_with_settings(
        self,
        job_type: &str,
        handler: Arc<dyn JobHandler>,
        settings: Value,
    ) -> Result<Self, RegistryError> {
        self.insert_handler(job_type, handler, settings, None)
    }

    /// A job handler of plugin `plugin_id`: when the plugin declared settings, the handler
    /// receives the job organization's values of them as [`HandlerContext::settings`].
    pub fn plugin_job_handler(
        self,
        plugin_id: &str,
        job_type: &str,
        handler: Arc<dyn JobHandler>,
    ) -> Result<Self, RegistryError> {
        self.insert_handler(
            job_type,
            handler,
            Value::Object(Default::default()),
            Some(plugin_id.to_string()),
        )
    }

    fn insert_handler(
        mut self,
        job_type: &str,
        handler: Arc<dyn JobHandler>,
        settings: Value,
        plugin: Option<String>,
    ) -> Result<Self, RegistryError> {
        if !namespaced(job_type) {
            return Err(RegistryError::NotNamespaced(job_type.to_string()));
        }
        if is_reserved_job_type(job_type) {
            return Err(RegistryError::Reserved(job_type.to_string()));
        }
        if self.handlers.contains_key(job_type) {
            return Err(RegistryError::DuplicateHandler(job_type.to_string()));
        }
        self.handlers.insert(
            job_type.to_string(),
            HandlerEntry {
                handler,
                settings,
                plugin,
            },
        );
        Ok(self)
    }

    pub(crate) fn subscribers<'a>(
        &'a self,
        event_type: &'a str,
    ) -> impl Iterator<Item = &'a Consumer> {
        self.consumers
            .iter()
            .filter(move |c| c.events.iter().any(|e| e == event_type))
    }

    /// Every registered consumer, in registration order.
    pub(crate) fn consumers(&self) -> &[Consumer] {
        &self.consumers
    }

    /// Checks every consumer's subscriptions against the event types (built-in and declared)
    /// at start; the error says which consumer is wrong and why.
    pub(crate) fn check_subscriptions(&self, types: &EventTypes) -> crate::Result<()> {
        for consumer in self.consumers() {
            if let Some(unknown) = consumer.events.iter().find(|e| !types.is_known(e)) {
                return Err(Error::bad_request(format!(
                    "event consumer `{}` subscribes to `{unknown}`, which is neither a built-in \
                     nor a declared event type",
                    consumer.id
                )));
            }
        }
        Ok(())
    }

    pub(crate) fn consumer_by_id(&self, id: &str) -> Option<&Consumer> {
        self.consumers.iter().find(|c| c.id == id)
    }

    pub(crate) fn handler(&self, job_type: &str) -> Option<&HandlerEntry> {
        self.handlers.get(job_type)
    }
}

#[cfg(test)]
mod tests {
    use cms_core::schema::Schemas;

    use super::*;
    use crate::events::EventDeclaration;

    struct Nothing;
    #[async_trait]
    impl EventHandler for Nothing {
        async fn handle(&self, _: &HandlerContext, _: &EventView) -> Result<(), HandlerError> {
            Ok(())
        }
    }
    #[async_trait]
    impl JobHandler for Nothing {
        async fn run(&self, _: &HandlerContext, _: &JobView) -> Result<(), HandlerError> {
            Ok(())
        }
    }

    fn consumer(id: &str, events: &[&str]) -> Consumer {
        Consumer {
            id: id.into(),
            events: events.iter().map(|e| e.to_string()).collect(),
            max_attempts: None,
            handler: Arc::new(Nothing),
            settings: Value::Null,
            plugin: None,
        }
    }

    #[test]
    fn declarations_are_checked() {
        let registry = Registry::default()
            .consumer(consumer("search", &["document.published"]))
            .unwrap();
        assert!(matches!(
            registry
                .clone()
                .consumer(consumer("search", &["document.published"])),
            Err(RegistryError::DuplicateConsumer(_))
        ));
        assert!(matches!(
            registry.clone().consumer(consumer("x", &["published"])),
            Err(RegistryError::NotNamespaced(_))
        ));
        assert!(matches!(
            registry.clone().consumer(consumer("y", &[])),
            Err(RegistryError::NoEvents(_))
        ));
        let registry = registry
            .job_handler("acme.sync", Arc::new(Nothing))
            .unwrap();
        assert!(matches!(
            registry.clone().job_handler("acme.sync", Arc::new(Nothing)),
            Err(RegistryError::DuplicateHandler(_))
        ));
        assert!(matches!(
            registry
                .clone()
                .job_handler("cms.event.deliver", Arc::new(Nothing)),
            Err(RegistryError::Reserved(_))
        ));
        assert!(matches!(
            registry
                .clone()
                .job_handler("document.schedule", Arc::new(Nothing)),
            Err(RegistryError::Reserved(_))
        ));
        assert_eq!(registry.subscribers("document.published").count(), 1);
        assert_eq!(registry.subscribers("document.deleted").count(), 0);
    }

    /// The start's two checks: the declared event types, then the consumers' subscriptions
    /// against them.
    fn start(declared: &[&str], registry: &Registry) -> crate::Result<()> {
        let declarations = declared
            .iter()
            .map(|name| EventDeclaration::new(*name, Vec::new()))
            .collect();
        let types = EventTypes::new(declarations, &Schemas::default())?;
        registry.check_subscriptions(&types)
    }

    #[test]
    fn consumers_subscribe_to_known_types_only() {
        let registry = Registry::default()
            .consumer(consumer("search", &["document.published", "user.deleted"]))
            .unwrap()
            .consumer(consumer("mailer", &["forms.submission.created"]))
            .unwrap();
        assert!(start(&["forms.submission.created"], &registry).is_ok());
        assert_eq!(
            start(&[], &registry).unwrap_err().to_string(),
            "event consumer `mailer` subscribes to `forms.submission.created`, which is neither \
             a built-in nor a declared event type"
        );
    }
}
