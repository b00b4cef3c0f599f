//! Fixtures are generated in code: pictures drawn with `image`, EXIF spliced into JPEGs by hand,
//! a PNG bomb's header crafted byte by byte.

use std::time::{Duration, Instant};

use image::{Rgb, RgbImage, Rgba, RgbaImage};

use super::*;

const RED: [u8; 4] = [255, 0, 0, 255];
const WHITE: [u8; 4] = [255, 255, 255, 255];
const BLUE: [u8; 4] = [0, 0, 255, 255];

fn spec(width: Option<u32>, height: Option<u32>, fit: Fit, format: Format) -> Spec {
    Spec {
        width,
        height,
        fit,
        rect: None,
        focal: None,
        format,
        quality: 80,
    }
}

fn solid(width: u32, height: u32, color: [u8; 4]) -> RgbaImage {
    RgbaImage::from_pixel(width, height, Rgba(color))
}

fn fill(image: &mut RgbaImage, x: u32, y: u32, w: u32, h: u32, color: [u8; 4]) {
    for yy in y..y + h {
        for xx in x..x + w {
            image.put_pixel(xx, yy, Rgba(color));
        }
    }
}

fn png(image: &RgbaImage) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Png).unwrap();
    out.into_inner()
}

fn jpeg(image: &RgbImage, quality: u8) -> Vec<u8> {
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(image)
        .unwrap();
    out
}

/// A photo-like picture: gradients plus deterministic noise (an LCG, no rand dependency).
fn noisy(width: u32, height: u32, seed: u32) -> RgbImage {
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    RgbImage::from_fn(width, height, |x, y| {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let n = (state >> 24) as i32 % 48 - 24;
        let r = (x * 255 / width.max(1)) as i32 + n;
        let g = (y * 255 / height.max(1)) as i32 - n;
        let b = (((x + y) * 128) / (width + height).max(1)) as i32 + n / 2;
        Rgb([r, g, b].map(|c| c.clamp(0, 255) as u8))
    })
}

fn decode_back(bytes: &[u8]) -> DynamicImage {
    image::load_from_memory(bytes).unwrap()
}

fn px(image: &DynamicImage, x: u32, y: u32) -> [u8; 4] {
    image.to_rgba8().get_pixel(x, y).0
}

fn near(actual: [u8; 4], expected: [u8; 4], tolerance: u8) -> bool {
    actual
        .iter()
        .zip(expected)
        .all(|(&a, e)| a.abs_diff(e) <= tolerance)
}

fn run(input: &[u8], spec: &Spec) -> Output {
    transform(input, spec, &Limits::default()).unwrap()
}

fn dims(output: &Output) -> (u32, u32) {
    let decoded = decode_back(&output.bytes);
    assert_eq!(
        (decoded.width(), decoded.height()),
        (output.width, output.height),
        "reported and encoded sizes agree"
    );
    (output.width, output.height)
}

#[test]
fn formats_name_themselves() {
    for format in [
        Format::Jpeg,
        Format::Png,
        Format::Webp,
        Format::Avif,
        Format::Gif,
    ] {
        assert_eq!(Format::from_mime(format.mime()), Some(format));
    }
    assert_eq!(
        Format::from_mime("Image/JPEG; charset=binary"),
        Some(Format::Jpeg)
    );
    assert_eq!(Format::from_mime("image/jpg"), Some(Format::Jpeg));
    assert_eq!(Format::from_mime("image/tiff"), None);
    assert_eq!(Format::Jpeg.extension(), "jpg");
    assert_eq!(Format::Webp.extension(), "webp");
    assert!(Format::Avif.can_encode() && !Format::Avif.can_decode());
    assert!(!Format::Gif.can_encode() && Format::Gif.can_decode());
    assert!(Format::Jpeg.can_encode() && Format::Jpeg.can_decode());
}

#[test]
fn probe_reads_the_header() {
    let info = probe(&png(&solid(40, 20, RED))).unwrap();
    assert_eq!(
        info,
        Info {
            format: Format::Png,
            width: 40,
            height: 20
        }
    );
    let info = probe(&jpeg(&noisy(33, 17, 1), 80)).unwrap();
    assert_eq!(
        (info.format, info.width, info.height),
        (Format::Jpeg, 33, 17)
    );
}

