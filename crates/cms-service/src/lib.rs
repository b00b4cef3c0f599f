//! The service layer: the one place where access, transactions and events are decided.
//!
//! Every door (HTTP, GraphQL, CLI, a Rust host application) calls into [`Cms`] with an explicit
//! [`Actor`], and the service checks the actor's capabilities, opens the unit of work, writes and
//! commits. Because every door goes through here, a rule enforced here holds for all of them.
//!
//! Architecture invariant: no SQL here (that is `cms-store`), and no HTTP (that is
//! `cms-server`). Values returned to doors are plain serialisable structs.

mod account;
mod actor;
mod api_keys;
pub mod assets;
pub mod audit;
mod auth;
mod capabilities;
pub mod change_sets;
mod clock;
pub mod documents;
mod error;
pub mod events;
mod field_indexes;
mod health;
pub mod input;
mod instance_settings;
pub mod jobs;
mod locales;
pub mod mail;
mod metrics;
#[cfg(test)]
mod module_tree;
mod organizations;
pub mod paging;
mod password;
pub mod plugin_settings;
mod public_reads;
mod queue;
mod rate_limit;
mod roles;
mod scope;
mod secret;
mod secret_box;
pub mod storage;
pub mod transfer;
pub mod webhooks;

use std::sync::Arc;
use std::sync::atomic::AtomicI64;
use std::time::Duration;

use cms_core::schema::Schemas;
use cms_store::Store;

pub use account::{AccountService, EmailVerified, PasswordChange, ProfileUpdate, SessionSummary};
pub use actor::{
    Actor, Audience, Credential, PLUGIN_USER_PREFIX, PUBLIC_USER_PREFIX, PreviewCredential,
    SessionView, User,
};
pub use api_keys::{ApiKey, ApiKeyService, CreatedApiKey, NewApiKey};
pub use assets::{AssetService, AssetSettings};
pub use audit::{AuditAction, AuditEntry, AuditListRequest, AuditService, AuditTarget};
pub use auth::{
    AuthService, Authenticated, ClaimCode, ClientInfo, Credentials, NewUser, OidcCallback,
    OidcProviderSettings, OidcProviderView, OidcRefusal, OidcSignedIn, OidcStart, Resolved,
    SecondFactor, SignIn, SignInOutcome, SignUp, SignedUp, TwoFactorEnrolment, TwoFactorStatus,
};
pub use capabilities::CapabilityRegistry;
pub use change_sets::ChangeSetService;
pub use clock::{Clock, OffsetClock, SystemClock};
pub use documents::{
    AccessPolicies, DocumentLocation, DocumentService, Policy, PolicyAuth, PolicyDocument,
};
pub use error::{Error, ErrorKind, Result};
pub use events::{
    BUILT_IN_EVENT_TYPES, EventDeclaration, EventService, EventStreamSettings, NewEvent,
};
pub use field_indexes::{IndexingReport, IndexingState};
pub use health::{CheckReport, HealthReport, HealthService, Status};
pub use instance_settings::{InstanceSettingsService, SignUpPolicy, SignUpPolicyView};
pub use jobs::{JobService, Registry, TickReport, Worker};
pub use locales::{LocaleService, LocalesView};
pub use mail::{LogMailer, MailError, MailKind, MailMessage, Mailer};
// `crate::`: the module shares its name with the `metrics` crate it records with.
pub use crate::metrics::{MetricsService, MetricsSettings, UNMATCHED_ROUTE};
pub use organizations::{
    Invitation, InvitationPreview, InvitationSent, InvitationService, Member, MemberService,
    NewMember, NewOrganization, Organization, OrganizationService, OrganizationUpdate,
};
pub use plugin_settings::{PluginSettingsService, PluginSettingsView};
pub use rate_limit::{Limited, RateLimitService, RateLimitSettings};
pub use roles::{NewRole, Role, RoleEdit, RoleService};
pub use secret::{AuthSecret, random_token};
pub use storage::{BlobStore, BlobWriter, ByteStream, ObjectStorage, S3Settings, StorageError};
pub use transfer::{ExportRequest, Transfer, TransferProgress, TransferSummary};
pub use webhooks::WebhookService;

