//! Image transform parameters of `/media/{id}/{filename}` (CONTRACT.md section 18): what a
//! query string asks for, checked and normalized, and the key its derivative is cached under.
//!
//! Pure: no pixels here. The service resolves a [`TransformRequest`] against the asset (its
//! format, its hotspot, the client's `Accept`) into a [`Resolved`] transform, whose
//! [`Resolved::key`] names the derivative: two requests that produce the same pixels share it
//! (`w=600&dpr=2` is `w=1200`; a focal point only matters to `fit=crop`; PNG has no quality).

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// The largest `w` or `h`, and the largest output side after `dpr`.
pub const MAX_SIDE: u32 = 4096;
/// The default `q`.
pub const DEFAULT_QUALITY: u8 = 80;
/// Bumped when the same parameters would give other pixels (a new resize filter, encoder
/// settings): old derivatives are then never served again.
const KEY_VERSION: &str = "v1";

/// How the image meets `w` and `h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Fit inside, keeping the aspect ratio (may upscale). The default.
    Clip,
    /// Fill `w`×`h` and cut what overflows, around the focal point.
    Crop,
    /// Like `Clip`, never larger than the source.
    Max,
}

impl Fit {
    pub fn as_str(self) -> &'static str {
        match self {
            Fit::Clip => "clip",
            Fit::Crop => "crop",
            Fit::Max => "max",
        }
    }
}

/// An output format a request may name (`fm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Jpg,
    Png,
    Webp,
    Avif,
}

impl OutputFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            OutputFormat::Jpg => "jpg",
            OutputFormat::Png => "png",
            OutputFormat::Webp => "webp",
            OutputFormat::Avif => "avif",
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            OutputFormat::Jpg => "image/jpeg",
            OutputFormat::Png => "image/png",
            OutputFormat::Webp => "image/webp",
            OutputFormat::Avif => "image/avif",
        }
    }

    fn parse(raw: &str) -> Option<OutputFormat> {
        match raw {
            "jpg" => Some(OutputFormat::Jpg),
            "png" => Some(OutputFormat::Png),
            "webp" => Some(OutputFormat::Webp),
            "avif" => Some(OutputFormat::Avif),
            _ => None,
        }
    }

    /// The format a transform of an original of `mime_type` writes when the request names
    /// none: the original's own, except for formats no encoder here writes (GIF, BMP, icons),
    /// which become PNG, lossless like them.
    pub fn for_original(mime_type: &str) -> OutputFormat {
        match mime_type {
            "image/jpeg" => OutputFormat::Jpg,
            "image/webp" => OutputFormat::Webp,
            "image/avif" => OutputFormat::Avif,
            _ => OutputFormat::Png,
        }
    }
}

/// A source crop in pixels (`rect=x,y,w,h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

/// A point as fractions (0 to 1) of the image's width and height.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FocalPoint {
    pub x: f64,
    pub y: f64,
}

impl FocalPoint {
    /// A point when both fractions lie in 0..=1.
    pub fn new(x: f64, y: f64) -> Option<FocalPoint> {
        let fraction = |v: f64| (0.0..=1.0).contains(&v);
        (fraction(x) && fraction(y)).then_some(FocalPoint { x, y })
    }
}

/// The transform a query string asks for, every value checked.
#[derive(Debug, Clone, PartialEq)]
pub struct TransformRequest {
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub fit: Fit,
    pub rect: Option<Rect>,
    /// `fm`; `None` keeps the original's format (unless `auto_format` finds better).
    pub format: Option<OutputFormat>,
    /// `auto=format`: AVIF, then WebP, when the client's `Accept` takes them.
    pub auto_format: bool,
    pub quality: u8,
    /// `dpr`, 1 to 3.
    pub dpr: f64,
    /// `fp-x`/`fp-y`: the focal point of this request, over the asset's hotspot.
    pub focal: Option<FocalPoint>,
    /// The transform parameters as given, sorted by name: what a signature covers.
    signed_part: String,
}

/// A transform parameter with a bad name or value: a 400 for the client, saying which.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TransformError(pub String);

fn bad(message: impl Into<String>) -> TransformError {
    TransformError(message.into())
}

/// The parameter names a transform takes; `sig` and `exp` belong to signed links.
const NAMES: [&str; 11] = [
    "w", "h", "fit", "rect", "fm", "q", "dpr", "auto", "fp-x", "fp-y", "sig",
];

