//! Instance settings: the sign-up policy (SPEC.md Authentication points 11 and 12, CONTRACT.md
//! sections 9 and 12). Configuration gives the defaults; what an instance super admin saves
//! through `/api/instance-settings` is kept in the database, so it survives restarts and every
//! instance on one PostgreSQL reads the same values.

use cms_core::{Email, FirstAdmin, Issue};
use cms_store::Tx;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Inner;
use crate::actor::Actor;
use crate::audit::{self, AuditAction, AuditTarget};
use crate::error::{Error, Result};

/// The `instance_state` key holding the settings a super admin saved (only the keys they set).
const SAVED_KEY: &str = "signUpPolicy";

/// The effective sign-up policy. Read it through [`Inner::sign_up_policy`], the one place that
/// combines configuration with what was saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignUpPolicy {
    /// Refuse sign-ups without a pending invitation (the first sign-up is decided by
    /// `first_admin` instead).
    pub invite_only: bool,
    /// Block sign-in until the e-mail address is confirmed.
    pub require_email_verification: bool,
    pub first_admin: FirstAdmin,
    /// The addresses allowed to claim the instance under [`FirstAdmin::Allowlist`].
    pub first_admin_emails: Vec<Email>,
}

impl Default for SignUpPolicy {
    fn default() -> Self {
        SignUpPolicy {
            invite_only: true,
            require_email_verification: false,
            first_admin: FirstAdmin::Open,
            first_admin_emails: Vec::new(),
        }
    }
}

impl SignUpPolicy {
    /// The flat body of `/api/instance-settings`.
    pub fn view(&self) -> SignUpPolicyView {
        SignUpPolicyView {
            first_admin: self.first_admin,
            first_admin_emails: self
                .first_admin_emails
                .iter()
                .map(|e| e.as_str().to_string())
                .collect(),
            invite_only: self.invite_only,
            require_email_verification: self.require_email_verification,
        }
    }

    /// Refuses a combination no first administrator could pass by mistake: an allowlist with
    /// no address on it.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.first_admin == FirstAdmin::Allowlist && self.first_admin_emails.is_empty() {
            return Err(
                "firstAdmin \"allowlist\" needs at least one address in firstAdminEmails".into(),
            );
        }
        Ok(())
    }
}

/// The effective sign-up policy as `/api/instance-settings` shows it: flat, every key present.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignUpPolicyView {
    /// Who may become the first administrator while the instance has none.
    pub first_admin: FirstAdmin,
    /// The addresses allowed to claim the instance under `firstAdmin: "allowlist"`.
    pub first_admin_emails: Vec<String>,
    /// Refuse sign-ups without a pending invitation.
    pub invite_only: bool,
    /// Block sign-in until the e-mail address is confirmed.
    pub require_email_verification: bool,
}

/// What a super admin saved: only the keys they set, so the others keep following
/// configuration.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Saved {
    #[serde(skip_serializing_if = "Option::is_none")]
    invite_only: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    require_email_verification: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_admin: Option<FirstAdmin>,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_admin_emails: Option<Vec<String>>,
}

impl Saved {
    fn over(&self, configured: &SignUpPolicy) -> SignUpPolicy {
        SignUpPolicy {
            invite_only: self.invite_only.unwrap_or(configured.invite_only),
            require_email_verification: self
                .require_email_verification
                .unwrap_or(configured.require_email_verification),
            first_admin: self.first_admin.unwrap_or(configured.first_admin),
            first_admin_emails: match &self.first_admin_emails {
                Some(saved) => saved.iter().filter_map(|e| Email::parse(e)).collect(),
                None => configured.first_admin_emails.clone(),
            },
        }
    }

    async fn load(tx: &mut dyn Tx) -> Result<Saved> {
        match tx.instance_flag(SAVED_KEY).await? {
            Some(text) => serde_json::from_str(&text)
                .map_err(|e| Error::Internal(format!("stored instance settings: {e}"))),
            None => Ok(Saved::default()),
        }
    }
}

impl Inner {
    /// The effective sign-up policy: what a super admin saved, else configuration. Every rule
    /// that depends on `inviteOnly`, `requireEmailVerification` or `firstAdmin` reads it here.
    pub(crate) async fn sign_up_policy(&self, tx: &mut dyn Tx) -> Result<SignUpPolicy> {
        Ok(Saved::load(tx).await?.over(&self.settings.sign_up))
    }
}

/// `/api/instance-settings`: for instance super admins signed in with a session.
pub struct InstanceSettingsService<'a> {
    inner: &'a Inner,
}

