//! What a request may set on an endpoint, checked before anything is written: 400 with one
//! `issue` per bad field (CONTRACT.md section 16).

use cms_core::Issues;

use crate::events::{EventTypes, WEBHOOK_TEST};

/// The filter that receives every event type.
pub const EVERY_EVENT: &str = "*";
/// The longest URL an endpoint may have.
const MAX_URL_CHARS: usize = 2000;
/// The longest description.
const MAX_DESCRIPTION_CHARS: usize = 500;

/// A new endpoint as a request gives it.
#[derive(Debug, Clone, Default)]
pub struct NewEndpoint {
    /// Required: an absolute `http` or `https` URL.
    pub url: Option<String>,
    /// Required: `["*"]`, or built-in and declared event types, each once.
    pub events: Option<Vec<String>>,
    pub description: Option<String>,
    /// `true` when absent.
    pub enabled: Option<bool>,
}

/// A change to an endpoint: the fields given are replaced, the others kept. The secret is not
/// among them: it changes only by rotation.
#[derive(Debug, Clone, Default)]
pub struct EndpointChange {
    pub url: Option<String>,
    pub events: Option<Vec<String>>,
    pub description: Option<String>,
    pub enabled: Option<bool>,
}

impl EndpointChange {
    pub(crate) fn is_empty(&self) -> bool {
        self.url.is_none()
            && self.events.is_none()
            && self.description.is_none()
            && self.enabled.is_none()
    }
}

/// The checked fields of an endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    pub(crate) url: String,
    pub(crate) events: Vec<String>,
    pub(crate) description: String,
    pub(crate) enabled: bool,
}

/// Checks a new endpoint; every problem is an issue.
pub(crate) fn check_new(input: NewEndpoint, types: &EventTypes) -> Result<Checked, Issues> {
    let mut issues = Issues::new();
    let url = match input.url {
        Some(url) => check_url(&mut issues, url),
        None => {
            issues.add("url", "required", "url is required");
            String::new()
        }
    };
    let events = match input.events {
        Some(events) => check_events(&mut issues, events, types),
        None => {
            issues.add(
                "events",
                "required",
                "events is required: [\"*\"] or a list of event types",
            );
            Vec::new()
        }
    };
    let description = check_description(&mut issues, input.description.unwrap_or_default());
    let checked = Checked {
        url,
        events,
        description,
        enabled: input.enabled.unwrap_or(true),
    };
    if issues.is_empty() {
        Ok(checked)
    } else {
        Err(issues)
    }
}

/// Applies a change to `current`, checking each field given.
pub(crate) fn check_change(
    change: EndpointChange,
    current: Checked,
    types: &EventTypes,
) -> Result<Checked, Issues> {
    let mut issues = Issues::new();
    let checked = Checked {
        url: match change.url {
            Some(url) => check_url(&mut issues, url),
            None => current.url,
        },
        events: match change.events {
            Some(events) => check_events(&mut issues, events, types),
            None => current.events,
        },
        description: match change.description {
            Some(description) => check_description(&mut issues, description),
            None => current.description,
        },
        enabled: change.enabled.unwrap_or(current.enabled),
    };
    if issues.is_empty() {
        Ok(checked)
    } else {
        Err(issues)
    }
}

fn check_url(issues: &mut Issues, url: String) -> String {
    if url.chars().count() > MAX_URL_CHARS {
        issues.add(
            "url",
            "maxLength",
            format!("url is at most {MAX_URL_CHARS} characters"),
        );
    } else if !cms_core::schema::is_http_url(&url) {
        issues.add(
            "url",
            "url",
            "url must be an absolute http or https URL, such as https://example.com/hooks",
        );
    }
    url
}

fn check_events(issues: &mut Issues, events: Vec<String>, types: &EventTypes) -> Vec<String> {
    if events.is_empty() {
        issues.add(
            "events",
            "minItems",
            "events names at least one event type, or \"*\" for every one",
        );
    }
    if events.len() > 1 && events.iter().any(|e| e == EVERY_EVENT) {
        issues.add(
            "events",
            "options",
            "\"*\" already receives every event type: give it alone",
        );
    }
    for (i, event) in events.iter().enumerate() {
        let path = format!("events[{i}]");
        if event == EVERY_EVENT {
            continue;
        }
        if events[..i].contains(event) {
            issues.add(&path, "unique", format!("`{event}` is listed twice"));
        } else if event == WEBHOOK_TEST {
            issues.add(
                &path,
                "options",
                "`webhook.test` is sent by the test action only, whatever the filter",
            );
        } else if !types.is_known(event) {
            issues.add(
                &path,
                "options",
                format!("`{event}` is neither a built-in nor a declared event type"),
            );
        }
    }
    events
}

fn check_description(issues: &mut Issues, description: String) -> String {
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        issues.add(
            "description",
            "maxLength",
            format!("description is at most {MAX_DESCRIPTION_CHARS} characters"),
        );
    }
    description
}