/// Settings the service layer acts on. The `cms` crate fills them from configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The sign-up policy configuration gives, until an instance super admin saves instance
    /// settings. Rules read the effective policy through `Inner::sign_up_policy`, never this.
    pub sign_up: SignUpPolicy,
    /// Limits on sign-in, sign-up and password-reset requests.
    pub rate_limit: RateLimitSettings,
    /// The address people reach the instance at, without a trailing slash
    /// (`https://cms.example.com`): the base of every link in e-mails.
    pub public_url: String,
    /// Lifetime of a session, extended while it is used.
    pub session_lifetime_days: i64,
    /// Lifetime of a preview link's token (`delivery.previewMinutes`).
    pub preview_minutes: i64,
    /// The bound on each health check.
    pub health_timeout: Duration,
    /// Whether /api/cms-health also probes asset storage.
    pub storage_health_check: bool,
    /// Versions kept per document; 0 keeps all.
    pub max_versions: i64,
    pub jobs: JobSettings,
    /// Upload limit, private delivery, link signing, direct upload.
    pub assets: AssetSettings,
    /// The string the key of secret plugin settings is derived from
    /// (CMS_SECRET_ENCRYPTION_KEY); `None`: secrets cannot be saved (422).
    pub secret_encryption_key: Option<String>,
    /// Anonymous reads (the `public` role) one client address may make per minute, counted in
    /// memory per instance (`delivery.publicReadsPerMinute`); 0 turns the limit off.
    pub public_reads_per_minute: u32,
    /// The live event stream's cap, keep-alive, poll and buffer (`events.*`).
    pub events: EventStreamSettings,
    /// Single sign-on providers (`auth.oidc.providers`).
    pub oidc: Vec<OidcProviderSettings>,
    /// Days an audit entry is kept (`audit.retentionDays`).
    pub audit_retention_days: i64,
    /// GET /metrics (`metrics.*`).
    pub metrics: MetricsSettings,
}

/// The queue's bounds (CONTRACT.md section 7).
#[derive(Debug, Clone)]
pub struct JobSettings {
    /// Jobs run per tick (`jobs.batchSize`).
    pub batch_size: i64,
    /// Outbox rows relayed per tick (`jobs.relayBatchSize`).
    pub relay_batch_size: i64,
    /// How long a claimed job is leased before another worker may reclaim it. Each job is
    /// claimed right before its handler starts, so the lease covers that job's run.
    pub lease: Duration,
    /// How long one handler may run (`jobs.handlerTimeoutSeconds`): shorter than `lease`, so a
    /// job is stopped (a failed attempt, retried as usual) before anyone may reclaim it.
    pub handler_timeout: Duration,
    /// The Bearer secret of the HTTP worker endpoint; `None` hides the endpoint (404).
    pub worker_secret: Option<String>,
}

impl Default for JobSettings {
    fn default() -> Self {
        JobSettings {
            batch_size: 25,
            relay_batch_size: 100,
            lease: Duration::from_secs(60),
            handler_timeout: Duration::from_secs(50),
            worker_secret: None,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            sign_up: SignUpPolicy::default(),
            rate_limit: RateLimitSettings::default(),
            public_url: "http://127.0.0.1:3000".into(),
            session_lifetime_days: 7,
            preview_minutes: 60,
            health_timeout: Duration::from_millis(5000),
            storage_health_check: false,
            max_versions: 25,
            jobs: JobSettings::default(),
            assets: AssetSettings::default(),
            secret_encryption_key: None,
            public_reads_per_minute: 600,
            events: EventStreamSettings::default(),
            oidc: Vec::new(),
            audit_retention_days: 365,
            metrics: MetricsSettings::default(),
        }
    }
}

