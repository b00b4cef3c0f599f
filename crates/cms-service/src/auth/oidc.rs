//! Single sign-on with OpenID Connect (CONTRACT.md section 20): a sign-in starts at a
//! configured provider and comes back with a code, which `cms-oidc` trades for a checked ID
//! token. What the token says decides the account:
//!
//! 1. a subject linked before signs in to its account;
//! 2. otherwise a **verified** e-mail address of an existing account links the subject to it
//!    (an unverified one never does: whoever controls the provider account could claim
//!    anyone's address);
//! 3. otherwise a new account is made when an open invitation names the address (it joins
//!    that organization with the invited role) or its domain is in `allowedDomains` (it joins
//!    the provider's `organization` with `defaultRole`). Anyone else is refused.
//!
//! A person with two-factor sign-in on still gives a code: the provider proves who they are
//! there, the code that they hold their authenticator here.
//!
//! The values the return needs (state, nonce, PKCE verifier, where to go after) travel in the
//! browser, sealed ([`crate::secret_box`]) so they can be neither read nor forged, and expire
//! after ten minutes. Providers' discovery documents are read on first use and kept an hour.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cms_core::redirect::same_origin_path;
use cms_core::{Email, InstanceRole, Timestamp, new_id};
use cms_oidc::{Identity, Provider, ProviderSettings};
use cms_store::Tx;
use cms_store::users::UserRecord;
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use super::{AuthService, ClientInfo, SignInOutcome};
use crate::error::{Error, Result};
use crate::organizations;
use crate::secret_box::SecretSlot;

/// How long a started sign-in may take at the provider.
const FLOW_LIFETIME_MS: i64 = 10 * 60_000;
/// How long a discovery document (and the provider's signing keys) is kept.
const DISCOVERY_TTL: Duration = Duration::from_secs(3600);
/// How long one request to a provider may take.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);

/// One configured provider (`auth.oidc.providers`).
#[derive(Debug, Clone)]
pub struct OidcProviderSettings {
    /// Lowercase letters, digits and `-`: the provider's part of its URLs.
    pub id: String,
    /// The sign-in button's label.
    pub name: String,
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
    pub scopes: Vec<String>,
    /// E-mail domains (lowercase) whose people get an account on their first sign-in.
    pub allowed_domains: Vec<String>,
    /// The organization (id or slug) new accounts join; `None`: the default organization.
    pub organization: Option<String>,
    /// Their role there.
    pub default_role: String,
}

/// A provider as the sign-in page lists it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OidcProviderView {
    pub id: String,
    pub name: String,
    /// Where the sign-in button goes.
    pub start_url: String,
}

/// A started sign-in: where to send the browser, and the sealed flow the door keeps in a
/// cookie until the browser comes back.
#[derive(Debug)]
pub struct OidcStart {
    pub location: String,
    pub flow: String,
}

/// The provider's answer, as the browser brings it back.
#[derive(Debug, Default)]
pub struct OidcCallback {
    pub code: Option<String>,
    pub state: Option<String>,
    /// The provider's `error` (`access_denied` when the person declined).
    pub error: Option<String>,
    /// The sealed flow from the cookie.
    pub flow: Option<String>,
    pub client: ClientInfo,
}

/// A finished sign-in: a session or a two-factor challenge, and where the person was going.
#[derive(Debug)]
pub struct OidcSignedIn {
    pub outcome: SignInOutcome,
    pub return_to: Option<String>,
}

/// Why a sign-in through a provider was refused: what the person is told, by a stable code
/// the sign-in page turns into words (never free text in a URL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OidcRefusal {
    /// The person declined (or cancelled) at the provider.
    Denied,
    /// The return did not match a sign-in started here (state, cookie, or its age).
    State,
    /// The provider refused the code, or its ID token failed a check.
    Code,
    /// The provider did not say the e-mail address is verified, or gave none.
    Unverified,
    /// No account has this address, and its domain may not sign up.
    Domain,
    /// The provider cannot be reached.
    Unavailable,
}

impl OidcRefusal {
    pub fn code(self) -> &'static str {
        match self {
            OidcRefusal::Denied => "denied",
            OidcRefusal::State => "state",
            OidcRefusal::Code => "code",
            OidcRefusal::Unverified => "unverified",
            OidcRefusal::Domain => "domain",
            OidcRefusal::Unavailable => "unavailable",
        }
    }
}

/// The configured providers, each discovered on first use.
pub(crate) struct OidcProviders {
    http: Option<cms_oidc::HttpClient>,
    providers: Vec<Configured>,
}

struct Configured {
    settings: OidcProviderSettings,
    discovered: Mutex<Option<(Arc<Provider>, Instant)>>,
}

impl OidcProviders {
    pub(crate) fn new(settings: &[OidcProviderSettings]) -> Result<Self> {
        let http = if settings.is_empty() {
            None
        } else {
            Some(
                cms_oidc::http_client(PROVIDER_TIMEOUT)
                    .map_err(|e| Error::Internal(format!("single sign-on: {e}")))?,
            )
        };
        Ok(OidcProviders {
            http,
            providers: settings
                .iter()
                .map(|s| Configured {
                    settings: s.clone(),
                    discovered: Mutex::new(None),
                })
                .collect(),
        })
    }

