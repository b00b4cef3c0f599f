//! Who may become the first administrator of an instance (SPEC.md Authentication point 12).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The first-admin policy: how the first account, which becomes instance `super_admin`, is
/// allowed to come into being.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum FirstAdmin {
    /// The first sign-up claims the instance.
    Open,
    /// The first sign-up must present the code printed to the server log at start.
    ClaimCode,
    /// The first sign-up must use one of the allowlisted e-mail addresses.
    Allowlist,
    /// No sign-up can claim the instance; the first administrator is provisioned out of band
    /// (`cms user create`).
    None,
}

impl FirstAdmin {
    pub const ALL: [FirstAdmin; 4] = [
        FirstAdmin::Open,
        FirstAdmin::ClaimCode,
        FirstAdmin::Allowlist,
        FirstAdmin::None,
    ];

    /// The name used in configuration and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            FirstAdmin::Open => "open",
            FirstAdmin::ClaimCode => "claimCode",
            FirstAdmin::Allowlist => "allowlist",
            FirstAdmin::None => "none",
        }
    }

    pub fn parse(name: &str) -> Option<FirstAdmin> {
        FirstAdmin::ALL.into_iter().find(|p| p.as_str() == name)
    }
}

impl fmt::Display for FirstAdmin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_in_text_and_json() {
        for policy in FirstAdmin::ALL {
            assert_eq!(FirstAdmin::parse(policy.as_str()), Some(policy));
            let json = serde_json::to_value(policy).unwrap();
            assert_eq!(json, serde_json::json!(policy.as_str()));
        }
        assert_eq!(FirstAdmin::parse("claimcode"), None);
        assert_eq!(FirstAdmin::parse(""), None);
    }
}
