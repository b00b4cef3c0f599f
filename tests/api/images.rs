//! Image transforms at `/media` and image details (CONTRACT.md section 18, issue 27): every
//! parameter checked on the decoded derivative, on local disk and on S3 (moto) storage; bad
//! parameters, pixel bombs, EXIF orientation and GPS; the derivative cache and its removal with
//! the asset; signed transforms; placeholders at upload and by the backfill; GraphQL `url`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::http::{Method, StatusCode};
use image::{DynamicImage, GenericImageView, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use serde_json::{Value, json};

use crate::assets::{ASSETS, png, uploaded};
use crate::assets_s3::{bucket_keys, s3_config};
use crate::s3::S3Server;
use crate::support::{Reply, TestApp, config_for};

const GREY: [u8; 3] = [128, 128, 128];
const RED: [u8; 3] = [220, 20, 20];
const GREEN: [u8; 3] = [20, 200, 20];

/// A 400×200 JPEG: grey, with a red stripe at x 20 to 60 and a green one at x 340 to 380.
fn striped_jpeg() -> Vec<u8> {
    let image = RgbImage::from_fn(400, 200, |x, _| match x {
        20..60 => Rgb(RED),
        340..380 => Rgb(GREEN),
        _ => Rgb(GREY),
    });
    encode(DynamicImage::ImageRgb8(image), ImageFormat::Jpeg)
}

fn encode(image: DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    image.write_to(&mut out, format).unwrap();
    out.into_inner()
}

/// A 40×20 JPEG stored sideways (EXIF orientation 6: turn 90° clockwise to show), with a red
/// block in its stored top-left corner and a GPS position in its EXIF.
fn sideways_jpeg_with_gps() -> Vec<u8> {
    let image = RgbImage::from_fn(40, 20, |x, y| {
        if x < 10 && y < 10 {
            Rgb(RED)
        } else {
            Rgb(GREY)
        }
    });
    let jpeg = encode(DynamicImage::ImageRgb8(image), ImageFormat::Jpeg);
    // TIFF, big-endian: IFD0 (orientation 6, a pointer to the GPS IFD), then the GPS IFD
    // (latitude reference "N").
    let mut tiff = b"MM\x00\x2a\x00\x00\x00\x08".to_vec();
    tiff.extend_from_slice(&[0, 2]);
    tiff.extend_from_slice(&[0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0]);
    tiff.extend_from_slice(&[0x88, 0x25, 0, 4, 0, 0, 0, 1, 0, 0, 0, 38]);
    tiff.extend_from_slice(&[0, 0, 0, 0]);
    tiff.extend_from_slice(&[0, 1]);
    tiff.extend_from_slice(&[0x00, 0x01, 0, 2, 0, 0, 0, 2, b'N', 0, 0, 0]);
    tiff.extend_from_slice(&[0, 0, 0, 0]);
    let mut app1 = b"Exif\x00\x00".to_vec();
    app1.extend_from_slice(&tiff);
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&[0xff, 0xe1]);
    out.extend_from_slice(&((app1.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(&app1);
    out.extend_from_slice(&jpeg[2..]);
    out
}

/// An 8×8 PNG whose left half is transparent.
fn half_transparent_png() -> Vec<u8> {
    let image = RgbaImage::from_fn(8, 8, |x, _| {
        if x < 4 {
            Rgba([0, 0, 255, 0])
        } else {
            Rgba([0, 0, 255, 255])
        }
    });
    encode(DynamicImage::ImageRgba8(image), ImageFormat::Png)
}

fn decode(bytes: &[u8]) -> DynamicImage {
    image::load_from_memory(bytes).expect("the derivative decodes")
}

/// Whether a decoded pixel is close to `colour` (JPEG moves colours a little).
fn near(image: &DynamicImage, x: u32, y: u32, colour: [u8; 3]) -> bool {
    let p = image.get_pixel(x, y).0;
    (0..3).all(|i| (i32::from(p[i]) - i32::from(colour[i])).abs() < 40)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

async fn fetch(app: &TestApp, url: &str) -> Reply {
    app.get(url).send().await
}

/// A derivative that must be served: its reply, checked for type and caching.
async fn derivative(app: &TestApp, url: &str, content_type: &str) -> Reply {
    let res = fetch(app, url).await;
    assert_eq!(res.status, StatusCode::OK, "{url}: {}", res.body);
    assert_eq!(res.header("content-type"), Some(content_type), "{url}");
    assert_eq!(
        res.header("cache-control"),
        Some("public, max-age=31536000, immutable"),
        "{url}"
    );
    assert!(res.header("etag").is_some(), "{url}");
    res
}

/// A crop that follows the asset's hotspot: served, but never marked immutable.
async fn crop_reply(app: &TestApp, url: &str) -> Reply {
    let res = fetch(app, url).await;
    assert_eq!(res.status, StatusCode::OK, "{url}: {}", res.body);
    assert_eq!(
        res.header("cache-control"),
        Some("public, no-cache"),
        "{url}"
    );
    res
}

async fn dimensions(app: &TestApp, url: &str) -> (u32, u32) {
    let res = derivative(app, url, "image/jpeg").await;
    decode(&res.bytes).dimensions()
}

/// Where the derivatives of an asset are kept, to look at from outside the app.
enum Storage<'s> {
    Local,
    S3(&'s S3Server),
}

impl Storage<'_> {
    async fn derivatives(&self, app: &TestApp, asset_id: &str) -> usize {
        match self {
            Storage::Local => {
                let dir = app.data_dir().join("media/derivatives").join(asset_id);
                std::fs::read_dir(dir).map_or(0, |entries| entries.count())
            }
            Storage::S3(s3) => bucket_keys(s3)
                .await
                .iter()
                .filter(|k| k.starts_with(&format!("derivatives/{asset_id}/")))
                .count(),
        }
    }
}

/// Every parameter's effect, the cache, the refusals and the clean-up, on one storage.
async fn transforms_on(app: &TestApp, storage: Storage<'_>) {
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let photo = uploaded(app, &ada, "stripes.jpg", &striped_jpeg()).await;
    let id = photo["id"].as_str().unwrap().to_string();
    let url = photo["url"].as_str().unwrap().to_string();
    let at = |query: &str| format!("{url}?{query}");

    // The first request renders, the second reads what the first stored.
    let first = derivative(app, &at("w=100"), "image/jpeg").await;
    assert_eq!(first.header("x-cache"), Some("MISS"));
    assert_eq!(decode(&first.bytes).dimensions(), (100, 50));
    assert!(!contains(&first.bytes, b"Exif\0\0"));
    assert_eq!(storage.derivatives(app, &id).await, 1);
    let second = derivative(app, &at("w=100"), "image/jpeg").await;
    assert_eq!(second.header("x-cache"), Some("HIT"), "no second transform");
    assert_eq!(second.bytes, first.bytes);
    assert_eq!(second.header("etag"), first.header("etag"));
    let etag = first.header("etag").unwrap();
    assert_ne!(etag, format!("\"{}\"", photo["sha256"].as_str().unwrap()));
    let not_modified = app
        .get(&at("w=100"))
        .header("if-none-match", etag)
        .send()
        .await;
    assert_eq!(not_modified.status, StatusCode::NOT_MODIFIED);
    // The same pixels asked another way share the derivative: dpr 2 of w=50 is w=100.
    let same = derivative(app, &at("dpr=2&w=50"), "image/jpeg").await;
    assert_eq!(same.header("x-cache"), Some("HIT"));

    // Sizes and fits.
    assert_eq!(dimensions(app, &at("h=50")).await, (100, 50));
    assert_eq!(
        dimensions(app, &at("w=100&h=100")).await,
        (100, 50),
        "clip fits inside"
    );
    assert_eq!(
        dimensions(app, &at("w=800")).await,
        (800, 400),
        "clip may upscale"
    );
    assert_eq!(
        dimensions(app, &at("w=800&fit=max")).await,
        (400, 200),
        "max never does"
    );
    assert_eq!(
        decode(&crop_reply(app, &at("w=100&h=100&fit=crop")).await.bytes).dimensions(),
        (100, 100)
    );
    assert_eq!(dimensions(app, &at("w=60&dpr=1.5")).await, (90, 45));
    // rect cuts first: the red stripe's neighbourhood only.
    let cut = decode(
        &derivative(app, &at("rect=10,0,60,200"), "image/jpeg")
            .await
            .bytes,
    );
    assert_eq!(cut.dimensions(), (60, 200));
    assert!(near(&cut, 30, 100, RED) && near(&cut, 2, 100, GREY));

    // Crops centre on the focal point: the middle by default, the asset's hotspot, fp-x/fp-y.
    let crop = "w=100&h=200&fit=crop";
    let centred_reply = crop_reply(app, &at(crop)).await;
    let centred = decode(&centred_reply.bytes);
    assert!(near(&centred, 50, 100, GREY));
    let res = app
        .req(Method::PATCH, &format!("{ASSETS}/{id}"))
        .cookie(&ada)
        .json(json!({"hotspot": {"x": 0.9, "y": 0.5}}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["hotspot"], json!({"x": 0.9, "y": 0.5}));
    // The same URL, other pixels: caches revalidate, and the old tag no longer matches.
    let moved = app
        .get(&at(crop))
        .header("if-none-match", centred_reply.header("etag").unwrap())
        .send()
        .await;
    assert_eq!(moved.status, StatusCode::OK);
    assert_ne!(moved.header("etag"), centred_reply.header("etag"));
    let on_hotspot = decode(&crop_reply(app, &at(crop)).await.bytes);
    assert!(
        near(&on_hotspot, 60, 100, GREEN),
        "the window around x=360 shows the green stripe at 340 to 380"
    );
    let on_request = decode(
        &derivative(app, &at(&format!("{crop}&fp-x=0.1")), "image/jpeg")
            .await
            .bytes,
    );
    assert!(
        near(&on_request, 40, 100, RED),
        "fp-x wins over the hotspot"
    );

    // Formats: named, from Accept, kept.
    let png_out = derivative(app, &at("w=50&fm=png"), "image/png").await;
    assert_eq!(
        image::guess_format(&png_out.bytes).unwrap(),
        ImageFormat::Png
    );
    assert_eq!(decode(&png_out.bytes).dimensions(), (50, 25));
    let webp = derivative(app, &at("w=50&fm=webp"), "image/webp").await;
    assert_eq!(image::guess_format(&webp.bytes).unwrap(), ImageFormat::WebP);
    assert_eq!(decode(&webp.bytes).dimensions(), (50, 25));
    let avif = derivative(app, &at("w=50&fm=avif"), "image/avif").await;
    assert_eq!(&avif.bytes[4..12], b"ftypavif");
    let auto = app
        .get(&at("w=50&auto=format"))
        .header("accept", "image/webp,image/*;q=0.8")
        .send()
        .await;
    assert_eq!(auto.header("content-type"), Some("image/webp"));
    assert_eq!(auto.header("vary"), Some("Accept"));
    let plain = app
        .get(&at("w=50&auto=format"))
        .header("accept", "image/png")
        .send()
        .await;
    assert_eq!(plain.header("content-type"), Some("image/jpeg"));
    // Quality changes the bytes, not the size.
    let low = derivative(app, &at("w=200&q=5"), "image/jpeg").await;
    let high = derivative(app, &at("w=200&q=95"), "image/jpeg").await;
    assert!(low.bytes.len() < high.bytes.len());
    assert_eq!(decode(&low.bytes).dimensions(), (200, 100));

    // Every bad parameter is a 400 that says which.
    for bad in [
        "w=0",
        "w=4097",
        "w=abc",
        "w=-1",
        "h=0",
        "h=1.5",
        "fit=fill",
        "rect=1,2,3",
        "rect=0,0,0,5",
        "rect=a,0,1,1",
        "fm=gif",
        "fm=",
        "q=0",
        "q=101",
        "dpr=4",
        "dpr=0.5",
        "dpr=x",
        "auto=compress",
        "fp-x=2",
        "fp-y=-0.1",
        "size=10",
        "w=10&w=20",
    ] {
        let res = fetch(app, &at(bad)).await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    fetch(app, &at("rect=1000,1000,10,10"))
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let text = uploaded(app, &ada, "notes.txt", b"plain words\n").await;
    let message = fetch(app, &format!("{}?w=10", text["url"].as_str().unwrap()))
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert!(message.contains("text/plain"), "{message}");

    // A picture of 3.6 billion pixels (a few bytes of header) is refused before any decode.
    let bomb = uploaded(app, &ada, "bomb.png", &png(60_000, 60_000, 64)).await;
    let message = fetch(app, &format!("{}?w=10", bomb["url"].as_str().unwrap()))
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert!(message.contains("megapixels"), "{message}");

    // EXIF orientation is applied; EXIF and GPS are not passed on.
    let original = sideways_jpeg_with_gps();
    assert!(contains(&original, b"Exif\0\0") && contains(&original, &[0x88, 0x25]));
    let sideways = uploaded(app, &ada, "sideways.jpg", &original).await;
    assert_eq!(
        (sideways["width"].clone(), sideways["height"].clone()),
        (json!(20), json!(40)),
        "the size as shown, not as stored"
    );
    let upright = derivative(
        app,
        &format!("{}?w=20", sideways["url"].as_str().unwrap()),
        "image/jpeg",
    )
    .await;
    let upright_image = decode(&upright.bytes);
    assert_eq!(
        upright_image.dimensions(),
        (20, 40),
        "turned a quarter clockwise"
    );
    assert!(near(&upright_image, 15, 4, RED) && near(&upright_image, 4, 4, GREY));
    assert!(!contains(&upright.bytes, b"Exif\0\0"));
    assert!(!contains(&upright.bytes, &[0x88, 0x25]));

    // Derivatives go with their asset.
    let kept = storage.derivatives(app, &id).await;
    assert!(kept >= 10, "{kept} derivatives");
    let res = app
        .req(Method::DELETE, &format!("{ASSETS}/{id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(storage.derivatives(app, &id).await, 0);
    assert_eq!(fetch(app, &at("w=100")).await.status, StatusCode::NOT_FOUND);
}

async fn transforms_on_local_storage(url: String) {
    let app = TestApp::start(&url).await;
    transforms_on(&app, Storage::Local).await;
    app.stop().await;
}

async fn transforms_on_s3_storage(url: String) {
    let s3 = S3Server::start().await;
    let app = TestApp::with(s3_config(&url, &s3, 20 * 1024 * 1024), None).await;
    transforms_on(&app, Storage::S3(&s3)).await;
    app.stop().await;
}

/// `lqip`, `dominantColor` and `hasAlpha` at upload, in REST and GraphQL; PATCH refuses a bad
/// hotspot.
async fn images_carry_their_details(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let photo = uploaded(&app, &ada, "stripes.jpg", &striped_jpeg()).await;
    let lqip = photo["lqip"].as_str().expect("a placeholder");
    let webp = lqip
        .strip_prefix("data:image/webp;base64,")
        .expect("a WebP data URI");
    use base64::Engine as _;
    let placeholder = decode(
        &base64::engine::general_purpose::STANDARD
            .decode(webp)
            .unwrap(),
    );
    assert!(placeholder.width() <= 20 && placeholder.height() <= 20);
    let colour = photo["dominantColor"].as_str().unwrap();
    assert!(colour.len() == 7 && colour.starts_with('#'), "{colour}");
    assert_eq!(photo["hasAlpha"], false);
    assert_eq!(photo["hotspot"], Value::Null);
    let clear = uploaded(&app, &ada, "clear.png", &half_transparent_png()).await;
    assert_eq!(clear["hasAlpha"], true);
    assert_eq!(clear["dominantColor"], "#0000ff");
    let text = uploaded(&app, &ada, "notes.txt", b"words\n").await;
    assert_eq!(text["lqip"], Value::Null);
    assert_eq!(text["hasAlpha"], Value::Null);

    let id = photo["id"].as_str().unwrap();
    for bad in [
        json!({"hotspot": {"x": 1.5, "y": 0.5}}),
        json!({"hotspot": {"x": 0.5}}),
        json!({"hotspot": {"x": "left", "y": 0.5}}),
        json!({"hotspot": {"x": 0.5, "y": 0.5, "z": 1}}),
        json!({"hotspot": [0.5, 0.5]}),
    ] {
        app.req(Method::PATCH, &format!("{ASSETS}/{id}"))
            .cookie(&ada)
            .json(bad.clone())
            .send()
            .await
            .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    let set = |hotspot: Value| {
        app.req(Method::PATCH, &format!("{ASSETS}/{id}"))
            .cookie(&ada)
            .json(json!({ "hotspot": hotspot }))
            .send()
    };
    assert_eq!(
        set(json!({"x": 0.25, "y": 0.75})).await.body["data"]["hotspot"],
        json!({"x": 0.25, "y": 0.75})
    );
    let read = app.get(&format!("{ASSETS}/{id}")).cookie(&ada).send().await;
    assert_eq!(read.body["data"]["hotspot"], json!({"x": 0.25, "y": 0.75}));
    assert_eq!(read.body["data"]["lqip"], photo["lqip"]);

    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "publish": true, "data": {"title": "Stripes",
                   "cover": {"asset": {"_ref": id}, "hotspot": {"x": 0.9, "y": 0.5},
                             "crop": {"top": 0.0, "bottom": 0.0, "left": 0.5, "right": 0.0}}}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let gql = app
        .post(
            "/api/graphql",
            json!({"query": "{ allPost { cover { plain: url cropped: url(w: 100, h: 200, fit: \"crop\") sized: url(w: 50, fm: \"webp\", q: 70) asset { hotspot lqip dominantColor hasAlpha } } } }"}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(gql.status, StatusCode::OK, "{}", gql.body);
    assert!(gql.body.get("errors").is_none(), "{}", gql.body);
    let cover = &gql.body["data"]["allPost"][0]["cover"];
    assert_eq!(cover["asset"]["hotspot"], json!({"x": 0.25, "y": 0.75}));
    assert_eq!(cover["asset"]["lqip"], photo["lqip"]);
    assert_eq!(cover["asset"]["hasAlpha"], false);
    // Without arguments: the original, cut to the field's crop.
    assert_eq!(
        cover["plain"],
        format!("{}?rect=200,0,200,200", photo["url"].as_str().unwrap())
    );
    // The field's crop (its right half) becomes `rect`, its hotspot the focal point.
    let cropped = cover["cropped"].as_str().unwrap();
    assert_eq!(
        cropped,
        format!(
            "{}?fit=crop&fp-x=0.9000&fp-y=0.5000&h=200&rect=200,0,200,200&w=100",
            photo["url"].as_str().unwrap()
        )
    );
    let image = decode(&derivative(&app, cropped, "image/jpeg").await.bytes);
    assert_eq!(image.dimensions(), (100, 200));
    assert!(
        near(&image, 60, 100, GREEN),
        "the crop of the right half, around x=360"
    );
    let sized = cover["sized"].as_str().unwrap();
    assert_eq!(
        decode(&derivative(&app, sized, "image/webp").await.bytes).dimensions(),
        (50, 50),
        "the square crop, 50 wide"
    );
    let bad = app
        .post(
            "/api/graphql",
            json!({"query": "{ allPost { cover { url(w: 0) } } }"}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        bad.body["errors"][0]["extensions"]["code"], "BAD_REQUEST",
        "{}",
        bad.body
    );
    app.stop().await;
}

/// Local storage with two faults a test can switch on: reads that fail (an upload whose bytes
/// cannot be read back gets its details later, from the backfill), and the writing of
/// derivatives held back until released (a transform in flight while its asset is deleted).
struct Interposed {
    inner: Arc<dyn cms::service::BlobStore>,
    failing_reads: AtomicBool,
    holding_derivatives: AtomicBool,
    arrived: tokio::sync::Notify,
    release: tokio::sync::Notify,
}

impl Interposed {
    fn local(root: &std::path::Path) -> Arc<Interposed> {
        Arc::new(Interposed {
            inner: Arc::new(cms::service::ObjectStorage::local(root).unwrap()),
            failing_reads: AtomicBool::new(false),
            holding_derivatives: AtomicBool::new(false),
            arrived: tokio::sync::Notify::new(),
            release: tokio::sync::Notify::new(),
        })
    }
}

#[async_trait::async_trait]
impl cms::service::BlobStore for Interposed {
    fn kind(&self) -> &'static str {
        "interposed"
    }
    async fn health(&self) -> Result<(), String> {
        self.inner.health().await
    }
    async fn writer(
        &self,
        key: &str,
    ) -> Result<Box<dyn cms::service::BlobWriter>, cms::service::StorageError> {
        if key.starts_with("derivatives/") && self.holding_derivatives.load(Ordering::SeqCst) {
            self.arrived.notify_one();
            self.release.notified().await;
        }
        self.inner.writer(key).await
    }
    async fn size(&self, key: &str) -> Result<Option<u64>, cms::service::StorageError> {
        self.inner.size(key).await
    }
    async fn read(
        &self,
        key: &str,
        range: Option<std::ops::Range<u64>>,
    ) -> Result<cms::service::ByteStream, cms::service::StorageError> {
        if self.failing_reads.load(Ordering::SeqCst) {
            return Err(cms::service::StorageError::Other(
                "reads are failing".into(),
            ));
        }
        self.inner.read(key, range).await
    }
    async fn delete(&self, key: &str) -> Result<(), cms::service::StorageError> {
        self.inner.delete(key).await
    }
    async fn delete_prefix(&self, prefix: &str) -> Result<usize, cms::service::StorageError> {
        self.inner.delete_prefix(prefix).await
    }
    async fn open(
        &self,
        key: &str,
    ) -> Result<Option<(u64, cms::service::ByteStream)>, cms::service::StorageError> {
        self.inner.open(key).await
    }
    async fn presigned_put(
        &self,
        key: &str,
        expires_in: std::time::Duration,
    ) -> Result<Option<String>, cms::service::StorageError> {
        self.inner.presigned_put(key, expires_in).await
    }
}

async fn the_backfill_summarizes_images_left_without_details(url: String) {
    let config = config_for(&url);
    let storage = Interposed::local(&config.data_dir.join("media"));
    storage.failing_reads.store(true, Ordering::SeqCst);
    let app = TestApp::with(config, Some(storage.clone())).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let photo = uploaded(&app, &ada, "stripes.jpg", &striped_jpeg()).await;
    assert_eq!(
        photo["lqip"],
        Value::Null,
        "the bytes could not be read back"
    );
    assert_eq!(
        app.app.cms.summarize_images().await.unwrap(),
        0,
        "still unreadable: left for the next run"
    );
    storage.failing_reads.store(false, Ordering::SeqCst);
    assert_eq!(app.app.cms.summarize_images().await.unwrap(), 1);
    assert_eq!(
        app.app.cms.summarize_images().await.unwrap(),
        0,
        "done once"
    );
    let id = photo["id"].as_str().unwrap();
    let read = app.get(&format!("{ASSETS}/{id}")).cookie(&ada).send().await;
    assert!(
        read.body["data"]["lqip"]
            .as_str()
            .unwrap()
            .starts_with("data:image/webp;base64,")
    );
    assert_eq!(read.body["data"]["hasAlpha"], false);
    assert_eq!(
        read.body["data"]["updatedAt"], photo["updatedAt"],
        "not an edit"
    );
    app.stop().await;
}

/// The asset is deleted (and its derivatives removed) while a transform of it renders: the
/// derivative stored after that is removed too, nothing stays behind.
async fn a_derivative_rendered_while_its_asset_is_deleted_is_not_left_behind(url: String) {
    let config = config_for(&url);
    let media = config.data_dir.join("media");
    let storage = Interposed::local(&media);
    storage.holding_derivatives.store(true, Ordering::SeqCst);
    let app = TestApp::with(config, Some(storage.clone())).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let photo = uploaded(&app, &ada, "stripes.jpg", &striped_jpeg()).await;
    let id = photo["id"].as_str().unwrap().to_string();
    let transform = format!("{}?w=100", photo["url"].as_str().unwrap());
    let (rendered, deleted) = tokio::join!(fetch(&app, &transform), async {
        storage.arrived.notified().await;
        let res = app
            .req(Method::DELETE, &format!("{ASSETS}/{id}"))
            .cookie(&ada)
            .send()
            .await;
        storage.release.notify_one();
        res
    });
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    assert_eq!(
        rendered.status,
        StatusCode::OK,
        "the request in flight is answered"
    );
    let folder = media.join("derivatives").join(&id);
    let left = std::fs::read_dir(&folder).map_or(0, |entries| entries.count());
    assert_eq!(left, 0, "nothing under {}", folder.display());
    app.stop().await;
}

/// `assets.transformSigning`: transforms need a signature over their parameters, or a
/// credential that may read the asset; originals are served as before.
async fn signed_transforms_are_enforced(url: String) {
    let mut config = config_for(&url);
    config.assets.signing_secret = Some("a signing secret of at least thirty-two chars".into());
    config.assets.transform_signing = true;
    let app = TestApp::with(config, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let photo = uploaded(&app, &ada, "stripes.jpg", &striped_jpeg()).await;
    let url = photo["url"].as_str().unwrap().to_string();
    assert_eq!(
        fetch(&app, &url).await.status,
        StatusCode::OK,
        "originals stay public"
    );
    fetch(&app, &format!("{url}?w=100"))
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // The back office's own thumbnails: a session that may read the asset.
    let own = app.get(&format!("{url}?w=100")).cookie(&ada).send().await;
    assert_eq!(own.status, StatusCode::OK);
    assert_eq!(
        own.header("cache-control"),
        Some("private, max-age=31536000, immutable")
    );
    // The link GraphQL builds is signed over its parameters.
    let id = photo["id"].as_str().unwrap();
    app.post(
        "/api/documents",
        json!({"type": "post", "publish": true,
               "data": {"title": "Stripes", "cover": {"asset": {"_ref": id}}}}),
    )
    .cookie(&ada)
    .send()
    .await;
    let gql = app
        .post(
            "/api/graphql",
            json!({"query": "{ allPost { cover { url(w: 100, fm: \"png\") } } }"}),
        )
        .cookie(&ada)
        .send()
        .await;
    let signed = gql.body["data"]["allPost"][0]["cover"]["url"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", gql.body))
        .to_string();
    assert!(
        signed.contains("&sig=") && signed.contains("&exp="),
        "{signed}"
    );
    let res = derivative(&app, &signed, "image/png").await;
    assert_eq!(decode(&res.bytes).dimensions(), (100, 50));
    // The signature covers the parameters: another size under it is refused.
    let forged = signed.replace("w=100", "w=400");
    fetch(&app, &forged)
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let unsigned_params = signed.replace("fm=png&", "");
    fetch(&app, &unsigned_params)
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");

    // A session active in another organization may not read the asset: no unsigned transform.
    let res = app
        .post(
            "/api/organizations",
            json!({"name": "Other", "slug": "other"}),
        )
        .cookie(&ada)
        .send()
        .await;
    let other = res.body["data"]["id"].as_str().unwrap().to_string();
    app.post(
        "/api/organizations/switch",
        json!({"organizationId": other}),
    )
    .cookie(&ada)
    .send()
    .await;
    app.get(&format!("{url}?w=100"))
        .cookie(&ada)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

cms_store::both_engines!(
    transforms_on_local_storage,
    transforms_on_s3_storage,
    images_carry_their_details,
    the_backfill_summarizes_images_left_without_details,
    a_derivative_rendered_while_its_asset_is_deleted_is_not_left_behind,
    signed_transforms_are_enforced,
);
