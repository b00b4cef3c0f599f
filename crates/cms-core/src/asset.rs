//! Assets: what an uploaded file is, what it may be called, and how its delivery links are
//! signed (SPEC.md "Asset" and Authentication point 10; CONTRACT.md sections 6 and 12).
//!
//! Everything here is a pure function of bytes and strings: the service layer reads the bytes,
//! this module judges them.

pub mod transform;

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
/// `{id}/{filename}:{exp}`, `exp` in Unix seconds. A link with transform parameters signs them
/// too, sorted as [`transform::TransformRequest::signed_part`] gives them:
/// `{id}/{filename}?{parameters}:{exp}` (CONTRACT.md section 18).
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
        self.sign_transform(id, filename, "", expires)
    }

    /// The `sig` for a link with transform parameters (`parameters` sorted, as
    /// [`transform::TransformRequest::signed_part`]; empty for none); `None` without a secret.
    pub fn sign_transform(
        &self,
        id: &str,
        filename: &str,
        parameters: &str,
        expires: i64,
    ) -> Option<String> {
        let mac = self.mac(id, filename, parameters, expires)?;
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
        self.verify_transform(id, filename, "", sig, exp, now)
    }

    /// [`MediaSigner::verify`] for a link with transform parameters (`parameters` as
    /// [`MediaSigner::sign_transform`] takes them).
    pub fn verify_transform(
        &self,
        id: &str,
        filename: &str,
        parameters: &str,
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
            .mac(id, filename, parameters, expires)
            .ok_or(SignatureError::NoSecret)?;
        mac.verify_slice(&claimed)
            .map_err(|_| SignatureError::Forged)?;
        if expires <= now {
            return Err(SignatureError::Expired);
        }
        Ok(())
    }

    fn mac(
        &self,
        id: &str,
        filename: &str,
        parameters: &str,
        expires: i64,
    ) -> Option<Hmac<Sha256>> {
        let key = self.key.as_ref()?;
        let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
        let link = if parameters.is_empty() {
            format!("{id}/{filename}:{expires}")
        } else {
            format!("{id}/{filename}?{parameters}:{expires}")
        };
        mac.update(link.as_bytes());
        Some(mac)
    }
}

#[cfg(test)]
mod tests;