/// The slug of the organization the first administrator owns (created with them), which an
/// operator's command acts in when it names none.
pub const DEFAULT_ORGANIZATION_SLUG: &str = "default";

/// Everything the service layer needs from the outside world.
pub struct Parts {
    pub store: Arc<dyn Store>,
    pub storage: Arc<dyn BlobStore>,
    pub secret: AuthSecret,
    pub settings: Settings,
    pub clock: Arc<dyn Clock>,
    pub capabilities: CapabilityRegistry,
    /// The registered document and object types.
    pub schemas: Arc<Schemas>,
    /// Event consumers and job handlers.
    pub registry: Registry,
    /// Custom event types with their payload schemas; consumers may subscribe only to these
    /// and the built-in ones.
    pub event_types: Vec<events::EventDeclaration>,
    /// Access policy functions of a Rust host application, beside the schemas' role lists.
    pub policies: AccessPolicies,
    /// Delivers invitations, verification and password-reset e-mails.
    pub mailer: Arc<dyn Mailer>,
    /// The plugins' settings declarations; a plugin id declared twice stops the start.
    pub plugin_settings: Vec<cms_core::plugin_settings::SettingsDeclaration>,
}

/// The content service. Cheap to clone; every clone is the same service.
#[derive(Clone)]
pub struct Cms(Arc<Inner>);

pub(crate) struct Inner {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) storage: Arc<dyn BlobStore>,
    pub(crate) secret: AuthSecret,
    pub(crate) settings: Settings,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) capabilities: CapabilityRegistry,
    pub(crate) schemas: Arc<Schemas>,
    pub(crate) registry: Registry,
    pub(crate) event_types: events::EventTypes,
    /// When this process last removed expired rate-limit counters (Unix milliseconds).
    pub(crate) rate_limit_purged_at: AtomicI64,
    /// The day (days since the epoch) this instance last pruned the audit log.
    pub(crate) audit_prune_day: AtomicI64,
    pub(crate) access: documents::AccessRules,
    pub(crate) mailer: Arc<dyn Mailer>,
    /// Signs and checks /media links with the asset signing secret.
    pub(crate) media_signer: cms_core::asset::MediaSigner,
    pub(crate) plugin_settings: Vec<cms_core::plugin_settings::SettingsDeclaration>,
    /// Seals and opens secret plugin settings; `None` without an encryption key.
    pub(crate) secret_box: Option<secret_box::SecretBox>,
    /// Seals and opens two-factor secrets and single sign-on flows (`auth::auth_box`).
    pub(crate) auth_box: secret_box::SecretBox,
    /// The single sign-on providers, discovered on first use.
    pub(crate) oidc: auth::OidcProviders,
    /// How far the field indexes built beside the service have come.
    pub(crate) field_indexing: field_indexes::FieldIndexing,
    /// A digest of the schemas as registered: part of every document read's entity tag, so a
    /// start with other schemas never answers 304 to a body shaped by the old ones.
    pub(crate) schema_fingerprint: [u8; 32],
    /// The in-memory limit on anonymous reads.
    pub(crate) public_reads: public_reads::PublicReadLimiter,
    /// Whether webhook endpoints exist: a handler of their delivery jobs is registered.
    pub(crate) webhooks_on: bool,
    /// The process's one reader of new events, for the open event streams.
    pub(crate) event_hub: events::Hub,
    /// How many image decodes run at once (transforms, placeholders).
    pub(crate) transforms: assets::TransformGate,
    /// What GET /metrics renders; `None` with `metrics.enabled` off.
    pub(crate) metrics: Option<crate::metrics::Recorder>,
}

impl Inner {
    /// An organization and its children (one level deep): what a parent reads with
    /// `includeChildOrganizations`.
    pub(crate) async fn organization_and_children(&self, org: &str) -> Result<Vec<String>> {
        let mut orgs = vec![org.to_string()];
        orgs.extend(self.store.read().await?.child_organization_ids(org).await?);
        Ok(orgs)
    }