#[test]
fn no_size_keeps_the_size_and_changes_the_format() {
    let input = png(&solid(40, 20, RED));
    let out = run(&input, &spec(None, None, Fit::Clip, Format::Jpeg));
    assert_eq!(out.format, Format::Jpeg);
    assert_eq!(image::guess_format(&out.bytes).unwrap(), ImageFormat::Jpeg);
    assert_eq!(dims(&out), (40, 20));
    // Zero counts as absent.
    let out = run(&input, &spec(Some(0), Some(0), Fit::Crop, Format::Png));
    assert_eq!(dims(&out), (40, 20));
}

#[test]
fn one_side_keeps_the_aspect() {
    let input = png(&solid(400, 200, RED));
    for fit in [Fit::Clip, Fit::Crop, Fit::Max] {
        let out = run(&input, &spec(Some(100), None, fit, Format::Png));
        assert_eq!(dims(&out), (100, 50), "{fit:?} width");
        let out = run(&input, &spec(None, Some(50), fit, Format::Png));
        assert_eq!(dims(&out), (100, 50), "{fit:?} height");
    }
    // Clip and Crop upscale with one side; Max does not.
    let out = run(&input, &spec(Some(800), None, Fit::Clip, Format::Png));
    assert_eq!(dims(&out), (800, 400));
    let out = run(&input, &spec(None, Some(400), Fit::Crop, Format::Png));
    assert_eq!(dims(&out), (800, 400));
    let out = run(&input, &spec(Some(800), None, Fit::Max, Format::Png));
    assert_eq!(dims(&out), (400, 200));
    let out = run(&input, &spec(None, Some(400), Fit::Max, Format::Png));
    assert_eq!(dims(&out), (400, 200));
}

#[test]
fn both_sides_clip_max_crop() {
    let input = png(&solid(400, 200, RED));
    let both = |w, h, fit| run(&input, &spec(Some(w), Some(h), fit, Format::Png));
    assert_eq!(dims(&both(100, 100, Fit::Clip)), (100, 50));
    assert_eq!(dims(&both(100, 20, Fit::Clip)), (40, 20));
    assert_eq!(dims(&both(100, 100, Fit::Max)), (100, 50));
    assert_eq!(dims(&both(100, 100, Fit::Crop)), (100, 100));
    assert_eq!(dims(&both(30, 70, Fit::Crop)), (30, 70));
    // Clip upscales to touch the box; Max never grows past the source.
    assert_eq!(dims(&both(1000, 1000, Fit::Clip)), (1000, 500));
    assert_eq!(dims(&both(1000, 1000, Fit::Max)), (400, 200));
    assert_eq!(dims(&both(1000, 150, Fit::Max)), (300, 150));
    // Crop upscales to cover the box.
    assert_eq!(dims(&both(1000, 1000, Fit::Crop)), (1000, 1000));
    // Extreme aspect: never a zero side.
    let thin = png(&solid(1000, 1, RED));
    let out = run(&thin, &spec(Some(10), Some(10), Fit::Clip, Format::Png));
    assert_eq!(dims(&out), (10, 1));
}

#[test]
fn clip_keeps_exact_colours_when_downscaling() {
    let out = run(
        &png(&solid(400, 200, RED)),
        &spec(Some(57), None, Fit::Clip, Format::Png),
    );
    let decoded = decode_back(&out.bytes);
    assert_eq!((decoded.width(), decoded.height()), (57, 29));
    assert!(decoded.to_rgba8().pixels().all(|p| p.0 == RED));
}

/// Four quadrants of distinct colours.
fn quadrants(width: u32, height: u32) -> RgbaImage {
    let mut image = solid(width, height, WHITE);
    fill(&mut image, width / 2, 0, width / 2, height / 2, RED);
    fill(&mut image, 0, height / 2, width / 2, height / 2, BLUE);
    fill(
        &mut image,
        width / 2,
        height / 2,
        width / 2,
        height / 2,
        [0, 255, 0, 255],
    );
    image
}

