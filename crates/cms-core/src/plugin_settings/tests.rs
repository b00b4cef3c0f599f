use serde_json::json;

use super::*;

fn field(name: &str, kind: SettingKind) -> SettingField {
    SettingField {
        name: name.into(),
        kind,
        title: name.into(),
    }
}

fn webhooks() -> SettingsDeclaration {
    SettingsDeclaration {
        plugin_id: "webhooks".into(),
        title: "Webhooks".into(),
        description: "Posts events to a URL".into(),
        fields: vec![
            field("url", SettingKind::String),
            field("notes", SettingKind::Text),
            field("timeout", SettingKind::Number),
            field("enabled", SettingKind::Boolean),
            field("secret", SettingKind::Secret),
        ],
    }
}

#[test]
fn a_declaration_serializes_as_the_contract_says() {
    let json = serde_json::to_value(webhooks()).unwrap();
    assert_eq!(json["pluginId"], "webhooks");
    assert_eq!(json["description"], "Posts events to a URL");
    assert_eq!(
        json["fields"][4],
        json!({"name": "secret", "type": "secret", "title": "secret"})
    );
    let kinds: Vec<&str> = json["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["string", "text", "number", "boolean", "secret"]);
}

#[test]
fn declarations_are_checked() {
    assert_eq!(webhooks().check(), Ok(()));
    let with = |f: &dyn Fn(&mut SettingsDeclaration)| {
        let mut d = webhooks();
        f(&mut d);
        d.check().unwrap_err()
    };
    assert!(with(&|d| d.plugin_id.clear()).contains("empty pluginId"));
    assert!(with(&|d| d.plugin_id = "web hooks".into()).contains("pluginId"));
    assert!(with(&|d| d.plugin_id = "a/b".into()).contains("pluginId"));
    for bad in ["", "1url", "my-url", "a.b", "ü"] {
        let err = with(&|d| d.fields[0].name = bad.into());
        assert!(err.contains("not an identifier"), "{bad}: {err}");
        assert!(err.contains("webhooks"), "{err}");
    }
    let err = with(&|d| d.fields[1].name = "url".into());
    assert!(err.contains("`url` is declared twice"), "{err}");
    // No fields at all is a valid (if dull) declaration; `_x` and `A1` are identifiers.
    assert_eq!(with_fields(&["_x", "A1"]).check(), Ok(()));
}

fn with_fields(names: &[&str]) -> SettingsDeclaration {
    SettingsDeclaration {
        fields: names
            .iter()
            .map(|n| field(n, SettingKind::String))
            .collect(),
        ..webhooks()
    }
}

#[test]
fn values_of_the_right_kind_or_null_pass() {
    let d = webhooks();
    let ok = json!({
        "url": "https://example.com/hook",
        "notes": "line one\nline two",
        "timeout": 2.5,
        "enabled": true,
        "secret": "s3cret",
    });
    assert!(d.check_values(&ok).is_empty());
    let unset = json!({"url": null, "timeout": null, "enabled": null, "secret": null});
    assert!(d.check_values(&unset).is_empty());
    assert!(d.check_values(&json!({})).is_empty());
    assert!(d.check_values(&json!({"secret": REDACTED})).is_empty());
}

#[test]
fn wrong_kinds_and_unknown_keys_are_issues_at_their_field() {
    let d = webhooks();
    let issues = d.check_values(&json!({
        "url": 5,
        "notes": ["a"],
        "timeout": "10",
        "enabled": "yes",
        "secret": 123,
        "colour": "red",
    }));
    let found: Vec<(&str, &str)> = issues
        .iter()
        .map(|i| (i.path.as_str(), i.code.as_str()))
        .collect();
    for expected in [
        ("url", "type"),
        ("notes", "type"),
        ("timeout", "type"),
        ("enabled", "type"),
        ("secret", "type"),
        ("colour", "unknown"),
    ] {
        assert!(found.contains(&expected), "{expected:?} in {found:?}");
    }
    assert_eq!(issues.len(), 6);
    let timeout = issues.iter().find(|i| i.path == "timeout").unwrap();
    assert_eq!(timeout.message, "expected a number or null");
}

#[test]
fn values_that_are_not_an_object_are_one_issue() {
    for bad in [json!([]), json!("x"), json!(null), json!(3)] {
        let issues = webhooks().check_values(&bad);
        assert_eq!(issues.len(), 1, "{bad}");
        assert_eq!(
            (issues[0].path.as_str(), issues[0].code.as_str()),
            ("values", "type")
        );
    }
}