    /// The organizations the actor reads while holding `capability` there: its own, plus its
    /// children when asked.
    pub(crate) async fn readable_organizations(
        &self,
        actor: &Actor,
        capability: cms_core::CoreCapability,
        include_children: bool,
    ) -> Result<Vec<String>> {
        let org = actor.require(capability)?;
        if include_children {
            self.organization_and_children(org).await
        } else {
            Ok(vec![org.to_string()])
        }
    }

    /// The organizations a read that serves published content covers
    /// ([`Actor::require_delivery`]): like [`Inner::readable_organizations`], except that an
    /// anonymous `public` reader passes with its role's `capability`, and reads its own
    /// organization only (`includeChildOrganizations` is ignored for it: a child's content is
    /// published under the child's own `public` role).
    pub(crate) async fn deliverable_organizations(
        &self,
        actor: &Actor,
        capability: cms_core::CoreCapability,
        include_children: bool,
    ) -> Result<Vec<String>> {
        let org = actor.require_delivery(capability)?;
        if include_children && !actor.is_public() {
            self.organization_and_children(org).await
        } else {
            Ok(vec![org.to_string()])
        }
    }

    /// An absolute link to `path` (which starts with `/`) on this instance.
    pub(crate) fn link(&self, path: &str) -> String {
        format!("{}{path}", self.settings.public_url)
    }

    /// Sends a message now; a failure is logged and returned.
    pub(crate) async fn send_mail(&self, message: &MailMessage) -> Result<(), MailError> {
        let sent = self.mailer.send(message).await;
        if let Err(e) = &sent {
            tracing::error!(to = %message.to, kind = %message.kind, error = %e, "e-mail not sent");
        }
        sent
    }

    /// Sends a message on a task of its own: the request does not wait for the mail server
    /// (and its timing does not tell whether a message was sent). Failures are logged.
    pub(crate) fn send_mail_later(&self, message: MailMessage) {
        let mailer = self.mailer.clone();
        tokio::spawn(async move {
            if let Err(e) = mailer.send(&message).await {
                tracing::error!(to = %message.to, kind = %message.kind, error = %e, "e-mail not sent");
            }
        });
    }
}