#[test]
fn rect_crops_the_source_first() {
    let input = png(&quadrants(400, 200));
    let mut s = spec(None, None, Fit::Clip, Format::Png);
    s.rect = Some(Rect {
        x: 200,
        y: 0,
        width: 200,
        height: 100,
    });
    let out = run(&input, &s);
    assert_eq!(dims(&out), (200, 100));
    let decoded = decode_back(&out.bytes).to_rgba8();
    assert!(
        decoded.pixels().all(|p| p.0 == RED),
        "only the red quadrant"
    );

    // Then resized: the rect is the source of the fit.
    s.width = Some(50);
    let out = run(&input, &s);
    assert_eq!(dims(&out), (50, 25));

    // Clamped to the image.
    s.width = None;
    s.rect = Some(Rect {
        x: 300,
        y: 150,
        width: 500,
        height: 500,
    });
    let out = run(&input, &s);
    assert_eq!(dims(&out), (100, 50));
    let decoded = decode_back(&out.bytes).to_rgba8();
    assert!(decoded.pixels().all(|p| p.0 == [0, 255, 0, 255]));

    // Entirely outside.
    for rect in [
        Rect {
            x: 400,
            y: 0,
            width: 10,
            height: 10,
        },
        Rect {
            x: 0,
            y: 250,
            width: 10,
            height: 10,
        },
        Rect {
            x: 0,
            y: 0,
            width: 0,
            height: 10,
        },
    ] {
        s.rect = Some(rect);
        assert_eq!(
            transform(&input, &s, &Limits::default()),
            Err(Error::RectOutside)
        );
    }
}

#[test]
fn crop_centres_on_the_focal_point() {
    // 400x400 white with a red block centred on (200, 260). Cropping to 200x50 scales by 0.5
    // (to 200x200) and leaves the window free to move vertically.
    let mut source = solid(400, 400, WHITE);
    fill(&mut source, 180, 240, 40, 40, RED);
    let input = png(&source);
    let mut s = spec(Some(200), Some(50), Fit::Crop, Format::Png);
    s.focal = Some((0.5, 0.65));
    let out = run(&input, &s);
    assert_eq!(dims(&out), (200, 50));
    let centre = px(&decode_back(&out.bytes), 100, 25);
    assert!(
        near(centre, RED, 2),
        "focal block in the centre: {centre:?}"
    );
    // Without a focal point: the centre of the source, white.
    s.focal = None;
    let centre = px(&decode_back(&run(&input, &s).bytes), 100, 25);
    assert!(near(centre, WHITE, 2), "{centre:?}");

    // Horizontally: block centred on (260, 200), a 50x200 window.
    let mut source = solid(400, 400, WHITE);
    fill(&mut source, 240, 180, 40, 40, BLUE);
    let mut s = spec(Some(50), Some(200), Fit::Crop, Format::Png);
    s.focal = Some((0.65, 0.5));
    let out = run(&png(&source), &s);
    let centre = px(&decode_back(&out.bytes), 25, 100);
    assert!(near(centre, BLUE, 2), "{centre:?}");

    // Near an edge the window is clamped inside the image, not centred past it.
    s.focal = Some((1.0, 0.5));
    let out = run(&png(&source), &s);
    assert_eq!(dims(&out), (50, 200));
}

#[test]
fn crop_focal_is_relative_to_the_whole_source_with_a_rect() {
    // The rect (100,100)-(300,300); the focal point (0.5, 0.6) of the whole source is (200, 240).
    // Cropping 100x50 out of the rect scaled by 0.5 puts that point at the output's centre.
    let mut source = solid(400, 400, WHITE);
    fill(&mut source, 180, 220, 40, 40, RED);
    let mut s = spec(Some(100), Some(50), Fit::Crop, Format::Png);
    s.rect = Some(Rect {
        x: 100,
        y: 100,
        width: 200,
        height: 200,
    });
    s.focal = Some((0.5, 0.6));
    let out = run(&png(&source), &s);
    assert_eq!(dims(&out), (100, 50));
    let centre = px(&decode_back(&out.bytes), 50, 25);
    assert!(near(centre, RED, 2), "{centre:?}");
}

