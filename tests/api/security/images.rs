//! Rows of the security table for image transforms (issue 27, CONTRACT.md section 18): with
//! `assets.transformSigning` on, only a signature over the parameters, or a credential that may
//! read the asset, has the server render a size; a picture too large to decode is refused from
//! its header.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::{ASSETS, Fx, SIGNING_SECRET, png};

/// A real 16×8 PNG (the fixture's assets are headers only): something to transform.
fn real_png() -> Vec<u8> {
    let image = image::RgbImage::from_pixel(16, 8, image::Rgb([10, 120, 200]));
    let mut out = std::io::Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// The `sig` of a /media link, as the server signs one (CONTRACT.md sections 12 and 18).
fn sign(id: &str, filename: &str, parameters: &str, exp: i64) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(SIGNING_SECRET.as_bytes()).unwrap();
    let link = if parameters.is_empty() {
        format!("{id}/{filename}:{exp}")
    } else {
        format!("{id}/{filename}?{parameters}:{exp}")
    };
    mac.update(link.as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Removes an asset a row made, so the fixture stays as it was.
async fn delete_asset(fx: &Fx, id: &str) {
    let res = fx
        .app
        .req(Method::DELETE, &format!("{ASSETS}/{id}"))
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
}

pub(super) async fn transforms_need_a_signature_over_their_parameters(fx: Arc<Fx>) {
    let app = &fx.app;
    let res = app
        .req(Method::POST, ASSETS)
        .cookie(&fx.editor)
        .multipart(&[], Some(("file", "tile.png", &real_png())))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    let url = res.body["data"]["url"].as_str().unwrap().to_string();
    let transform = format!("{url}?w=8");
    let refused = |what: &str, reply: crate::support::Reply| {
        assert_eq!(
            reply.status,
            StatusCode::FORBIDDEN,
            "{what}: {}",
            reply.body
        );
        assert_eq!(reply.body["error"], "Forbidden", "{what}");
    };
    // Nobody outside: anonymous, another organization's admin, a child's admin.
    refused("anonymous", app.get(&transform).send().await);
    refused(
        "outsider session",
        app.get(&transform).cookie(&fx.stranger).send().await,
    );
    refused(
        "outsider key",
        app.get(&transform).key(&fx.stranger_key).send().await,
    );
    refused(
        "child admin",
        app.get(&transform).cookie(&fx.child_admin).send().await,
    );
    // The original stays public; a reader of the organization (the back office) transforms.
    assert_eq!(app.get(&url).send().await.status, StatusCode::OK);
    let viewer = app.get(&transform).cookie(&fx.viewer).send().await;
    assert_eq!(viewer.status, StatusCode::OK, "{}", viewer.body);
    assert_eq!(viewer.header("content-type"), Some("image/png"));

    // A signature covers exactly its parameters and expiry.
    let exp = chrono::Utc::now().timestamp() + 3600;
    let sig = sign(&id, "tile.png", "w=8", exp);
    let signed = app
        .get(&format!("{url}?w=8&sig={sig}&exp={exp}"))
        .send()
        .await;
    assert_eq!(signed.status, StatusCode::OK, "{}", signed.body);
    refused(
        "another width under the signature",
        app.get(&format!("{url}?w=9&sig={sig}&exp={exp}"))
            .send()
            .await,
    );
    refused(
        "a parameter added under the signature",
        app.get(&format!("{url}?w=8&fm=webp&sig={sig}&exp={exp}"))
            .send()
            .await,
    );
    let plain = sign(&id, "tile.png", "", exp);
    refused(
        "the original's signature on a transform",
        app.get(&format!("{url}?w=8&sig={plain}&exp={exp}"))
            .send()
            .await,
    );
    let late = chrono::Utc::now().timestamp() - 10;
    refused(
        "an expired signature",
        app.get(&format!(
            "{url}?w=8&sig={}&exp={late}",
            sign(&id, "tile.png", "w=8", late)
        ))
        .send()
        .await,
    );

    delete_asset(&fx, &id).await;
}

pub(super) async fn pixel_bomb_transform_is_refused_from_its_header(fx: Arc<Fx>) {
    let app = &fx.app;
    // Bytes of its own (the upload row stores a bomb too, and uploads are de-duplicated).
    let res = app
        .req(Method::POST, ASSETS)
        .cookie(&fx.editor)
        .multipart(&[], Some(("file", "bomb.png", &png(100_000, 100_000, 65))))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    let url = res.body["data"]["url"].as_str().unwrap().to_string();
    // 10 gigapixels, ten thousand times what a transform takes: refused before any decode.
    let res = app
        .get(&format!("{url}?w=10&h=10&fit=crop"))
        .cookie(&fx.viewer)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.body);
    let message = res.body["message"].as_str().unwrap();
    assert!(message.contains("megapixels"), "{message}");
    assert_eq!(res.body["lqip"], serde_json::Value::Null);
    delete_asset(&fx, &id).await;
}
