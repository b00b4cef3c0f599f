//! Who an MCP request is from. Every request is answered as the caller it proves now, never as
//! whoever opened the session: a session id carries no authority of its own, and a key revoked
//! (or whose creator left the organization) stops working on the next request.

use std::sync::Arc;

use cms_service::{Actor, Cms, Credentials};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

/// How the caller of a request is found.
#[derive(Clone)]
pub enum Caller {
    /// Over HTTP: the actor the door resolved from the request's own credentials, carried in the
    /// request's HTTP parts.
    Http,
    /// Over stdio: this API key (`CMS_MCP_API_KEY`), resolved again for every request.
    ApiKey(Arc<str>),
}

impl Caller {
    /// The actor of the request `context` belongs to.
    pub(crate) async fn actor(
        &self,
        cms: &Cms,
        context: &RequestContext<RoleServer>,
    ) -> Result<Actor, ErrorData> {
        match self {
            Caller::Http => context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Actor>())
                .cloned()
                // The door refuses a request without credentials before it gets here.
                .ok_or_else(|| ErrorData::internal_error("the request has no caller", None)),
            Caller::ApiKey(key) => key_actor(cms, key)
                .await
                .map_err(|message| ErrorData::invalid_request(message, None)),
        }
    }

    /// Whether the caller can be resolved at all: for stdio, whether the key proves someone.
    pub(crate) async fn check(&self, cms: &Cms) -> Result<(), String> {
        match self {
            Caller::Http => Ok(()),
            Caller::ApiKey(key) => key_actor(cms, key).await.map(drop),
        }
    }
}

async fn key_actor(cms: &Cms, key: &str) -> Result<Actor, String> {
    let credentials = Credentials {
        api_key: Some(key.to_string()),
        ..Credentials::default()
    };
    match cms.auth().authenticate(&credentials).await {
        Ok(Some(resolved)) => Ok(resolved.actor),
        Ok(None) => Err(
            "the API key is not valid (revoked, expired, or its creator left the organization)"
                .into(),
        ),
        Err(e) => Err(e.public_message()),
    }
}