#[test]
fn converts_to_every_encodable_format() {
    let input = jpeg(&noisy(120, 80, 7), 90);
    for format in [Format::Jpeg, Format::Png, Format::Webp] {
        let out = run(&input, &spec(Some(60), None, Fit::Clip, format));
        assert_eq!(out.format, format);
        let sniffed = image::guess_format(&out.bytes).unwrap();
        let expected = match format {
            Format::Jpeg => ImageFormat::Jpeg,
            Format::Png => ImageFormat::Png,
            _ => ImageFormat::WebP,
        };
        assert_eq!(sniffed, expected);
        assert_eq!(dims(&out), (60, 40));
    }
    let out = run(&input, &spec(Some(60), None, Fit::Clip, Format::Avif));
    assert_eq!((out.format, out.width, out.height), (Format::Avif, 60, 40));
    assert!(out.bytes.len() > 32);
    assert_eq!(&out.bytes[4..12], b"ftypavif");

    // GIF cannot be produced.
    assert_eq!(
        transform(
            &input,
            &spec(None, None, Fit::Clip, Format::Gif),
            &Limits::default()
        ),
        Err(Error::Unsupported)
    );
}

#[test]
fn quality_changes_the_size() {
    let input = png(&DynamicImage::ImageRgb8(noisy(160, 120, 3)).to_rgba8());
    for format in [Format::Jpeg, Format::Webp, Format::Avif] {
        let mut s = spec(None, None, Fit::Clip, format);
        s.quality = 15;
        let low = run(&input, &s).bytes.len();
        s.quality = 95;
        let high = run(&input, &s).bytes.len();
        assert!(low < high, "{format:?}: q15 {low} bytes, q95 {high} bytes");
    }
    // Out-of-range qualities are clamped, not a panic.
    let mut s = spec(None, None, Fit::Clip, Format::Avif);
    s.quality = 0;
    run(&input, &s);
    s.quality = 255;
    run(&input, &s);
}

fn half_transparent() -> RgbaImage {
    let mut image = solid(40, 20, [0, 0, 255, 255]);
    fill(&mut image, 0, 0, 20, 20, [0, 0, 0, 0]);
    image
}

#[test]
fn alpha_is_kept_except_in_jpeg() {
    let input = png(&half_transparent());
    for format in [Format::Png, Format::Webp] {
        let out = run(&input, &spec(None, None, Fit::Clip, format));
        let decoded = decode_back(&out.bytes);
        assert!(decoded.color().has_alpha(), "{format:?}");
        assert!(px(&decoded, 5, 10)[3] < 10, "{format:?} transparent side");
        assert!(
            near(px(&decoded, 35, 10), BLUE, 8),
            "{format:?} opaque side"
        );
    }
    let out = run(&input, &spec(None, None, Fit::Clip, Format::Jpeg));
    let decoded = decode_back(&out.bytes);
    assert!(!decoded.color().has_alpha());
    assert!(near(px(&decoded, 5, 10), WHITE, 8), "flattened onto white");
    assert!(near(px(&decoded, 35, 10), BLUE, 12));
    let out = run(&input, &spec(None, None, Fit::Clip, Format::Avif));
    assert_eq!(&out.bytes[4..12], b"ftypavif");
    // An alpha plane adds an auxiliary image: "auxC"/"auxl" boxes name it.
    assert!(out.bytes.windows(4).any(|w| w == b"auxC"));
}