    fn get(&self, id: &str) -> Result<&Configured> {
        self.providers
            .iter()
            .find(|p| p.settings.id == id)
            .ok_or_else(|| Error::not_found("identity provider"))
    }
}

/// What the browser carries between the start and the return, sealed.
#[derive(Serialize, Deserialize)]
struct Flow {
    provider: String,
    state: String,
    nonce: String,
    verifier: String,
    return_to: Option<String>,
    expires_at: i64,
}

impl AuthService<'_> {
    /// The providers the sign-in page offers.
    pub fn oidc_providers(&self) -> Vec<OidcProviderView> {
        self.inner
            .oidc
            .providers
            .iter()
            .map(|p| OidcProviderView {
                id: p.settings.id.clone(),
                name: p.settings.name.clone(),
                start_url: format!("/api/auth/oidc/{}/start", p.settings.id),
            })
            .collect()
    }

    /// Starts a sign-in at `provider` (404 when not configured; 503 when it cannot be
    /// reached). `return_to` is kept when it is a path of this instance.
    pub async fn start_oidc(&self, provider: &str, return_to: Option<&str>) -> Result<OidcStart> {
        let configured = self.inner.oidc.get(provider)?;
        let client = self
            .discovered(configured)
            .await
            .map_err(|e| Error::Unavailable(e.to_string()))?;
        let authorization = client.authorize();
        let flow = Flow {
            provider: provider.to_string(),
            state: authorization.state,
            nonce: authorization.nonce,
            verifier: authorization.pkce_verifier,
            return_to: return_to.and_then(same_origin_path).map(str::to_string),
            expires_at: self.inner.clock.now().millis() + FLOW_LIFETIME_MS,
        };
        let json = serde_json::to_string(&flow).map_err(|e| Error::Internal(e.to_string()))?;
        let sealed = self
            .inner
            .auth_box
            .seal(&json, SecretSlot::SignInFlow)
            .map_err(Error::Internal)?;
        Ok(OidcStart {
            location: authorization.url,
            flow: sealed,
        })
    }

    /// Finishes a sign-in that comes back from `provider`: a session (or a two-factor
    /// challenge) for the account the ID token names, or the refusal to show the person.
    /// `Err` only for failures of our own (the store).
    pub async fn complete_oidc(
        &self,
        provider: &str,
        callback: OidcCallback,
    ) -> Result<std::result::Result<OidcSignedIn, OidcRefusal>> {
        let configured = self.inner.oidc.get(provider)?;
        let Some(flow) = self.open_flow(provider, &callback) else {
            return Ok(Err(OidcRefusal::State));
        };
        if let Some(error) = &callback.error {
            tracing::info!(provider, error, "single sign-on declined at the provider");
            return Ok(Err(OidcRefusal::Denied));
        }
        let Some(code) = callback.code.as_deref().filter(|c| !c.is_empty()) else {
            return Ok(Err(OidcRefusal::Code));
        };
        let client = match self.discovered(configured).await {
            Ok(client) => client,
            Err(e) => {
                tracing::warn!(provider, error = %e, "identity provider unavailable");
                return Ok(Err(OidcRefusal::Unavailable));
            }
        };
        let identity = match client.exchange(code, &flow.verifier, &flow.nonce).await {
            Ok(identity) => identity,
            Err(cms_oidc::OidcError::Unavailable(e)) => {
                tracing::warn!(provider, error = %e, "identity provider unavailable");
                return Ok(Err(OidcRefusal::Unavailable));
            }
            Err(e) => {
                tracing::warn!(provider, error = %e, "single sign-on refused");
                return Ok(Err(OidcRefusal::Code));
            }
        };
        let user = match self.account_for(&configured.settings, &identity).await? {
            Ok(user) => user,
            Err(refusal) => return Ok(Err(refusal)),
        };
        let now = self.inner.clock.now();
        let how = format!("single sign-on ({})", configured.settings.name);
        let outcome = self
            .finish_sign_in(user, &callback.client, &how, now)
            .await?;
        Ok(Ok(OidcSignedIn {
            outcome,
            return_to: flow.return_to,
        }))
    }

    /// The flow of this return, when its cookie opens, is this provider's, is not expired and
    /// names the returned state.
    fn open_flow(&self, provider: &str, callback: &OidcCallback) -> Option<Flow> {
        let sealed = callback.flow.as_deref()?;
        let json = self
            .inner
            .auth_box
            .open(sealed, SecretSlot::SignInFlow)
            .ok()?;
        let flow: Flow = serde_json::from_str(&json).ok()?;
        let state_matches = callback.state.as_deref() == Some(flow.state.as_str());
        let live = flow.expires_at > self.inner.clock.now().millis();
        (flow.provider == provider && state_matches && live).then_some(flow)
    }

    /// The provider's client, discovered now or within the last hour.
    async fn discovered(
        &self,
        configured: &Configured,
    ) -> std::result::Result<Arc<Provider>, cms_oidc::OidcError> {
        let mut cached = configured.discovered.lock().await;
        if let Some((client, at)) = cached.as_ref()
            && at.elapsed() < DISCOVERY_TTL
        {
            return Ok(client.clone());
        }
        let http = self
            .inner
            .oidc
            .http
            .clone()
            .expect("a client exists whenever a provider is configured");
        let s = &configured.settings;
        let settings = ProviderSettings {
            issuer: s.issuer.clone(),
            client_id: s.client_id.clone(),
            client_secret: s.client_secret.clone(),
            scopes: s.scopes.clone(),
            redirect_url: self
                .inner
                .link(&format!("/api/auth/oidc/{}/callback", s.id)),
        };
        let client = Arc::new(Provider::discover(&settings, http).await?);
        *cached = Some((client.clone(), Instant::now()));
        Ok(client)
    }

    /// The account `identity` signs in to, linked or made on the way (the module's rules).
    async fn account_for(
        &self,
        provider: &OidcProviderSettings,
        identity: &Identity,
    ) -> Result<std::result::Result<UserRecord, OidcRefusal>> {
        let now = self.inner.clock.now();
        let linked = {
            let mut tx = self.inner.store.read_instance_wide().await?;
            tx.user_by_identity(&provider.id, &identity.subject).await?
        };
        if let Some(user) = linked {
            return Ok(Ok(user));
        }
        let email = match (&identity.email, identity.email_verified) {
            (Some(raw), true) => Email::parse(raw),
            _ => None,
        };
        let Some(email) = email else {
            tracing::info!(provider = %provider.id, "single sign-on without a verified e-mail refused");
            return Ok(Err(OidcRefusal::Unverified));
        };
        let mut tx = self.inner.store.write_instance_wide().await?;
        let user = match tx.user_by_email(email.as_str()).await? {
            Some(user) => user,
            None => match self
                .new_account(&mut *tx, provider, identity, &email, now)
                .await?
            {
                Some(user) => user,
                None => {
                    tracing::info!(provider = %provider.id, "single sign-on of an address that may not sign up refused");
                    return Ok(Err(OidcRefusal::Domain));
                }
            },
        };
        tx.link_identity(&provider.id, &identity.subject, &user.id, now.millis())
            .await?;
        tx.commit().await?;
        tracing::info!(provider = %provider.id, user = %user.id, "single sign-on linked an account");
        Ok(Ok(user))
    }

    /// A new account for a verified address nobody has, when an open invitation names it or
    /// its domain is allowed; `None` otherwise. It has no password (a reset link sets one).
    async fn new_account(
        &self,
        tx: &mut dyn Tx,
        provider: &OidcProviderSettings,
        identity: &Identity,
        email: &Email,
        now: Timestamp,
    ) -> Result<Option<UserRecord>> {
        let domain = email.as_str().rsplit_once('@').map(|(_, d)| d);
        let allowed = domain.is_some_and(|d| provider.allowed_domains.iter().any(|a| a == d));
        let invited = organizations::has_open_invitation(tx, email.as_str(), now).await?;
        if !allowed && !invited {
            return Ok(None);
        }
        if !super::first_admin_exists(tx).await? {
            // The first administrator is claimed under the first-admin policy, never here.
            return Ok(None);
        }
        let name = identity
            .name
            .clone()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| email.as_str().split('@').next().unwrap_or_default().into());
        let user = UserRecord {
            id: new_id(),
            email: email.as_str().to_string(),
            name: name.chars().take(100).collect(),
            password_hash: None,
            email_verified: true,
            role: InstanceRole::Editor.as_str().into(),
            image: None,
            created_at: now.millis(),
            updated_at: now.millis(),
        };
        tx.insert_user(&user).await?;
        if invited {
            organizations::join_open_invitation(tx, &user.id, email.as_str(), now).await?;
        } else {
            self.join_provider_organization(tx, provider, &user.id, now)
                .await?;
        }
        Ok(Some(user))
    }

    /// Makes a new account a member of the provider's organization with its default role.
    async fn join_provider_organization(
        &self,
        tx: &mut dyn Tx,
        provider: &OidcProviderSettings,
        user_id: &str,
        now: Timestamp,
    ) -> Result<()> {
        let key = provider
            .organization
            .as_deref()
            .unwrap_or(crate::DEFAULT_ORGANIZATION_SLUG);
        let misconfigured = || {
            Error::Unavailable(format!(
                "single sign-on through `{}` cannot add people: organization `{key}` or its role `{}` does not exist (auth.oidc.providers)",
                provider.id, provider.default_role
            ))
        };
        let org = tx
            .organization_by_id_or_slug(key)
            .await?
            .ok_or_else(misconfigured)?;
        if tx.role(&org.id, &provider.default_role).await?.is_none() {
            return Err(misconfigured());
        }
        organizations::add_member(tx, &org.id, user_id, &provider.default_role, now).await
    }
}
