use super::*;

fn pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => (p.to_string(), String::new()),
        })
        .collect()
}

fn parse(query: &str) -> Result<Option<TransformRequest>, TransformError> {
    TransformRequest::parse(&pairs(query))
}

fn request(query: &str) -> TransformRequest {
    parse(query).unwrap().unwrap()
}

#[test]
fn no_transform_parameter_means_the_original() {
    assert_eq!(parse("").unwrap(), None);
    assert_eq!(parse("sig=ab&exp=12").unwrap(), None);
}

#[test]
fn every_parameter_is_read() {
    let t = request("w=300&h=200&fit=crop&rect=1,2,30,40&fm=webp&q=55&dpr=2&fp-x=0.25&fp-y=1");
    assert_eq!(t.width, Some(300));
    assert_eq!(t.height, Some(200));
    assert_eq!(t.fit, Fit::Crop);
    assert_eq!(
        t.rect,
        Some(Rect {
            x: 1,
            y: 2,
            width: 30,
            height: 40
        })
    );
    assert_eq!(t.format, Some(OutputFormat::Webp));
    assert_eq!(t.quality, 55);
    assert_eq!(t.dpr, 2.0);
    assert_eq!(t.focal, FocalPoint::new(0.25, 1.0));
    let defaults = request("w=10");
    assert_eq!(defaults.fit, Fit::Clip);
    assert_eq!(defaults.quality, DEFAULT_QUALITY);
    assert_eq!(defaults.dpr, 1.0);
    assert!(!defaults.auto_format);
}

#[test]
fn bad_parameters_are_refused_with_their_name() {
    for (query, named) in [
        ("width=10", "width"),
        ("w=0", "`w`"),
        ("w=4097", "`w`"),
        ("w=-1", "`w`"),
        ("w=1.5", "`w`"),
        ("w=", "`w`"),
        ("w=10&w=20", "more than once"),
        ("h=99999999999", "`h`"),
        ("fit=fill", "`fit`"),
        ("fm=gif", "`fm`"),
        ("fm=JPG", "`fm`"),
        ("q=0", "`q`"),
        ("q=101", "`q`"),
        ("dpr=0.5", "`dpr`"),
        ("dpr=4", "`dpr`"),
        ("dpr=inf", "`dpr`"),
        ("dpr=1e0", "`dpr`"),
        ("auto=compress", "`auto`"),
        ("fp-x=1.5", "`fp-x`"),
        ("fp-y=-0.1", "`fp-y`"),
        ("fp-x=NaN", "`fp-x`"),
        ("rect=1,2,3", "`rect`"),
        ("rect=1,2,0,4", "`rect`"),
        ("rect=a,2,3,4", "`rect`"),
        ("rect=1,2,3,4,5", "`rect`"),
    ] {
        let error = parse(query).expect_err(query);
        assert!(error.0.contains(named), "{query}: {}", error.0);
    }
}

#[test]
fn dpr_multiplies_and_the_cap_keeps_the_shape() {
    let t = request("w=600&h=300&dpr=2").resolve("image/png", None, None);
    assert_eq!((t.width, t.height), (Some(1200), Some(600)));
    let capped = request("w=4000&h=2000&dpr=3").resolve("image/png", None, None);
    assert_eq!((capped.width, capped.height), (Some(4096), Some(2048)));
    // Same pixels, same derivative.
    assert_eq!(
        request("w=600&dpr=2")
            .resolve("image/png", None, None)
            .key(),
        request("w=1200").resolve("image/png", None, None).key()
    );
}

