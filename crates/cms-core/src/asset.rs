//! Assets: what an uploaded file is, what it may be called, and how its delivery links are
//! signed (SPEC.md "Asset" and Authentication point 10; CONTRACT.md sections 6 and 12).
//!
//! Everything here is a pure function of bytes and strings: the service layer reads the bytes,
//! this module judges them.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// How many leading bytes [`sniff`] wants: enough for every header it reads, including a JPEG
/// whose size marker follows a large EXIF block.
pub const SNIFF_BYTES: usize = 256 * 1024;

/// The longest file name kept, in bytes.
const MAX_FILENAME: usize = 120;

/// `image` or `file` (the `assetType` filter value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssetType {
    Image,
    File,
}

impl AssetType {
    pub fn as_str(self) -> &'static str {
        match self {
            AssetType::Image => "image",
            AssetType::File => "file",
        }
    }

    pub fn parse(raw: &str) -> Option<AssetType> {
        match raw {
            "image" => Some(AssetType::Image),
            "file" => Some(AssetType::File),
            _ => None,
        }
    }
}

/// What the content of a file says it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sniffed {
    pub mime_type: String,
    pub asset_type: AssetType,
    /// Pixel dimensions, for the raster images whose header says them.
    pub dimensions: Option<(u32, u32)>,
}

impl Sniffed {
    pub fn is_video(&self) -> bool {
        self.mime_type.starts_with("video/")
    }
}

/// Judges a file by its leading bytes (up to [`SNIFF_BYTES`]), never by the name or the type
/// the client claimed: a PNG renamed `.txt` is a PNG, and HTML uploaded as `image/png` is HTML.
pub fn sniff(head: &[u8]) -> Sniffed {
    let mime_type = mime_of(head);
    let asset_type = if mime_type.starts_with("image/") {
        AssetType::Image
    } else {
        AssetType::File
    };
    let dimensions = if is_raster(&mime_type) {
        imagesize::blob_size(head).ok().and_then(|size| {
            Some((
                u32::try_from(size.width).ok()?,
                u32::try_from(size.height).ok()?,
            ))
        })
    } else {
        None
    };
    Sniffed {
        mime_type,
        asset_type,
        dimensions,
    }
}

fn mime_of(head: &[u8]) -> String {
    // SVG first: it is XML to a byte sniffer, and it can carry script.
    if looks_like_svg(head) {
        return "image/svg+xml".into();
    }
    if let Some(kind) = infer::get(head) {
        return kind.mime_type().to_string();
    }
    if looks_like_text(head) {
        return "text/plain".into();
    }
    "application/octet-stream".into()
}

fn looks_like_svg(head: &[u8]) -> bool {
    let start = &head[..head.len().min(4096)];
    let text = String::from_utf8_lossy(start).to_ascii_lowercase();
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    (trimmed.starts_with("<?xml") || trimmed.starts_with("<svg") || trimmed.starts_with("<!--"))
        && text.contains("<svg")
}

/// UTF-8 without NUL bytes; the last character may be cut by the end of the sniffed prefix.
fn looks_like_text(head: &[u8]) -> bool {
    if head.is_empty() || head.contains(&0) {
        return false;
    }
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && head.len() - e.valid_up_to() < 4,
    }
}

/// Raster formats a browser renders without running anything: the only types /media serves
/// `inline`. Everything else (SVG, HTML, PDF, video, ...) is served as an attachment.
pub fn is_raster(mime_type: &str) -> bool {
    matches!(
        mime_type,
        "image/png"
            | "image/jpeg"
            | "image/gif"
            | "image/webp"
            | "image/avif"
            | "image/bmp"
            | "image/x-icon"
            | "image/vnd.microsoft.icon"
    )
}

