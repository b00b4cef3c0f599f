//! An OpenID Connect relying party, as single sign-on needs it (CONTRACT.md section 20): read
//! a provider's discovery document, send the person there with PKCE (S256), a state and a
//! nonce, and trade the code that comes back for an ID token whose signature, issuer,
//! audience, expiry and nonce are checked. What the checked token says is an [`Identity`].
//!
//! **Architecture Invariant:** protocol only. This crate knows nothing of accounts, sessions,
//! organizations or the store; the service decides what an identity may do. Its HTTP goes
//! through the reqwest client it is given (rustls, redirects off, so a provider cannot bounce
//! a request elsewhere).

use std::future::Future;
use std::pin::Pin;

use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreProviderMetadata};
use openidconnect::{
    AsyncHttpClient, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointMaybeSet,
    EndpointNotSet, EndpointSet, HttpRequest, HttpResponse, IssuerUrl, Nonce, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, Scope, TokenResponse,
};

pub use reqwest::Client as HttpClient;

/// The HTTP client for providers: rustls, no redirects (a provider's endpoints answer
/// directly; following redirects would let one send our requests elsewhere), and `timeout`
/// per request.
pub fn http_client(timeout: std::time::Duration) -> Result<HttpClient, OidcError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .build()
        .map_err(|e| OidcError::Settings(format!("no HTTP client: {e}")))
}

/// What the service configures for one provider.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    /// The issuer: discovery reads `<issuer>/.well-known/openid-configuration`, and the ID
    /// token's `iss` must be exactly this.
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
    /// Scopes asked for beside `openid`.
    pub scopes: Vec<String>,
    /// Where the provider sends the browser back: our callback, registered at the provider.
    pub redirect_url: String,
}

/// A provider whose discovery document was read.
pub struct Provider {
    client: Discovered,
    scopes: Vec<String>,
    http: Http,
}

/// The client with the endpoints discovery gives: authorization always, token and user info
/// when the document names them.
type Discovered = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// A sign-in sent to the provider: where to send the browser, and the values to keep (in the
/// browser, signed) until it comes back.
#[derive(Debug, Clone)]
pub struct Authorization {
    pub url: String,
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
}

/// What a checked ID token says about the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The provider's stable id of the person (`sub`).
    pub subject: String,
    pub email: Option<String>,
    /// Whether the provider says it verified `email` (`email_verified`; absent is `false`).
    pub email_verified: bool,
    pub name: Option<String>,
}

/// Why a step with the provider failed.
#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    /// The settings cannot work (an issuer or redirect URL that is no URL).
    #[error("{0}")]
    Settings(String),
    /// The provider could not be reached, or answered something that is not OpenID Connect.
    #[error("the identity provider is unavailable: {0}")]
    Unavailable(String),
    /// The provider refused the code (expired, used, or not for this client).
    #[error("the identity provider refused the sign-in: {0}")]
    CodeRefused(String),
    /// The ID token failed a check (signature, issuer, audience, expiry, nonce), or is absent.
    #[error("the identity provider's ID token is not valid: {0}")]
    InvalidToken(String),
}

impl Provider {
    /// Reads the provider's discovery document and its signing keys.
    pub async fn discover(
        settings: &ProviderSettings,
        http: reqwest::Client,
    ) -> Result<Provider, OidcError> {
        let issuer = IssuerUrl::new(settings.issuer.clone())
            .map_err(|e| OidcError::Settings(format!("issuer `{}`: {e}", settings.issuer)))?;
        let redirect = RedirectUrl::new(settings.redirect_url.clone()).map_err(|e| {
            OidcError::Settings(format!("redirect URL `{}`: {e}", settings.redirect_url))
        })?;
        let http = Http(http);
        let metadata = CoreProviderMetadata::discover_async(issuer, &http)
            .await
            .map_err(|e| OidcError::Unavailable(error_chain(&e)))?;
        let client = CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(settings.client_id.clone()),
            Some(ClientSecret::new(settings.client_secret.clone())),
        )
        .set_redirect_uri(redirect);
        Ok(Provider {
            client,
            scopes: settings.scopes.clone(),
            http,
        })
    }

    /// A new authorization request: PKCE (S256), a random state and a random nonce.
    pub fn authorize(&self) -> Authorization {
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = self.client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        for scope in self.scopes.iter().filter(|s| s.as_str() != "openid") {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        Authorization {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
        }
    }

    /// Trades the code for tokens and checks the ID token against `nonce`: the person it names.
    pub async fn exchange(
        &self,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
    ) -> Result<Identity, OidcError> {
        let request = self
            .client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .map_err(|e| OidcError::Unavailable(format!("no token endpoint: {e}")))?;
        let tokens = request
            .set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier.to_string()))
            .request_async(&self.http)
            .await
            .map_err(|e| match e {
                openidconnect::RequestTokenError::ServerResponse(answer) => {
                    OidcError::CodeRefused(answer.error().to_string())
                }
                other => OidcError::Unavailable(error_chain(&other)),
            })?;
        let token = tokens
            .id_token()
            .ok_or_else(|| OidcError::InvalidToken("the answer carries no ID token".into()))?;
        let claims = token
            .claims(
                &self.client.id_token_verifier(),
                &Nonce::new(nonce.to_string()),
            )
            .map_err(|e| OidcError::InvalidToken(error_chain(&e)))?;
        Ok(Identity {
            subject: claims.subject().to_string(),
            email: claims.email().map(|e| e.to_string()),
            email_verified: claims.email_verified().unwrap_or(false),
            name: claims
                .name()
                .and_then(|n| n.get(None))
                .map(|n| n.to_string()),
        })
    }
}

/// An error with its causes, for the log and the `Unavailable` message.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The given reqwest client as the HTTP client of `openidconnect`.
#[derive(Clone)]
struct Http(reqwest::Client);

/// A failed request to the provider.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct HttpError(String);

impl<'c> AsyncHttpClient<'c> for Http {
    type Error = HttpError;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let request = reqwest::Request::try_from(request)
                .map_err(|e| HttpError(format!("request: {e}")))?;
            let response = self
                .0
                .execute(request)
                .await
                .map_err(|e| HttpError(error_chain(&e)))?;
            let mut answer = HttpResponse::new(Vec::new());
            *answer.status_mut() = response.status();
            *answer.headers_mut() = response.headers().clone();
            *answer.body_mut() = response
                .bytes()
                .await
                .map_err(|e| HttpError(error_chain(&e)))?
                .to_vec();
            Ok(answer)
        })
    }
}