/// An EXIF APP1 payload (big-endian TIFF): IFD0 with an orientation and a GPS IFD pointer
/// (tag 0x8825), the GPS IFD with a latitude reference, then some "GPS" bytes.
fn exif_app1(orientation: u16) -> Vec<u8> {
    let mut tiff = b"MM\x00\x2a\x00\x00\x00\x08".to_vec();
    // IFD0 at 8: two entries (2 + 24 + 4 = 30 bytes), so the GPS IFD starts at 38.
    tiff.extend_from_slice(&2u16.to_be_bytes());
    tiff.extend_from_slice(&[0x01, 0x12, 0x00, 0x03, 0, 0, 0, 1]);
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0]);
    tiff.extend_from_slice(&[0x88, 0x25, 0x00, 0x04, 0, 0, 0, 1, 0, 0, 0, 38]);
    tiff.extend_from_slice(&0u32.to_be_bytes());
    // GPS IFD: GPSLatitudeRef "N".
    tiff.extend_from_slice(&1u16.to_be_bytes());
    tiff.extend_from_slice(&[0x00, 0x01, 0x00, 0x02, 0, 0, 0, 2, b'N', 0, 0, 0]);
    tiff.extend_from_slice(&0u32.to_be_bytes());
    tiff.extend_from_slice(b"GPS secret place 51.5N 0.1W");
    let mut payload = b"Exif\x00\x00".to_vec();
    payload.extend_from_slice(&tiff);
    let mut segment = vec![0xFF, 0xE1];
    segment.extend_from_slice(&u16::try_from(payload.len() + 2).unwrap().to_be_bytes());
    segment.extend_from_slice(&payload);
    segment
}

/// A JPEG `image` encoded, with the APP1 segment spliced in right after SOI.
fn jpeg_with_exif(image: &RgbImage, orientation: u16) -> Vec<u8> {
    let plain = jpeg(image, 95);
    assert_eq!(&plain[..2], &[0xFF, 0xD8]);
    let mut out = plain[..2].to_vec();
    out.extend_from_slice(&exif_app1(orientation));
    out.extend_from_slice(&plain[2..]);
    out
}

/// 40x20 grey, a red 8x8 marker in the stored top-left corner.
fn marked() -> RgbImage {
    let mut image = RgbImage::from_pixel(40, 20, Rgb([128, 128, 128]));
    for y in 0..8 {
        for x in 0..8 {
            image.put_pixel(x, y, Rgb([255, 0, 0]));
        }
    }
    image
}

fn is_red(p: [u8; 4]) -> bool {
    p[0] > 200 && p[1] < 70 && p[2] < 70
}

#[test]
fn exif_orientation_6_rotates_clockwise() {
    let input = jpeg_with_exif(&marked(), 6);
    let info = probe(&input).unwrap();
    assert_eq!(
        (info.format, info.width, info.height),
        (Format::Jpeg, 20, 40)
    );
    let out = run(&input, &spec(None, None, Fit::Clip, Format::Png));
    assert_eq!(dims(&out), (20, 40));
    let decoded = decode_back(&out.bytes);
    // Rotated 90° clockwise, the stored top-left corner is now the top-right one.
    assert!(is_red(px(&decoded, 16, 4)), "{:?}", px(&decoded, 16, 4));
    assert!(!is_red(px(&decoded, 4, 4)));
    assert!(!is_red(px(&decoded, 16, 36)));
    // Geometry is on the oriented image: a rect over the top-right corner finds the marker.
    let mut s = spec(None, None, Fit::Clip, Format::Png);
    s.rect = Some(Rect {
        x: 13,
        y: 1,
        width: 6,
        height: 6,
    });
    let out = run(&input, &s);
    assert_eq!(dims(&out), (6, 6));
    assert!(is_red(px(&decode_back(&out.bytes), 3, 3)));
}

#[test]
fn exif_orientation_3_rotates_half_a_turn() {
    let input = jpeg_with_exif(&marked(), 3);
    let info = probe(&input).unwrap();
    assert_eq!((info.width, info.height), (40, 20));
    let out = run(&input, &spec(None, None, Fit::Clip, Format::Png));
    assert_eq!(dims(&out), (40, 20));
    let decoded = decode_back(&out.bytes);
    assert!(is_red(px(&decoded, 36, 16)), "{:?}", px(&decoded, 36, 16));
    assert!(!is_red(px(&decoded, 4, 4)));
}

/// The JPEG's segments before the entropy-coded data (SOI up to and including SOS's header).
fn jpeg_headers(bytes: &[u8]) -> Vec<(u8, &[u8])> {
    let mut segments = Vec::new();
    let mut at = 2;
    while at + 4 <= bytes.len() && bytes[at] == 0xFF {
        let marker = bytes[at + 1];
        let len = usize::from(u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]));
        segments.push((marker, &bytes[at + 4..at + 2 + len]));
        if marker == 0xDA {
            break;
        }
        at += 2 + len;
    }
    segments
}