#[test]
fn the_format_follows_fm_then_accept_then_the_original() {
    let accept = Some("image/avif,image/webp,*/*;q=0.8");
    assert_eq!(
        request("w=1&fm=png")
            .resolve("image/jpeg", None, accept)
            .format,
        OutputFormat::Png
    );
    let auto = request("w=1&auto=format");
    assert_eq!(
        auto.resolve("image/jpeg", None, accept).format,
        OutputFormat::Avif
    );
    assert!(auto.resolve("image/jpeg", None, accept).varies_by_accept);
    assert_eq!(
        auto.resolve("image/jpeg", None, Some("image/webp,*/*"))
            .format,
        OutputFormat::Webp
    );
    assert_eq!(
        auto.resolve("image/jpeg", None, Some("image/avif;q=0, image/webp"))
            .format,
        OutputFormat::Webp
    );
    assert_eq!(
        auto.resolve("image/jpeg", None, Some("*/*")).format,
        OutputFormat::Jpg
    );
    assert_eq!(
        request("w=1").resolve("image/gif", None, accept).format,
        OutputFormat::Png
    );
    assert!(
        !request("w=1")
            .resolve("image/gif", None, accept)
            .varies_by_accept
    );
}

#[test]
fn the_focal_point_only_matters_to_a_crop() {
    let hotspot = FocalPoint::new(0.2, 0.8);
    let crop = request("w=10&h=10&fit=crop");
    assert_eq!(crop.resolve("image/png", hotspot, None).focal, hotspot);
    let own = request("w=10&h=10&fit=crop&fp-x=0.9");
    assert_eq!(
        own.resolve("image/png", hotspot, None).focal,
        FocalPoint::new(0.9, 0.5)
    );
    // Not a crop, or a crop with one side: no focal point, and one derivative whatever the
    // hotspot.
    for query in [
        "w=10&h=10",
        "w=10&fit=crop",
        "w=10&h=10&fit=max&fp-x=0.1&fp-y=0.1",
    ] {
        let t = request(query);
        assert_eq!(t.resolve("image/png", hotspot, None).focal, None, "{query}");
        assert_eq!(
            t.resolve("image/png", hotspot, None).key(),
            t.resolve("image/png", None, None).key()
        );
    }
    // A crop's key changes with its hotspot.
    assert_ne!(
        crop.resolve("image/png", hotspot, None).key(),
        crop.resolve("image/png", None, None).key()
    );
}

#[test]
fn the_key_names_the_pixels() {
    let a = request("w=300&fm=webp&q=80").resolve("image/jpeg", None, None);
    let b = request("q=80&fm=webp&w=300").resolve("image/jpeg", None, None);
    assert_eq!(a.key(), b.key());
    assert!(a.key().ends_with(".webp"));
    assert_eq!(a.key().len(), 32 + ".webp".len());
    let other = request("w=300&fm=webp&q=81").resolve("image/jpeg", None, None);
    assert_ne!(a.key(), other.key());
    // PNG is lossless: its quality is not part of the pixels.
    assert_eq!(
        request("w=3&fm=png&q=10")
            .resolve("image/jpeg", None, None)
            .key(),
        request("w=3&fm=png")
            .resolve("image/jpeg", None, None)
            .key()
    );
}

#[test]
fn the_signed_part_is_sorted_and_leaves_out_the_signature() {
    let t = request("w=300&sig=abc&exp=99&fit=crop&h=200");
    assert_eq!(t.signed_part(), "fit=crop&h=200&w=300");
}

#[test]
fn transform_links_sign_their_parameters() {
    let signer = crate::asset::MediaSigner::new(Some("secret"));
    let sig = signer.sign_transform("a", "b.png", "w=300", 2_000).unwrap();
    assert!(
        signer
            .verify_transform("a", "b.png", "w=300", Some(&sig), Some("2000"), 1_000)
            .is_ok()
    );
    // Other parameters, or none: the signature does not hold.
    assert!(
        signer
            .verify_transform("a", "b.png", "w=3000", Some(&sig), Some("2000"), 1_000)
            .is_err()
    );
    assert!(
        signer
            .verify("a", "b.png", Some(&sig), Some("2000"), 1_000)
            .is_err()
    );
}
