use super::*;
use serde_json::json;

#[test]
fn there_are_fifteen_core_capabilities_and_names_round_trip() {
    assert_eq!(CoreCapability::ALL.len(), 15);
    for c in CoreCapability::ALL {
        assert_eq!(CoreCapability::parse(c.as_str()), Some(*c));
        assert_eq!(c.as_str().parse::<Capability>(), Ok(Capability::Core(*c)));
    }
}

#[test]
fn plugin_capabilities_must_be_namespaced_and_not_in_a_core_namespace() {
    assert_eq!(
        "forms.export".parse(),
        Ok(Capability::Plugin("forms.export".into()))
    );
    assert!("export".parse::<Capability>().is_err());
    assert!("forms.".parse::<Capability>().is_err());
    assert!("document.destroy".parse::<Capability>().is_err());
    assert!("forms.ex port".parse::<Capability>().is_err());
}

#[test]
fn writes_imply_reads() {
    let set: CapabilitySet = [CoreCapability::DocumentPublish, CoreCapability::AssetUpload]
        .into_iter()
        .collect();
    let set = set.with_implied_reads();
    assert!(set.has(CoreCapability::DocumentRead));
    assert!(set.has(CoreCapability::AssetRead));
    assert!(!set.has(CoreCapability::DocumentCreate));
}

#[test]
fn intersection_keeps_only_shared_capabilities() {
    let a = CapabilitySet::all_with(["forms.export".to_string()]);
    let b: CapabilitySet = [
        Capability::Core(CoreCapability::DocumentRead),
        Capability::Plugin("x.y".into()),
    ]
    .into_iter()
    .collect();
    let both = a.intersect(&b);
    assert_eq!(both.to_strings(), vec!["document.read"]);
}

// RequiredCapabilities (the `requiredCapabilities` of plugin routes).
#[test]
fn the_three_forms_parse_and_serialize_back() {
    for (raw, parsed) in [
        (json!("public"), RequiredCapabilities::Public),
        (json!([]), RequiredCapabilities::Members),
        (
            json!(["forms.export", "document.read"]),
            RequiredCapabilities::All(vec![
                "forms.export".parse().unwrap(),
                Capability::Core(CoreCapability::DocumentRead),
            ]),
        ),
    ] {
        let got = RequiredCapabilities::from_json(&raw).unwrap();
        assert_eq!(got, parsed);
        assert_eq!(serde_json::to_value(&got).unwrap(), raw);
    }
    for bad in [
        json!("anyone"),
        json!(null),
        json!(["document.reed"]),
        json!([1]),
    ] {
        assert!(RequiredCapabilities::from_json(&bad).is_err(), "{bad}");
    }
}