#[test]
fn metadata_and_gps_are_stripped() {
    let input = jpeg_with_exif(&noisy(64, 48, 5), 1);
    // The fixture does carry the GPS block, and `image` sees it.
    assert!(input.windows(2).any(|w| w == [0x88, 0x25]));
    assert!(input.windows(3).any(|w| w == b"GPS"));
    let headers = jpeg_headers(&input);
    assert!(
        headers
            .iter()
            .any(|(m, data)| *m == 0xE1 && data.starts_with(b"Exif"))
    );

    let out = run(&input, &spec(None, None, Fit::Clip, Format::Jpeg));
    let headers = jpeg_headers(&out.bytes);
    assert!(headers.iter().any(|(m, _)| *m == 0xDA), "parsed up to SOS");
    for (marker, data) in &headers {
        assert_ne!(*marker, 0xE1, "no APP1 (EXIF/XMP) segment");
        assert_ne!(*marker, 0xE2, "no APP2 (ICC) segment");
        assert!(!data.windows(2).any(|w| w == [0x88, 0x25]));
        assert!(!data.windows(3).any(|w| w == b"GPS"));
    }
    assert!(!out.bytes.windows(4).any(|w| w == b"Exif"));
    assert!(!out.bytes.windows(16).any(|w| w == b"GPS secret place"));

    for format in [Format::Png, Format::Webp, Format::Avif] {
        let out = run(&input, &spec(None, None, Fit::Clip, format));
        for needle in [&b"Exif"[..], b"eXIf", b"EXIF", b"GPS secret place", b"iCCP"] {
            assert!(
                !out.bytes.windows(needle.len()).any(|w| w == needle),
                "{format:?} carries {needle:?}"
            );
        }
    }
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = u32::try_from(data.len()).unwrap().to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc_input = kind.to_vec();
    crc_input.extend_from_slice(data);
    out.extend_from_slice(&crc32(&crc_input).to_be_bytes());
    out
}

/// A PNG whose header claims `width`×`height` RGBA pixels (14.4 GB for 60000²), followed by a
/// zlib stream of the first zero rows only: a few kilobytes on disk.
fn png_bomb(width: u32, height: u32) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    out.extend_from_slice(&chunk(b"IHDR", &ihdr));
    // A stored (uncompressed) deflate block of 4 KB of zeros: filter byte 0 then black pixels.
    let zeros = vec![0u8; 4096];
    let mut zlib = vec![0x78, 0x01, 0x00];
    zlib.extend_from_slice(&4096u16.to_le_bytes());
    zlib.extend_from_slice(&(!4096u16).to_le_bytes());
    zlib.extend_from_slice(&zeros);
    out.extend_from_slice(&chunk(b"IDAT", &zlib));
    out.extend_from_slice(&chunk(b"IEND", &[]));
    out
}

#[test]
fn a_pixel_bomb_is_refused_before_decoding() {
    let bomb = png_bomb(60_000, 60_000);
    assert!(bomb.len() < 8 * 1024);
    // The header alone is readable.
    let info = probe(&bomb).unwrap();
    assert_eq!((info.width, info.height), (60_000, 60_000));

    let started = Instant::now();
    let refused = Error::TooManyPixels {
        width: 60_000,
        height: 60_000,
        max_pixels: 64_000_000,
    };
    let s = spec(Some(100), None, Fit::Clip, Format::Webp);
    assert_eq!(
        transform(&bomb, &s, &Limits::default()),
        Err(refused.clone())
    );
    assert_eq!(summarize(&bomb, &Limits::default()), Err(refused));
    assert!(started.elapsed() < Duration::from_millis(500));

    // Within max_pixels but over max_alloc: refused too.
    let small = png(&solid(100, 100, RED));
    let tight = Limits {
        max_pixels: 64_000_000,
        max_alloc: 10_000,
    };
    assert!(matches!(
        transform(&small, &s, &tight),
        Err(Error::TooManyPixels {
            width: 100,
            height: 100,
            ..
        })
    ));
    // A custom pixel budget.
    let budget = Limits {
        max_pixels: 9_999,
        ..Limits::default()
    };
    assert!(matches!(
        summarize(&small, &budget),
        Err(Error::TooManyPixels { .. })
    ));
}

