use super::*;

/// A 3x2 PNG: signature, IHDR with the dimensions (what the header reader needs).
fn png() -> Vec<u8> {
    let mut bytes = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    bytes.extend_from_slice(&[0, 0, 0, 13]);
    bytes.extend_from_slice(b"IHDR");
    bytes.extend_from_slice(&3u32.to_be_bytes());
    bytes.extend_from_slice(&2u32.to_be_bytes());
    bytes.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    bytes
}

#[test]
fn a_png_is_an_image_with_its_dimensions() {
    let s = sniff(&png());
    assert_eq!(s.mime_type, "image/png");
    assert_eq!(s.asset_type, AssetType::Image);
    assert_eq!(s.dimensions, Some((3, 2)));
}

#[test]
fn svg_is_an_image_but_not_raster() {
    let s = sniff(b"<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>");
    assert_eq!(s.mime_type, "image/svg+xml");
    assert_eq!(s.asset_type, AssetType::Image);
    assert_eq!(s.dimensions, None);
    assert!(!is_raster(&s.mime_type));
    assert_eq!(sniff(b"  <svg></svg>").mime_type, "image/svg+xml");
}

#[test]
fn html_text_and_binary_are_files() {
    assert_eq!(
        sniff(b"<!DOCTYPE html><html><script>x</script></html>").mime_type,
        "text/html"
    );
    assert_eq!(sniff("héllo, world\n".as_bytes()).mime_type, "text/plain");
    // A prefix that cuts a multi-byte character is still text.
    assert_eq!(sniff(&"é".as_bytes()[..1]).mime_type, "text/plain");
    let s = sniff(&[0, 1, 2, 3, 0xff]);
    assert_eq!(s.mime_type, "application/octet-stream");
    assert_eq!(s.asset_type, AssetType::File);
    assert_eq!(sniff(b"").mime_type, "application/octet-stream");
    assert_eq!(sniff(b"%PDF-1.7\n").mime_type, "application/pdf");
}

#[test]
fn a_video_is_a_file() {
    let mut mp4 = vec![0, 0, 0, 0x18];
    mp4.extend_from_slice(b"ftypmp42");
    mp4.extend_from_slice(&[0; 12]);
    let s = sniff(&mp4);
    assert!(s.is_video(), "{s:?}");
    assert_eq!(s.asset_type, AssetType::File);
}

#[test]
fn file_names_lose_directories_and_unsafe_characters() {
    assert_eq!(safe_filename("../../etc/passwd"), "passwd");
    assert_eq!(safe_filename("..\\..\\boot.ini"), "boot.ini");
    assert_eq!(safe_filename(".."), "file");
    assert_eq!(safe_filename(""), "file");
    assert_eq!(safe_filename(".htaccess"), "htaccess");
    assert_eq!(
        safe_filename("a\r\nSet-Cookie: x.png"),
        "a-Set-Cookie-x.png"
    );
    assert_eq!(safe_filename("my \"photo\".jpg"), "my-photo-.jpg");
    assert_eq!(safe_filename("a..b....png"), "a.b.png");
    assert_eq!(safe_filename("Été 2024.png"), "t-2024.png");
    let long = format!("{}.pdf", "x".repeat(500));
    let name = safe_filename(&long);
    assert_eq!(name.len(), MAX_FILENAME);
    assert!(name.ends_with(".pdf"));
}

#[test]
fn default_titles_keep_the_name_readable() {
    assert_eq!(
        default_title("C:\\x\\Été 2024.png").unwrap(),
        "Été 2024.png"
    );
    assert_eq!(default_title("a\u{7}b"), Some("ab".into()));
    assert_eq!(default_title("dir/"), None);
}

#[test]
fn signatures_check_link_and_expiry() {
    let signer = MediaSigner::new(Some("a signing secret of at least thirty-two chars"));
    let sig = signer.sign("id1", "a.png", 2000).unwrap();
    assert_eq!(sig.len(), 64);
    let check =
        |id, name, sig: &str, exp: &str, now| signer.verify(id, name, Some(sig), Some(exp), now);
    assert_eq!(check("id1", "a.png", &sig, "2000", 1999), Ok(()));
    assert_eq!(
        check("id1", "a.png", &sig, "2000", 2000),
        Err(SignatureError::Expired)
    );
    assert_eq!(
        check("id2", "a.png", &sig, "2000", 0),
        Err(SignatureError::Forged)
    );
    assert_eq!(
        check("id1", "b.png", &sig, "2000", 0),
        Err(SignatureError::Forged)
    );
    assert_eq!(
        check("id1", "a.png", &sig, "2001", 0),
        Err(SignatureError::Forged)
    );
    assert_eq!(
        check("id1", "a.png", "zz", "2000", 0),
        Err(SignatureError::Malformed)
    );
    assert_eq!(
        check("id1", "a.png", &sig, "soon", 0),
        Err(SignatureError::Malformed)
    );
    assert_eq!(
        signer.verify("id1", "a.png", None, Some("2000"), 0),
        Err(SignatureError::Malformed)
    );
}

#[test]
fn without_a_secret_nothing_verifies() {
    let signer = MediaSigner::new(None);
    assert!(!signer.is_configured());
    assert_eq!(signer.sign("id", "a", 1), None);
    let other = MediaSigner::new(Some("x")).sign("id", "a", 10).unwrap();
    assert_eq!(
        signer.verify("id", "a", Some(&other), Some("10"), 0),
        Err(SignatureError::NoSecret)
    );
    assert!(!MediaSigner::new(Some("")).is_configured());
}

proptest::proptest! {
    #[test]
    fn safe_names_are_always_safe(raw in ".{0,300}") {
        let name = safe_filename(&raw);
        proptest::prop_assert!(!name.is_empty() && name.len() <= MAX_FILENAME);
        proptest::prop_assert!(!name.contains(['/', '\\', '"', '\r', '\n']));
        proptest::prop_assert!(!name.contains("..") && !name.starts_with('.'));
        proptest::prop_assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')));
    }
}