impl TransformRequest {
    /// Reads the transform parameters of a `/media` query string (decoded name-value pairs).
    /// `None` when there is none (only `sig`/`exp`, or nothing): the original is served. An
    /// unknown name, a repeated one, or a value out of its set or range is an error.
    pub fn parse(pairs: &[(String, String)]) -> Result<Option<TransformRequest>, TransformError> {
        let mut seen: Vec<&str> = Vec::new();
        for (name, _) in pairs {
            if name != "exp" && !NAMES.contains(&name.as_str()) {
                return Err(bad(format!(
                    "`{name}` is not a transform parameter (w, h, fit, rect, fm, q, dpr, auto, fp-x, fp-y)"
                )));
            }
            if seen.contains(&name.as_str()) {
                return Err(bad(format!("`{name}` is given more than once")));
            }
            seen.push(name);
        }
        let mut given: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .filter(|(n, _)| !matches!(*n, "sig" | "exp"))
            .collect();
        if given.is_empty() {
            return Ok(None);
        }
        given.sort();
        let value = |name: &str| given.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        let focal = match (value("fp-x"), value("fp-y")) {
            (None, None) => None,
            (x, y) => {
                let x = x.map(|v| fraction("fp-x", v)).transpose()?.unwrap_or(0.5);
                let y = y.map(|v| fraction("fp-y", v)).transpose()?.unwrap_or(0.5);
                FocalPoint::new(x, y)
            }
        };
        Ok(Some(TransformRequest {
            width: value("w").map(|v| side("w", v)).transpose()?,
            height: value("h").map(|v| side("h", v)).transpose()?,
            fit: value("fit")
                .map(parse_fit)
                .transpose()?
                .unwrap_or(Fit::Clip),
            rect: value("rect").map(parse_rect).transpose()?,
            format: value("fm")
                .map(|v| {
                    OutputFormat::parse(v).ok_or_else(|| bad("`fm` is one of jpg, png, webp, avif"))
                })
                .transpose()?,
            auto_format: match value("auto") {
                None => false,
                Some("format") => true,
                Some(_) => return Err(bad("`auto` takes `format`")),
            },
            quality: value("q")
                .map(parse_quality)
                .transpose()?
                .unwrap_or(DEFAULT_QUALITY),
            dpr: value("dpr").map(parse_dpr).transpose()?.unwrap_or(1.0),
            focal,
            signed_part: given
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join("&"),
        }))
    }

    /// The parameters a signature covers: the transform parameters as given, sorted, joined
    /// like a query string (`fit=crop&h=300&w=300`).
    pub fn signed_part(&self) -> &str {
        &self.signed_part
    }

    /// The transform for an original of `mime_type` whose hotspot is `hotspot`, for a client
    /// that accepts `accept` (its `Accept` header).
    pub fn resolve(
        &self,
        mime_type: &str,
        hotspot: Option<FocalPoint>,
        accept: Option<&str>,
    ) -> Resolved {
        let (width, height) = self.output_box();
        let format = match (self.format, self.auto_format) {
            (Some(format), _) => format,
            (None, true) => best_accepted(accept).unwrap_or(OutputFormat::for_original(mime_type)),
            (None, false) => OutputFormat::for_original(mime_type),
        };
        let crops = self.fit == Fit::Crop && width.is_some() && height.is_some();
        Resolved {
            width,
            height,
            fit: self.fit,
            rect: self.rect,
            format,
            quality: self.quality,
            // Only a crop looks at the focal point: other fits share their derivative.
            focal: if crops { self.focal.or(hotspot) } else { None },
            varies_by_accept: self.format.is_none() && self.auto_format,
        }
    }

    /// `w` and `h` times `dpr`, both scaled down together when a side would pass
    /// [`MAX_SIDE`]: the shape asked for is kept, the size is capped.
    fn output_box(&self) -> (Option<u32>, Option<u32>) {
        let scaled = |side: Option<u32>| side.map(|s| f64::from(s) * self.dpr);
        let (w, h) = (scaled(self.width), scaled(self.height));
        let largest = w.unwrap_or(0.0).max(h.unwrap_or(0.0));
        let cap = if largest > f64::from(MAX_SIDE) {
            f64::from(MAX_SIDE) / largest
        } else {
            1.0
        };
        let side = |v: Option<f64>| v.map(|v| ((v * cap).round() as u32).clamp(1, MAX_SIDE));
        (side(w), side(h))
    }
}

/// A transform with everything decided: what the encoder is asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// Output sides in pixels (`dpr` applied).
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub fit: Fit,
    pub rect: Option<Rect>,
    pub format: OutputFormat,
    pub quality: u8,
    /// The focal point the crop centres on: the request's, else the asset's hotspot. `None`
    /// unless the transform crops.
    pub focal: Option<FocalPoint>,
    /// The format came from `Accept` (`auto=format`): caches must keep one copy per `Accept`.
    pub varies_by_accept: bool,
}