/// Reduces a client's file name to a safe base name: no directories (`/`, `\`), no leading dots,
/// only ASCII letters, digits, `.`, `-` and `_` (anything else becomes `-`), at most 120 bytes.
/// The result is safe in a URL path and in a quoted header value, and never empty.
pub fn safe_filename(raw: &str) -> String {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or_default();
    let mut name = String::with_capacity(base.len());
    for c in base.chars() {
        let keep = c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
        let c = if keep { c } else { '-' };
        // One dash for a run of replaced characters.
        if !(c == '-' && name.ends_with('-') && !keep) {
            name.push(c);
        }
    }
    let name = name
        .trim_start_matches(['.', '-'])
        .trim_end_matches(['.', '-']);
    let mut name = collapse_dots(name);
    if name.len() > MAX_FILENAME {
        // Keep the extension: `long-name.pdf` stays a `.pdf`.
        let ext = name
            .rfind('.')
            .map(|i| name[i..].to_string())
            .filter(|e| e.len() <= 16)
            .unwrap_or_default();
        name.truncate(MAX_FILENAME - ext.len());
        name = format!("{}{ext}", name.trim_end_matches(['.', '-']));
    }
    if name.is_empty() || name.chars().all(|c| c == '.') {
        "file".into()
    } else {
        name
    }
}

/// `a..b` becomes `a.b`: no `..` survives anywhere in a name.
fn collapse_dots(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if !(c == '.' && out.ends_with('.')) {
            out.push(c);
        }
    }
    out
}

/// The title an upload gets when none is given: the client's name without directories and
/// without control characters.
pub fn default_title(raw: &str) -> Option<String> {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or_default();
    let title: String = base.chars().filter(|c| !c.is_control()).collect();
    let title = title.trim();
    (!title.is_empty()).then(|| title.chars().take(200).collect())
}

/// Signs and checks `/media/{id}/{filename}?sig=...&exp=...` links: hex HMAC-SHA-256 of
/// `{id}/{filename}:{exp}`, `exp` in Unix seconds.
#[derive(Clone)]
pub struct MediaSigner {
    key: Option<Vec<u8>>,
}

/// Why a signed link was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureError {
    /// No signing secret is configured: no signature can be valid.
    NoSecret,
    /// `sig` or `exp` is missing or not well formed.
    Malformed,
    /// The signature does not match the link.
    Forged,
    Expired,
}

impl std::fmt::Debug for MediaSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MediaSigner")
            .field("configured", &self.key.is_some())
            .finish()
    }
}

impl MediaSigner {
    /// `None` or an empty secret: every check fails (SPEC.md Authentication point 10).
    pub fn new(secret: Option<&str>) -> MediaSigner {
        MediaSigner {
            key: secret
                .filter(|s| !s.is_empty())
                .map(|s| s.as_bytes().to_vec()),
        }
    }

    pub fn is_configured(&self) -> bool {
        self.key.is_some()
    }

    /// The `sig` for a link; `None` without a secret.
    pub fn sign(&self, id: &str, filename: &str, expires: i64) -> Option<String> {
        let mac = self.mac(id, filename, expires)?;
        Some(crate::hex::encode(&mac.finalize().into_bytes()))
    }

    /// Checks `sig` and `exp` as they came in the query string, at `now` (Unix seconds).
    pub fn verify(
        &self,
        id: &str,
        filename: &str,
        sig: Option<&str>,
        exp: Option<&str>,
        now: i64,
    ) -> Result<(), SignatureError> {
        let (Some(sig), Some(exp)) = (sig, exp) else {
            return Err(SignatureError::Malformed);
        };
        let expires: i64 = exp.parse().map_err(|_| SignatureError::Malformed)?;
        // A SHA-256 MAC is 32 bytes.
        let claimed = crate::hex::decode(sig)
            .filter(|b| b.len() == 32)
            .ok_or(SignatureError::Malformed)?;
        let mac = self
            .mac(id, filename, expires)
            .ok_or(SignatureError::NoSecret)?;
        mac.verify_slice(&claimed)
            .map_err(|_| SignatureError::Forged)?;
        if expires <= now {
            return Err(SignatureError::Expired);
        }
        Ok(())
    }

    fn mac(&self, id: &str, filename: &str, expires: i64) -> Option<Hmac<Sha256>> {
        let key = self.key.as_ref()?;
        let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
        mac.update(format!("{id}/{filename}:{expires}").as_bytes());
        Some(mac)
    }
}

#[cfg(test)]
mod tests {
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
        let check = |id, name, sig: &str, exp: &str, now| {
            signer.verify(id, name, Some(sig), Some(exp), now)
        };
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
}