/// Whether an endpoint with `filter` receives events of `event_type`.
pub(crate) fn wants(filter: &[String], event_type: &str) -> bool {
    filter.iter().any(|e| e == EVERY_EVENT || e == event_type)
}

#[cfg(test)]
mod tests {
    use cms_core::schema::Schemas;

    use super::*;
    use crate::events::EventDeclaration;

    fn types() -> EventTypes {
        EventTypes::new(
            vec![EventDeclaration::new("acme.order.placed", Vec::new())],
            &Schemas::default(),
        )
        .unwrap()
    }

    fn new(url: Option<&str>, events: Option<&[&str]>) -> NewEndpoint {
        NewEndpoint {
            url: url.map(str::to_string),
            events: events.map(|e| e.iter().map(|s| s.to_string()).collect()),
            ..NewEndpoint::default()
        }
    }

    fn paths(result: Result<Checked, Issues>) -> Vec<(String, String)> {
        result
            .unwrap_err()
            .into_vec()
            .into_iter()
            .map(|i| (i.path, i.code))
            .collect()
    }

    #[test]
    fn a_good_endpoint_passes_enabled_by_default() {
        let checked = check_new(
            new(
                Some("https://hooks.example.com/in?x=1"),
                Some(&["document.published", "acme.order.placed"]),
            ),
            &types(),
        )
        .unwrap();
        assert!(checked.enabled);
        assert_eq!(checked.description, "");
        assert!(check_new(new(Some("http://127.0.0.1:9/h"), Some(&["*"])), &types()).is_ok());
    }

    #[test]
    fn each_bad_field_is_an_issue() {
        assert_eq!(
            paths(check_new(new(None, None), &types())),
            [
                ("url".into(), "required".into()),
                ("events".into(), "required".into())
            ]
        );
        for url in [
            "ftp://example.com/",
            "example.com/hook",
            "https://",
            "https://exa mple.com/",
            "javascript:alert(1)",
            "",
        ] {
            assert_eq!(
                paths(check_new(new(Some(url), Some(&["*"])), &types())),
                [("url".into(), "url".into())],
                "{url}"
            );
        }
        let long = format!("https://example.com/{}", "a".repeat(2000));
        assert_eq!(
            paths(check_new(new(Some(&long), Some(&["*"])), &types())),
            [("url".into(), "maxLength".into())]
        );
        assert_eq!(
            paths(check_new(
                new(
                    Some("https://x.example/"),
                    Some(&[
                        "document.published",
                        "nope.nothing",
                        "document.published",
                        "webhook.test",
                        "published"
                    ])
                ),
                &types()
            )),
            [
                ("events[1]".into(), "options".into()),
                ("events[2]".into(), "unique".into()),
                ("events[3]".into(), "options".into()),
                ("events[4]".into(), "options".into()),
            ]
        );
        assert_eq!(
            paths(check_new(
                new(Some("https://x.example/"), Some(&[])),
                &types()
            )),
            [("events".into(), "minItems".into())]
        );
        assert_eq!(
            paths(check_new(
                new(Some("https://x.example/"), Some(&["*", "user.deleted"])),
                &types()
            )),
            [("events".into(), "options".into())]
        );
        let described = NewEndpoint {
            description: Some("d".repeat(501)),
            ..new(Some("https://x.example/"), Some(&["*"]))
        };
        assert_eq!(
            paths(check_new(described, &types())),
            [("description".into(), "maxLength".into())]
        );
    }

    #[test]
    fn a_change_keeps_what_it_does_not_name() {
        let current = check_new(
            NewEndpoint {
                description: Some("Search".into()),
                ..new(Some("https://a.example/"), Some(&["user.deleted"]))
            },
            &types(),
        )
        .unwrap();
        let changed = check_change(
            EndpointChange {
                enabled: Some(false),
                ..EndpointChange::default()
            },
            current.clone(),
            &types(),
        )
        .unwrap();
        assert_eq!(
            (
                changed.url.as_str(),
                changed.events.clone(),
                changed.enabled
            ),
            (
                "https://a.example/",
                vec!["user.deleted".to_string()],
                false
            )
        );
        assert_eq!(changed.description, "Search");
        let bad = check_change(
            EndpointChange {
                url: Some("mailto:x@example.com".into()),
                events: Some(vec!["*".into()]),
                ..EndpointChange::default()
            },
            current,
            &types(),
        );
        assert_eq!(paths(bad), [("url".into(), "url".into())]);
        assert!(EndpointChange::default().is_empty());
    }

    #[test]
    fn the_filter_matches_exact_names_or_every_type() {
        let every = vec!["*".to_string()];
        let listed = vec!["document.published".to_string(), "user.deleted".to_string()];
        assert!(wants(&every, "acme.order.placed"));
        assert!(wants(&listed, "user.deleted"));
        assert!(!wants(&listed, "document.updated"));
        assert!(!wants(&listed, "document"));
    }
}