#[test]
fn an_output_over_the_budget_is_refused() {
    let input = png(&solid(100, 100, RED));
    let limits = Limits {
        max_pixels: 1_000_000,
        ..Limits::default()
    };
    let s = spec(Some(2000), None, Fit::Clip, Format::Png);
    assert_eq!(
        transform(&input, &s, &limits),
        Err(Error::TooManyPixels {
            width: 2000,
            height: 2000,
            max_pixels: 1_000_000
        })
    );
}

#[test]
fn corrupt_and_unsupported_inputs() {
    let good = png(&DynamicImage::ImageRgb8(noisy(64, 64, 9)).to_rgba8());
    let truncated = &good[..good.len() / 2];
    let s = spec(Some(10), None, Fit::Clip, Format::Png);
    let limits = Limits::default();
    assert!(matches!(
        transform(truncated, &s, &limits),
        Err(Error::Corrupt(_))
    ));
    assert!(matches!(
        summarize(truncated, &limits),
        Err(Error::Corrupt(_))
    ));
    let mut garbled = good[..40].to_vec();
    garbled.extend_from_slice(&[0xAB; 200]);
    assert!(matches!(
        transform(&garbled, &s, &limits),
        Err(Error::Corrupt(_))
    ));
    let bad_jpeg = [&[0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x02][..], &[0x5A; 64]].concat();
    assert!(matches!(
        transform(&bad_jpeg, &s, &limits),
        Err(Error::Corrupt(_))
    ));

    // AVIF (our own output) is not decoded.
    let avif = run(&good, &spec(Some(16), None, Fit::Clip, Format::Avif)).bytes;
    assert_eq!(probe(&avif), Err(Error::Unsupported));
    assert_eq!(transform(&avif, &s, &limits), Err(Error::Unsupported));
    assert_eq!(summarize(&avif, &limits), Err(Error::Unsupported));
    // Unknown bytes.
    for unknown in [&b""[..], b"hello, world", b"%PDF-1.7\n", &[0u8; 64]] {
        assert_eq!(probe(unknown), Err(Error::Unsupported));
        assert_eq!(transform(unknown, &s, &limits), Err(Error::Unsupported));
    }
}

#[test]
fn gif_input_uses_the_first_frame() {
    let mut bytes = Vec::new();
    {
        let mut encoder = image::codecs::gif::GifEncoder::new(&mut bytes);
        encoder
            .encode_frames([
                image::Frame::new(solid(30, 20, RED)),
                image::Frame::new(solid(30, 20, BLUE)),
            ])
            .unwrap();
    }
    let info = probe(&bytes).unwrap();
    assert_eq!(
        (info.format, info.width, info.height),
        (Format::Gif, 30, 20)
    );
    let out = run(&bytes, &spec(None, None, Fit::Clip, Format::Png));
    assert_eq!(dims(&out), (30, 20));
    assert!(near(px(&decode_back(&out.bytes), 15, 10), RED, 2));
}

fn lqip_image(summary: &Summary) -> DynamicImage {
    let encoded = summary
        .lqip
        .strip_prefix("data:image/webp;base64,")
        .expect("a WebP data URL");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap();
    assert_eq!(image::guess_format(&bytes).unwrap(), ImageFormat::WebP);
    decode_back(&bytes)
}

#[test]
fn summarize_an_opaque_image() {
    let summary = summarize(&png(&solid(64, 32, RED)), &Limits::default()).unwrap();
    assert!(!summary.has_alpha);
    assert_eq!(summary.dominant_color, "#ff0000");
    let lqip = lqip_image(&summary);
    assert_eq!((lqip.width(), lqip.height()), (20, 10));
    assert!(summary.lqip.len() < 1000, "{}", summary.lqip.len());

    // An RGBA image whose alpha is all 255 has no transparency.
    let summary = summarize(&png(&solid(5, 30, BLUE)), &Limits::default()).unwrap();
    assert!(!summary.has_alpha);
    assert_eq!(summary.dominant_color, "#0000ff");
    let lqip = lqip_image(&summary);
    assert_eq!((lqip.width(), lqip.height()), (3, 20));

    // A photo: some mid colour, lowercase hex.
    let summary = summarize(&jpeg(&noisy(300, 200, 2), 85), &Limits::default()).unwrap();
    let hex = summary.dominant_color.strip_prefix('#').unwrap();
    assert_eq!(hex.len(), 6);
    assert!(
        hex.chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );

    // Tiny images are not upscaled.
    let summary = summarize(&png(&solid(3, 2, RED)), &Limits::default()).unwrap();
    let lqip = lqip_image(&summary);
    assert_eq!((lqip.width(), lqip.height()), (3, 2));
}