impl<'a> InstanceSettingsService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        InstanceSettingsService { inner }
    }

    pub async fn get(&self, actor: &Actor) -> Result<SignUpPolicy> {
        require_super_admin_session(actor)?;
        let mut tx = self.inner.store.read().await?;
        self.inner.sign_up_policy(&mut *tx).await
    }

    /// Merges `body` (a flat object of the four keys, any subset) into what was saved, and
    /// answers the effective policy. Unknown keys and wrong types are 400 with issues.
    pub async fn update(&self, actor: &Actor, body: &Value) -> Result<SignUpPolicy> {
        require_super_admin_session(actor)?;
        let Value::Object(fields) = body else {
            return Err(Error::bad_request("the body must be a JSON object"));
        };
        let patch = parse_patch(fields)?;
        let now = self.inner.clock.now();
        // Instance-wide: the audit entry it writes belongs to no organization.
        let mut tx = self.inner.store.write_instance_wide().await?;
        let mut saved = Saved::load(&mut *tx).await?;
        saved.invite_only = patch.invite_only.or(saved.invite_only);
        saved.require_email_verification = patch
            .require_email_verification
            .or(saved.require_email_verification);
        saved.first_admin = patch.first_admin.or(saved.first_admin);
        saved.first_admin_emails = patch.first_admin_emails.or(saved.first_admin_emails);
        let effective = saved.over(&self.inner.settings.sign_up);
        effective.check().map_err(|message| {
            Error::invalid(vec![Issue::new("firstAdminEmails", "required", &message)])
        })?;
        let text = serde_json::to_string(&saved)
            .map_err(|e| Error::Internal(format!("instance settings: {e}")))?;
        tx.put_instance_value(SAVED_KEY, &text, now.millis())
            .await?;
        let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
        tx.append_audit(&[audit::entry(
            actor,
            None,
            AuditAction::InstanceSettingsUpdated,
            Some(AuditTarget::new("instance", "signUp")),
            format!("changed {}", keys.join(", ")),
            now.millis(),
        )])
        .await?;
        tx.commit().await?;
        Ok(effective)
    }
}

/// Instance settings are above every organization, so an API key (bound to one organization)
/// never reaches them, whoever made it.
fn require_super_admin_session(actor: &Actor) -> Result<()> {
    if actor.instance_super_admin_session() {
        Ok(())
    } else {
        Err(Error::Forbidden)
    }
}

fn parse_patch(fields: &Map<String, Value>) -> Result<Saved> {
    let mut patch = Saved::default();
    let mut issues = Vec::new();
    for (key, value) in fields {
        let mut wrong_type = |expected: &str| {
            issues.push(Issue::new(key, "type", format!("{key} must be {expected}")));
        };
        match key.as_str() {
            "inviteOnly" => match value.as_bool() {
                Some(b) => patch.invite_only = Some(b),
                None => wrong_type("a boolean"),
            },
            "requireEmailVerification" => match value.as_bool() {
                Some(b) => patch.require_email_verification = Some(b),
                None => wrong_type("a boolean"),
            },
            "firstAdmin" => match value.as_str().and_then(FirstAdmin::parse) {
                Some(p) => patch.first_admin = Some(p),
                None => wrong_type("one of \"open\", \"claimCode\", \"allowlist\", \"none\""),
            },
            "firstAdminEmails" => match parse_emails(value) {
                Ok(emails) => patch.first_admin_emails = Some(emails),
                Err(issue) => issues.push(issue),
            },
            _ => issues.push(Issue::new(
                key,
                "unknown",
                format!("{key} is not an instance setting"),
            )),
        }
    }
    if issues.is_empty() {
        Ok(patch)
    } else {
        Err(Error::invalid(issues))
    }
}

fn parse_emails(value: &Value) -> std::result::Result<Vec<String>, Issue> {
    let Some(items) = value.as_array() else {
        return Err(Issue::new(
            "firstAdminEmails",
            "type",
            "firstAdminEmails must be an array of e-mail addresses",
        ));
    };
    let mut emails = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = format!("firstAdminEmails[{i}]");
        let Some(text) = item.as_str() else {
            return Err(Issue::new(&path, "type", "must be a string"));
        };
        let Some(email) = Email::parse(text) else {
            return Err(Issue::new(&path, "format", "is not a valid e-mail address"));
        };
        if !emails.iter().any(|e| e == email.as_str()) {
            emails.push(email.as_str().to_string());
        }
    }
    Ok(emails)
}