impl Cms {
    /// Starts the service on a migrated store: reconciles what must hold at every boot (the
    /// `owner` role of every organization holds every declared capability).
    /// A policy for an undeclared type, or for an operation the schema already rules, is
    /// refused here (400 in the service's terms: the host's input is wrong), and so is a bad
    /// custom event declaration (see [`events`]) or a consumer subscribed to an unknown event
    /// type.
    pub async fn start(parts: Parts) -> Result<Cms> {
        let access = documents::AccessRules::new(&parts.schemas, &parts.policies)?;
        let event_types = events::EventTypes::new(parts.event_types, &parts.schemas)?;
        parts.registry.check_subscriptions(&event_types)?;
        plugin_settings::check_declarations(&parts.plugin_settings)?;
        let encryption_key = parts
            .settings
            .secret_encryption_key
            .as_deref()
            .filter(|key| !key.is_empty());
        let secret_box = encryption_key.map(secret_box::SecretBox::new);
        let auth_box = auth::auth_box(encryption_key, &parts.secret);
        let oidc = auth::OidcProviders::new(&parts.settings.oidc)?;
        let media_signer =
            cms_core::asset::MediaSigner::new(parts.settings.assets.signing_secret.as_deref());
        let schema_fingerprint = documents::schema_fingerprint(&parts.schemas);
        let public_reads =
            public_reads::PublicReadLimiter::new(parts.settings.public_reads_per_minute);
        let webhooks_on = parts.registry.handler(webhooks::DELIVER_JOB).is_some();
        let event_hub = events::Hub::new(parts.store.clone(), parts.settings.events.clone());
        let metrics = crate::metrics::Recorder::new(&parts.settings.metrics);
        let cms = Cms(Arc::new(Inner {
            store: parts.store,
            storage: parts.storage,
            secret: parts.secret,
            settings: parts.settings,
            clock: parts.clock,
            capabilities: parts.capabilities,
            schemas: parts.schemas,
            registry: parts.registry,
            event_types,
            rate_limit_purged_at: AtomicI64::new(0),
            audit_prune_day: AtomicI64::new(i64::MIN),
            access,
            mailer: parts.mailer,
            media_signer,
            plugin_settings: parts.plugin_settings,
            secret_box,
            auth_box,
            oidc,
            field_indexing: Default::default(),
            schema_fingerprint,
            public_reads,
            webhooks_on,
            event_hub,
            transforms: assets::TransformGate::for_this_machine(),
            metrics,
        }));
        crate::metrics::keep_up(&cms.0);
        organizations::reconcile_owner_roles(&cms.0).await?;
        // Beside the service: on a large table the indexes take minutes to build.
        let building = cms.clone();
        tokio::spawn(async move { field_indexes::build(&building.0).await });
        // Documents stored before a field became searchable (or before search existed) get
        // their search rows in the background: start never waits on a rebuild.
        let rebuilding = cms.clone();
        tokio::spawn(async move {
            if let Err(e) = rebuilding.rebuild_search().await {
                tracing::warn!(error = %e, "search rows not rebuilt; the next start tries again");
            }
        });
        // Data a schema change left behind (renamed, removed or retyped fields) is named in
        // the log once per change of the schemas, from the background.
        let checking = cms.clone();
        tokio::spawn(async move {
            if let Err(e) = checking.check_leftovers().await {
                tracing::warn!(error = %e, "stored documents not checked against the schemas");
            }
        });
        // Images stored before placeholders existed get theirs in the background too.
        let summarizing = cms.clone();
        tokio::spawn(async move {
            match summarizing.summarize_images().await {
                Ok(0) => {}
                Ok(count) => tracing::info!(images = count, "image placeholders computed"),
                Err(e) => {
                    tracing::warn!(error = %e, "image placeholders not computed; the next start tries again")
                }
            }
        });
        Ok(cms)
    }

    /// Computes the placeholder, dominant colour and transparency of every image that has
    /// none yet (uploaded before they existed, or while its bytes could not be read); answers
    /// how many were looked at. `start` runs it in the background; running it twice, or on
    /// several instances at once, computes the same values.
    pub async fn summarize_images(&self) -> Result<usize> {
        assets::summarize_images(&self.0).await
    }

    /// After the schemas changed since the last check, what stored drafts still hold that the
    /// schemas no longer declare as it is (CONTRACT.md section 19), each logged as a warning
    /// naming some of the documents; nothing when they did not change. `start` runs it in the
    /// background.
    pub async fn check_leftovers(&self) -> Result<Vec<documents::Leftover>> {
        const KEY: &str = "content-shape";
        let shape = serde_json::Value::Array(
            self.schemas()
                .all()
                .iter()
                .map(cms_core::schema::Schema::to_json)
                .collect(),
        );
        let signature = cms_core::canonical::published_hash(&shape);
        let checked = {
            let mut tx = self.0.store.read_instance_wide().await?;
            tx.instance_flag(KEY).await?
        };
        if checked.as_deref() == Some(signature.as_str()) {
            return Ok(Vec::new());
        }
        let types: Vec<String> = self.schemas().documents().map(|s| s.name.clone()).collect();
        let leftovers = self.documents().leftovers(&types).await?;
        for left in &leftovers {
            let what = match left.kind {
                "renamed" => "is still stored under the old key: reads and saves map it",
                "removed" => "is no longer declared: reads leave it out",
                _ => "holds values its field's type does not take: correct them before publishing",
            };
            tracing::warn!(
                doc_type = %left.doc_type,
                path = %left.path,
                documents = left.documents,
                examples = %left.examples.join(", "),
                "schema change: {}.{} {what}; `cms migrate-content` rewrites the documents (a dry run lists them)",
                left.doc_type,
                left.path,
            );
        }
        let mut tx = self.0.store.write_instance_wide().await?;
        tx.put_instance_value(KEY, &signature, self.0.clock.now().millis())
            .await?;
        tx.commit().await?;
        Ok(leftovers)
    }