impl Resolved {
    /// The normalized parameters, as one line: equal lines make equal pixels.
    pub fn normalized(&self) -> String {
        let mut line = format!("{KEY_VERSION};fit={}", self.fit.as_str());
        if let Some(w) = self.width {
            let _ = write!(line, ";w={w}");
        }
        if let Some(h) = self.height {
            let _ = write!(line, ";h={h}");
        }
        if let Some(r) = self.rect {
            let _ = write!(line, ";rect={},{},{},{}", r.x, r.y, r.width, r.height);
        }
        if let Some(f) = self.focal {
            // Four decimals: a tenth of a pixel on a 1,000-pixel side.
            let _ = write!(line, ";fp={:.4},{:.4}", f.x, f.y);
        }
        let _ = write!(line, ";fm={}", self.format.as_str());
        if self.format != OutputFormat::Png {
            let _ = write!(line, ";q={}", self.quality);
        }
        line
    }

    /// The derivative's name: a digest of [`Resolved::normalized`] (hex, 32 characters) and
    /// the format's extension.
    pub fn key(&self) -> String {
        let digest = Sha256::digest(self.normalized().as_bytes());
        format!(
            "{}.{}",
            crate::hex::encode(&digest[..16]),
            self.format.as_str()
        )
    }
}

/// The best format `Accept` takes: AVIF, then WebP; `None` when it names neither. A type with
/// `q=0` is refused by the client, not accepted.
fn best_accepted(accept: Option<&str>) -> Option<OutputFormat> {
    let accept = accept?;
    let takes = |mime: &str| {
        accept.split(',').any(|part| {
            let mut pieces = part.split(';').map(str::trim);
            let ty = pieces.next().unwrap_or_default();
            let refused = pieces.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f64>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            ty.eq_ignore_ascii_case(mime) && !refused
        })
    };
    if takes("image/avif") {
        Some(OutputFormat::Avif)
    } else if takes("image/webp") {
        Some(OutputFormat::Webp)
    } else {
        None
    }
}

fn integer(name: &str, raw: &str) -> Result<u32, TransformError> {
    // Digits only: no sign, no spaces, no `1e3`.
    if raw.is_empty() || raw.len() > 9 || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(format!("`{name}` is a whole number")));
    }
    raw.parse()
        .map_err(|_| bad(format!("`{name}` is a whole number")))
}

fn side(name: &str, raw: &str) -> Result<u32, TransformError> {
    let v = integer(name, raw)?;
    if (1..=MAX_SIDE).contains(&v) {
        Ok(v)
    } else {
        Err(bad(format!("`{name}` is 1 to {MAX_SIDE}")))
    }
}

fn parse_fit(raw: &str) -> Result<Fit, TransformError> {
    match raw {
        "clip" => Ok(Fit::Clip),
        "crop" => Ok(Fit::Crop),
        "max" => Ok(Fit::Max),
        _ => Err(bad("`fit` is one of clip, crop, max")),
    }
}

fn parse_quality(raw: &str) -> Result<u8, TransformError> {
    match integer("q", raw)? {
        q @ 1..=100 => Ok(q as u8),
        _ => Err(bad("`q` is 1 to 100")),
    }
}

/// A plain decimal number (`1`, `0.25`, `1.5`): no sign, no exponent, no `inf` or `NaN`.
fn decimal(name: &str, raw: &str) -> Result<f64, TransformError> {
    let plain = !raw.is_empty()
        && raw.len() <= 12
        && raw.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && raw.bytes().filter(|b| *b == b'.').count() <= 1
        && !raw.starts_with('.')
        && !raw.ends_with('.');
    if !plain {
        return Err(bad(format!("`{name}` is a decimal number")));
    }
    raw.parse()
        .map_err(|_| bad(format!("`{name}` is a decimal number")))
}

fn parse_dpr(raw: &str) -> Result<f64, TransformError> {
    let v = decimal("dpr", raw)?;
    if (1.0..=3.0).contains(&v) {
        Ok(v)
    } else {
        Err(bad("`dpr` is 1 to 3"))
    }
}

fn fraction(name: &str, raw: &str) -> Result<f64, TransformError> {
    let v = decimal(name, raw)?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(bad(format!("`{name}` is 0 to 1")))
    }
}

fn parse_rect(raw: &str) -> Result<Rect, TransformError> {
    let message = "`rect` is x,y,w,h in whole pixels, w and h at least 1";
    let parts: Vec<&str> = raw.split(',').collect();
    let [x, y, w, h] = parts.as_slice() else {
        return Err(bad(message));
    };
    let number = |v: &str| integer("rect", v).map_err(|_| bad(message));
    let rect = Rect {
        x: number(x)?,
        y: number(y)?,
        width: number(w)?,
        height: number(h)?,
    };
    if rect.width == 0 || rect.height == 0 {
        return Err(bad(message));
    }
    Ok(rect)
}

#[cfg(test)]
mod tests;
