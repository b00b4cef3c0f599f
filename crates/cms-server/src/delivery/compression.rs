//! Compression (CONTRACT.md section 15): JSON and text answers of 1 KiB or more are encoded
//! per `Accept-Encoding` (zstd, br, gzip, in the client's order of preference); `/media`
//! originals (stored bytes, served with ranges and their own tags) and event streams
//! (`text/event-stream`, which must reach the client event by event) never are.
//!
//! An entity tag names one representation (RFC 9110 section 8.8.3), and a compressed body is
//! another one than the identity body. So a compressed answer's strong tag gets its coding
//! appended (`"<tag>-br"`); `validators` reads a tag in either form as the same current body.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Response, header};
use axum::middleware::Next;
use tower_http::compression::predicate::{Predicate, SizeAbove};
use tower_http::compression::{CompressionLayer, CompressionLevel};

use super::validators::CODINGS;

/// The smallest body compressed: below it the saving is smaller than the coding's overhead.
const MIN_BYTES: u16 = 1024;

/// A response extension that keeps an answer's body as it is (`/media` originals).
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeepIdentity;

/// Marks a response as [`KeepIdentity`].
pub(crate) async fn keep_identity(
    mut response: axum::response::Response,
) -> axum::response::Response {
    response.extensions_mut().insert(KeepIdentity);
    response
}

/// Which answers are compressed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JsonAndText;

impl Predicate for JsonAndText {
    fn should_compress<B: axum::body::HttpBody>(&self, response: &Response<B>) -> bool {
        if response.extensions().get::<KeepIdentity>().is_some() {
            return false;
        }
        let Some(content_type) = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
        else {
            return false;
        };
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        let json = essence == "application/json" || essence.ends_with("+json");
        let text = essence.starts_with("text/") && essence != "text/event-stream";
        (json || text) && SizeAbove::new(MIN_BYTES).should_compress(response)
    }
}

/// The compression layer: zstd, br and gzip, at their default levels.
pub(crate) fn layer() -> CompressionLayer<JsonAndText> {
    CompressionLayer::new()
        .quality(CompressionLevel::Default)
        .no_deflate()
        .compress_when(JsonAndText)
}

/// Appends the coding to the strong tag of a compressed answer (outside the compression
/// layer, which sets `Content-Encoding`).
pub(crate) async fn tag_coding(req: Request, next: Next) -> Response<Body> {
    let mut response = next.run(req).await;
    let headers = response.headers();
    let Some(coding) = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .and_then(|c| CODINGS.iter().find(|known| c.eq_ignore_ascii_case(known)))
    else {
        return response;
    };
    let Some(tag) = headers
        .get(header::ETAG)
        .and_then(|v| v.to_str().ok())
        .and_then(|t| t.strip_prefix('"'))
        .and_then(|t| t.strip_suffix('"'))
    else {
        return response;
    };
    if let Ok(coded) = HeaderValue::from_str(&format!("\"{tag}-{coding}\"")) {
        response.headers_mut().insert(header::ETAG, coded);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(content_type: &str, size: usize, keep: bool) -> Response<Body> {
        let mut response = Response::new(Body::from(vec![b'x'; size]));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_str(content_type).unwrap(),
        );
        if keep {
            response.extensions_mut().insert(KeepIdentity);
        }
        response
    }

    #[test]
    fn json_and_text_of_a_kibibyte_are_compressed() {
        let compressed = |t: &str, size: usize, keep: bool| {
            JsonAndText.should_compress(&response(t, size, keep))
        };
        assert!(compressed("application/json", 1024, false));
        assert!(compressed("application/problem+json", 4096, false));
        assert!(compressed("text/html; charset=utf-8", 2048, false));
        assert!(compressed("Text/JavaScript", 2048, false));
        assert!(!compressed("application/json", 1023, false));
        assert!(!compressed("text/event-stream", 4096, false));
        assert!(!compressed("image/svg", 4096, false));
        assert!(!compressed("application/octet-stream", 4096, false));
        assert!(!compressed("text/plain; charset=utf-8", 4096, true));
    }
}
