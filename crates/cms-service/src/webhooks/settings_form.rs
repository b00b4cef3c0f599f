//! The settings form of the `webhooks` plugin (CONTRACT.md section 11): one URL per
//! organization in the plugin's settings, the event types to send there (comma-separated) and
//! a signing secret. It keeps working as one more endpoint: the relay reads it for the
//! organizations of its batch, and its deliveries keep the section-11 request.

use cms_core::plugin_settings::{SettingField, SettingKind};
use serde_json::Value;

/// The plugin whose settings hold the form, and whose job handler sends every delivery.
pub const PLUGIN_ID: &str = "webhooks";

const URL: &str = "url";
const EVENTS: &str = "events";
const SECRET: &str = "secret";

/// The form's fields, as the plugin declares them.
pub fn settings_fields() -> Vec<SettingField> {
    let field = |name: &str, kind: SettingKind, title: &str| SettingField {
        name: name.into(),
        kind,
        title: title.into(),
    };
    vec![
        field(
            URL,
            SettingKind::String,
            "Target URL (http or https); empty sends nothing",
        ),
        field(
            EVENTS,
            SettingKind::String,
            "Event types to send, comma-separated (for example document.published)",
        ),
        field(
            SECRET,
            SettingKind::Secret,
            "Signing secret: requests carry x-cms-signature, an HMAC-SHA-256 of the body",
        ),
    ]
}

/// Where the form sends an event of `event_type`, with the secret it signs with.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct FormTarget<'a> {
    pub(crate) url: &'a str,
    /// `None` when no secret is set: the request goes unsigned.
    pub(crate) secret: Option<&'a str>,
}

/// Whether and where the form's `values` send `event_type`: a URL set (trimmed, not empty) and
/// the type in the list (entries trimmed, empty ones ignored, names matched exactly). With the
/// values as stored the secret is its ciphertext; with [`values_for`]'s, the plaintext.
///
/// [`values_for`]: crate::PluginSettingsService::values_for
pub(crate) fn target<'a>(values: &'a Value, event_type: &str) -> Option<FormTarget<'a>> {
    let text = |name: &str| {
        values
            .get(name)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let url = text(URL)?;
    let listed = text(EVENTS)
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .any(|listed| !listed.is_empty() && listed == event_type);
    if !listed {
        return None;
    }
    // The secret is used as saved (not trimmed): it is the receiver's key.
    let secret = values
        .get(SECRET)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    Some(FormTarget { url, secret })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_settings_decide_what_is_sent_where() {
        let settings = json!({
            "url": " https://hooks.example.com/in ",
            "events": " document.published, ,forms.submission.created ,",
            "secret": "s3cret",
        });
        assert_eq!(
            target(&settings, "document.published"),
            Some(FormTarget {
                url: "https://hooks.example.com/in",
                secret: Some("s3cret")
            })
        );
        assert!(target(&settings, "forms.submission.created").is_some());
        // Exact names only: no prefixes, no empty entry matching an empty type.
        assert_eq!(target(&settings, "document"), None);
        assert_eq!(target(&settings, ""), None);
        assert_eq!(target(&settings, "user.deleted"), None);

        // No secret: sent unsigned.
        let unsigned = json!({"url": "http://h/", "events": "user.deleted", "secret": null});
        assert_eq!(
            target(&unsigned, "user.deleted"),
            Some(FormTarget {
                url: "http://h/",
                secret: None
            })
        );
        // No URL, or an empty or missing list: nothing.
        for settings in [
            json!({"url": null, "events": "user.deleted", "secret": null}),
            json!({"url": "  ", "events": "user.deleted"}),
            json!({"url": "http://h/", "events": null}),
            json!({"url": "http://h/", "events": " , "}),
            json!({}),
        ] {
            assert_eq!(target(&settings, "user.deleted"), None, "{settings}");
        }
    }

    #[test]
    fn the_form_declares_url_events_and_a_secret() {
        let fields: Vec<(String, SettingKind)> = settings_fields()
            .into_iter()
            .map(|f| (f.name, f.kind))
            .collect();
        assert_eq!(
            fields,
            [
                ("url".into(), SettingKind::String),
                ("events".into(), SettingKind::String),
                ("secret".into(), SettingKind::Secret),
            ]
        );
    }
}
