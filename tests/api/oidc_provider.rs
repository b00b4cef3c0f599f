//! A real OpenID provider on loopback for the single sign-on tests: `oidc-provider` from the
//! npm registry (tests/oidc/), with its own login page. Stopped when dropped, and by itself
//! when the test process ends (it exits when its stdin closes).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use cms::config::OidcProviderConfig;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};

use crate::support::Process;

pub const CLIENT_ID: &str = "cms-tests";
pub const CLIENT_SECRET: &str = "a client secret for the tests";

pub struct OidcProvider {
    pub issuer: String,
    _process: Process,
}

impl OidcProvider {
    /// Starts the provider with one client whose redirect URI is `redirect_uri`.
    pub fn start(redirect_uri: &str) -> OidcProvider {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oidc/provider.mjs");
        let mut child = Command::new("node")
            .arg(script)
            .env("OIDC_PORT", "0")
            .env("OIDC_CLIENT_ID", CLIENT_ID)
            .env("OIDC_CLIENT_SECRET", CLIENT_SECRET)
            .env("OIDC_REDIRECT_URIS", redirect_uri)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node runs tests/oidc/provider.mjs (npm ci --prefix tests/oidc)");
        let stdout = child.stdout.take().expect("a piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the provider's first line");
        let ready: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the provider did not start ({e}): {line:?}"));
        OidcProvider {
            issuer: ready["issuer"].as_str().unwrap().to_string(),
            _process: Process(child),
        }
    }

    /// The app's configuration of this provider as `corp` ("Corp ID"): new accounts from
    /// example.com join the default organization with `role`.
    pub fn config(&self, role: &str) -> OidcProviderConfig {
        OidcProviderConfig {
            id: "corp".into(),
            name: Some("Corp ID".into()),
            issuer: self.issuer.clone(),
            client_id: CLIENT_ID.into(),
            client_secret: Some(CLIENT_SECRET.into()),
            scopes: None,
            allowed_domains: vec!["example.com".into()],
            organization: None,
            default_role: Some(role.into()),
        }
    }
}

/// A browser at the provider: follows its pages by hand, keeping its cookies.
pub struct Browser {
    client: reqwest::Client,
    cookies: HashMap<String, String>,
}

impl Default for Browser {
    fn default() -> Self {
        Browser {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookies: HashMap::new(),
        }
    }
}

impl Browser {
    async fn send(&mut self, request: reqwest::RequestBuilder) -> reqwest::Response {
        let jar = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let response = request.header(COOKIE, jar).send().await.unwrap();
        for value in response.headers().get_all(SET_COOKIE) {
            let pair = value.to_str().unwrap().split(';').next().unwrap();
            if let Some((name, value)) = pair.split_once('=') {
                self.cookies.insert(name.to_string(), value.to_string());
            }
        }
        response
    }

    fn location(issuer: &str, response: &reqwest::Response) -> String {
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{response:?}");
        let location = response.headers()[LOCATION].to_str().unwrap();
        if location.starts_with('/') {
            format!("{issuer}{location}")
        } else {
            location.to_string()
        }
    }

    /// From the provider's authorization URL to the page that shows its login form: the
    /// interaction's URL.
    async fn open(&mut self, issuer: &str, authorization_url: &str) -> String {
        let response = self.send(self.client.get(authorization_url)).await;
        Self::location(issuer, &response)
    }

    /// Signs in on the login page as `login` and follows the provider back: the URL it sends
    /// the browser to (our callback, with the code and state).
    pub async fn sign_in(&mut self, issuer: &str, authorization_url: &str, login: &str) -> String {
        let interaction = self.open(issuer, authorization_url).await;
        // The login page's form, as a browser posts it.
        let body = format!(
            "prompt=login&login={}&password=any",
            login.replace('@', "%40").replace('+', "%2B")
        );
        let request = self
            .client
            .post(&interaction)
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body);
        let response = self.send(request).await;
        let resume = Self::location(issuer, &response);
        let response = self.send(self.client.get(&resume)).await;
        Self::location(issuer, &response)
    }

    /// Cancels on the login page: the URL the provider sends the browser back to.
    pub async fn cancel(&mut self, issuer: &str, authorization_url: &str) -> String {
        let interaction = self.open(issuer, authorization_url).await;
        let response = self
            .send(self.client.get(format!("{interaction}/abort")))
            .await;
        let resume = Self::location(issuer, &response);
        let response = self.send(self.client.get(&resume)).await;
        Self::location(issuer, &response)
    }
}
