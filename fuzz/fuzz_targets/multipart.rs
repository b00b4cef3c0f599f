//! Upload forms: the fuzz bytes are the body of a `POST` with `Content-Type:
//! multipart/form-data; boundary=X`, sent through an axum router that reads the form exactly as
//! `cms-server`'s `routes/assets.rs` `read_form` does: axum's `Multipart` (multer) under a
//! `DefaultBodyLimit` of the upload limit plus form overhead, field by field, `file` streamed
//! chunk by chunk with its size counted against the upload limit, the metadata fields read as
//! text, any other field refused; then the file's name and head go through
//! `cms_core::asset::{safe_filename, default_title, sniff}` as the asset service stages it.
//! The real router needs a database and the whole service (too heavy to build and run under
//! the fuzzer); the limits here are the route's shape with smaller numbers, so inputs reach them.
//! Invariants: no panic; the answer is 200, 400 or 413 (never a 500); a safe file name is
//! non-empty, at most 120 bytes, only `[A-Za-z0-9._-]`, with no leading dot and no `..`; a
//! default title has no control character and at most 200 characters; the sniffed type of a
//! raster image is an image.
#![no_main]

use std::sync::OnceLock;

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Request};
use axum::http::{StatusCode, header};
use axum::routing::post;
use cms_core::asset::{AssetType, SNIFF_BYTES, default_title, is_raster, safe_filename, sniff};
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

/// `assets.maxUploadBytes` for the fuzzer: small, so inputs can exceed it.
const MAX_UPLOAD: usize = 4096;
/// The route's room for the form's other fields and boundaries, scaled down likewise.
const FORM_OVERHEAD: usize = 1024;

fn form_error(e: axum::extract::multipart::MultipartError) -> StatusCode {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        StatusCode::PAYLOAD_TOO_LARGE
    } else {
        // The route puts the parser's message into the 400 body.
        let _ = e.body_text();
        StatusCode::BAD_REQUEST
    }
}

fn check_file(client_filename: &str, head: &[u8]) {
    let name = safe_filename(client_filename);
    assert!(!name.is_empty() && name.len() <= 120, "{name:?}");
    assert!(
        name.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_')),
        "{name:?}"
    );
    assert!(!name.starts_with('.') && !name.contains(".."), "{name:?}");
    if let Some(title) = default_title(client_filename) {
        assert!(!title.is_empty() && title.chars().count() <= 200);
        assert!(!title.chars().any(char::is_control), "{title:?}");
    }
    let sniffed = sniff(head);
    if is_raster(&sniffed.mime_type) {
        assert_eq!(sniffed.asset_type, AssetType::Image);
    }
}

async fn read_form(request: Request) -> StatusCode {
    let mut multipart = match Multipart::from_request(request, &()).await {
        Ok(m) => m,
        Err(e) => {
            let _ = e.body_text();
            return StatusCode::BAD_REQUEST;
        }
    };
    let mut has_file = false;
    loop {
        let mut field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(e) => return form_error(e),
        };
        let name = field.name().unwrap_or_default().to_string();
        if name == "file" {
            if has_file {
                return StatusCode::BAD_REQUEST;
            }
            has_file = true;
            let filename = field.file_name().unwrap_or("file").to_string();
            let mut head = Vec::new();
            let mut size = 0usize;
            loop {
                match field.chunk().await {
                    Ok(Some(chunk)) => {
                        size += chunk.len();
                        if size > MAX_UPLOAD {
                            return StatusCode::PAYLOAD_TOO_LARGE;
                        }
                        let room = SNIFF_BYTES.saturating_sub(head.len());
                        head.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    }
                    Ok(None) => break,
                    Err(e) => return form_error(e),
                }
            }
            check_file(&filename, &head);
            continue;
        }
        if !matches!(
            name.as_str(),
            "title" | "description" | "alt" | "creditLine" | "organizationId"
        ) {
            return StatusCode::BAD_REQUEST;
        }
        let text = match field.text().await {
            Ok(text) => text,
            Err(e) => return form_error(e),
        };
        if text.contains('\0') {
            return StatusCode::BAD_REQUEST;
        }
    }
    if has_file {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    }
}

struct Harness {
    runtime: tokio::runtime::Runtime,
    router: Router,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| Harness {
        runtime: tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime"),
        router: Router::new()
            .route("/api/assets", post(read_form))
            .layer(DefaultBodyLimit::max(MAX_UPLOAD + FORM_OVERHEAD)),
    })
}

fuzz_target!(|data: &[u8]| {
    let h = harness();
    let request = Request::post("/api/assets")
        .header(header::CONTENT_TYPE, "multipart/form-data; boundary=X")
        .body(Body::from(data.to_vec()))
        .expect("a request");
    let response = h
        .runtime
        .block_on(h.router.clone().oneshot(request))
        .expect("infallible");
    let status = response.status();
    assert!(
        matches!(
            status,
            StatusCode::OK | StatusCode::BAD_REQUEST | StatusCode::PAYLOAD_TOO_LARGE
        ),
        "{status}"
    );
});