#[test]
fn summarize_a_transparent_image() {
    let summary = summarize(&png(&half_transparent()), &Limits::default()).unwrap();
    assert!(summary.has_alpha);
    // Transparent pixels do not count towards the colour.
    assert_eq!(summary.dominant_color, "#0000ff");
    let lqip = lqip_image(&summary);
    assert!(lqip.width() <= 20 && lqip.height() <= 20);
    assert_eq!((lqip.width(), lqip.height()), (20, 10));
    assert!(lqip.color().has_alpha());
}

#[test]
fn plan_geometry() {
    let s = |w, h, fit| spec(w, h, fit, Format::Png);
    let p = plan(400, 200, &s(Some(100), Some(100), Fit::Crop)).unwrap();
    assert_eq!((p.width, p.height), (100, 100));
    assert_eq!((p.x, p.y, p.w, p.h), (100.0, 0.0, 200.0, 200.0));
    let p = plan(400, 200, &s(Some(100), Some(100), Fit::Clip)).unwrap();
    assert_eq!(
        (p.x, p.y, p.w, p.h, p.width, p.height),
        (0.0, 0.0, 400.0, 200.0, 100, 50)
    );
    assert_eq!(fit_inside(3, 1000, 20, 20), (1, 20));
    assert_eq!(fit_inside(1000, 3, 20, 20), (20, 1));
    assert_eq!(fit_inside(1, 1, 20, 20), (20, 20));
}

#[test]
fn every_plan_resamples_to_the_reported_size() {
    // Awkward sizes, boxes, rects and focal points: the window always lies inside the image
    // (fast_image_resize refuses one that does not) and the output has the planned size.
    let focals = [
        None,
        Some((0.0, 0.0)),
        Some((1.0, 1.0)),
        Some((0.33, 0.77)),
        Some((f64::NAN, 2.0)),
    ];
    let rects = [
        None,
        Some(Rect {
            x: 3,
            y: 1,
            width: 10,
            height: 5,
        }),
        Some(Rect {
            x: 0,
            y: 2,
            width: 1000,
            height: 1000,
        }),
    ];
    for (sw, sh) in [(37, 23), (101, 7), (7, 101), (1, 1), (640, 480)] {
        let source = Pixels {
            data: vec![200; sw as usize * sh as usize * 3],
            width: sw,
            height: sh,
            alpha: false,
        };
        for (w, h) in [
            (Some(1), Some(1)),
            (Some(13), Some(29)),
            (Some(333), Some(17)),
            (Some(9), None),
            (None, Some(50)),
        ] {
            for fit in [Fit::Clip, Fit::Crop, Fit::Max] {
                for focal in focals {
                    for rect in rects {
                        let mut s = spec(w, h, fit, Format::Png);
                        s.focal = focal;
                        s.rect = rect;
                        let Ok(p) = plan(sw, sh, &s) else {
                            assert!(rect.is_some(), "only a rect can miss");
                            continue;
                        };
                        let out = resample(&source, &p, FILTER)
                            .unwrap_or_else(|e| panic!("{sw}x{sh} {s:?}: {p:?}: {e}"));
                        assert_eq!((out.width, out.height), (p.width, p.height));
                        assert_eq!(out.data.len(), p.width as usize * p.height as usize * 3);
                        if fit == Fit::Crop && w.is_some() && h.is_some() {
                            assert_eq!((Some(p.width), Some(p.height)), (w, h));
                        }
                    }
                }
            }
        }
    }
}