    /// Rebuilds the search rows of every document type whose searchable fields changed since
    /// its rows were built (see `DocumentService::stale_search_types`); answers the types
    /// rebuilt. `start` runs it in the background; running it again, or on several instances
    /// at once, rebuilds the same rows.
    pub async fn rebuild_search(&self) -> Result<Vec<String>> {
        let documents = self.documents();
        let stale = documents.stale_search_types().await?;
        for doc_type in &stale {
            let count = documents.reindex_search(doc_type).await?;
            tracing::info!(doc_type = %doc_type, documents = count, "search rows rebuilt");
        }
        Ok(stale)
    }

    pub fn auth(&self) -> AuthService<'_> {
        AuthService::new(&self.0)
    }

    /// The sign-up policy as instance super admins read and change it.
    pub fn instance_settings(&self) -> InstanceSettingsService<'_> {
        InstanceSettingsService::new(&self.0)
    }

    /// The rate limiter, for doors that limit a route of their own.
    pub fn rate_limits(&self) -> RateLimitService<'_> {
        RateLimitService::new(&self.0)
    }

    /// The audit log: reading it, and its retention.
    pub fn audit(&self) -> AuditService<'_> {
        AuditService::new(&self.0)
    }

    pub fn api_keys(&self) -> ApiKeyService<'_> {
        ApiKeyService::new(&self.0)
    }

    /// Organizations: list, create, switch, read, update, delete.
    pub fn organizations(&self) -> OrganizationService<'_> {
        OrganizationService::new(&self.0)
    }

    /// Whether e-mail reaches people (a real transport, not the log).
    pub fn mail_delivers(&self) -> bool {
        self.0.mailer.delivers()
    }

    /// The members of the active organization.
    pub fn members(&self) -> MemberService<'_> {
        MemberService::new(&self.0)
    }

    /// Invitations to the active organization, and accepting one.
    pub fn invitations(&self) -> InvitationService<'_> {
        InvitationService::new(&self.0)
    }

    /// The caller's own account: profile, preferences, e-mail verification, password reset.
    pub fn account(&self) -> AccountService<'_> {
        AccountService::new(&self.0)
    }

    pub fn documents(&self) -> DocumentService<'_> {
        DocumentService::new(&self.0)
    }

    /// The locales of the active organization (GET /api/locales).
    pub fn locales(&self) -> LocaleService<'_> {
        LocaleService::new(&self.0)
    }

    /// Uploaded files: upload, list, metadata, delete, references, delivery.
    pub fn assets(&self) -> AssetService<'_> {
        AssetService::new(&self.0)
    }

    pub fn roles(&self) -> RoleService<'_> {
        RoleService::new(&self.0)
    }

    /// The plugins' settings per organization (sessions with `org.settings`), and their
    /// decrypted values for the plugins' own code.
    pub fn plugin_settings(&self) -> PluginSettingsService<'_> {
        PluginSettingsService::new(&self.0)
    }

    pub fn jobs(&self) -> JobService<'_> {
        JobService::new(&self.0)
    }

    /// Webhook endpoints (CONTRACT.md section 16), and what the job handler that sends their
    /// deliveries needs.
    pub fn webhooks(&self) -> WebhookService<'_> {
        WebhookService::new(&self.0)
    }

    /// The AI assistant's change sets: what its turns changed, and undo.
    pub fn change_sets(&self) -> ChangeSetService<'_> {
        ChangeSetService::new(self)
    }

    /// Emitting declared custom events.
    pub fn events(&self) -> EventService<'_> {
        EventService::new(&self.0)
    }

    /// An actor for a plugin's own work in `organization_id` (404 when there is no such
    /// organization): every declared capability there, and an instance administrator for
    /// schema and field role lists, so a plugin may store into a type whose schema access lets
    /// no person create (a form submission). Its user is synthetic (`plugin:<plugin_id>`, the
    /// `createdBy` of what it writes) and it is refused (403) by everything bound to a person:
    /// sessions, API keys, profile, preferences, memberships, invitations, role management.
    /// It never crosses into another organization. Only the host's code can call this: no
    /// request carries a plugin credential.
    pub async fn plugin_actor(&self, plugin_id: &str, organization_id: &str) -> Result<Actor> {
        if plugin_id.is_empty() {
            return Err(Error::bad_request("a plugin actor needs a plugin id"));
        }
        if self
            .0
            .store
            .read()
            .await?
            .organization_by_id(organization_id)
            .await?
            .is_none()
        {
            return Err(Error::not_found("organization"));
        }
        let now = self.0.clock.now();
        let role = cms_core::InstanceRole::Admin;
        Ok(Actor {
            user: User {
                id: format!("{PLUGIN_USER_PREFIX}{plugin_id}"),
                email: String::new(),
                name: plugin_id.to_string(),
                email_verified: false,
                role,
                image: None,
                created_at: now,
                updated_at: now,
            },
            organization_id: Some(organization_id.to_string()),
            grant: cms_core::access::user_grant(role, None, self.0.capabilities.every()),
            credential: Credential::Plugin {
                plugin_id: plugin_id.to_string(),
            },
            client_address: None,
        })
    }

    /// An actor for an operator's command at the console (`cms events tail`) in the
    /// organization named by id or slug, or in the `default` organization (the first
    /// administrator's) when none is named; 404 when there is no such organization. It is
    /// [`Cms::plugin_actor`] for the plugin id `tool`: every capability there and an instance
    /// administrator for schema and field rules, as befits whoever holds the database's
    /// credentials and could read the log directly. Only the host's code can call this.
    pub async fn operator_actor(&self, tool: &str, organization: Option<&str>) -> Result<Actor> {
        let key = organization.unwrap_or(DEFAULT_ORGANIZATION_SLUG);
        let found = self
            .0
            .store
            .read()
            .await?
            .organization_by_id_or_slug(key)
            .await?
            .ok_or_else(|| Error::not_found("organization"))?;
        self.plugin_actor(tool, &found.id).await
    }

    /// The queue's driver.
    pub fn worker(&self) -> Worker {
        Worker::new(self.clone())
    }

    /// The registered schemas (GET /api/schemas).
    pub fn schemas(&self) -> &Schemas {
        &self.0.schemas
    }

    /// Every declared capability, core and plugin, with its catalog entry.
    pub fn capabilities(&self) -> &CapabilityRegistry {
        &self.0.capabilities
    }

    pub fn health(&self) -> HealthService<'_> {
        HealthService::new(&self.0)
    }

    /// The instance's metrics (GET /metrics): rendering a scrape, recording a request.
    pub fn metrics(&self) -> MetricsService<'_> {
        MetricsService::new(&self.0)
    }

    pub fn settings(&self) -> &Settings {
        &self.0.settings
    }

    /// The store itself, below every access rule: for host applications' maintenance and for
    /// tests. A door never uses it.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.0.store
    }

    /// Ends every open event stream and refuses new ones (503): call it when the server starts
    /// to drain, so that streams, which never end by themselves, do not hold the shutdown.
    pub fn end_event_streams(&self) {
        self.0.event_hub.close();
    }

    /// Closes the database once the requests in flight have returned their connections (and
    /// ends the event streams still open).
    pub async fn close(&self) {
        self.0.event_hub.close();
        self.0.store.close().await;
    }
}
