//! The admin's static files, embedded at compile time.

use std::sync::LazyLock;

use sha2::{Digest, Sha256};

/// One embedded file.
#[derive(Debug)]
pub struct Asset {
    pub path: &'static str,
    pub content_type: &'static str,
    pub bytes: &'static [u8],
}

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const SVG: &str = "image/svg+xml";

macro_rules! files {
    ($($kind:ident $path:literal),* $(,)?) => {
        &[$(Asset {
            path: $path,
            content_type: $kind,
            bytes: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/", $path)),
        }),*]
    };
}

/// Every file the admin serves. A new module is one line here.
static FILES: &[Asset] = files![
    CSS "css/base.css",
    CSS "css/documents.css",
    CSS "css/assets.css",
    CSS "css/settings.css",
    CSS "css/assistant.css",
    CSS "css/polish.css",
    CSS "css/presence.css",
    CSS "css/document-views.css",
    CSS "css/crop.css",
    JS "js/app.js",
    JS "js/api.js",
    JS "js/dom.js",
    JS "js/shell.js",
    JS "js/redirect.js",
    JS "js/workspace.js",
    JS "js/palette.js",
    JS "js/drafts-keeper.js",
    JS "js/pages/auth.js",
    JS "js/pages/home.js",
    JS "js/pages/documents.js",
    JS "js/pages/document.js",
    JS "js/fields.js",
    JS "js/field-markup.js",
    JS "js/reference-field.js",
    JS "js/reference-create.js",
    JS "js/tag-field.js",
    JS "js/asset-field.js",
    JS "js/rich-text.js",
    JS "js/rich-text-model.js",
    JS "js/rich-text-dom.js",
    JS "js/rich-text-paste.js",
    JS "js/portable-text.js",
    JS "js/history.js",
    JS "js/history-diff.js",
    JS "js/locale.js",
    JS "js/document-locale.js",
    JS "js/presence.js",
    JS "js/document-views.js",
    JS "js/document-preview.js",
    JS "js/pages/assets.js",
    JS "js/asset-picker.js",
    JS "js/focal-point.js",
    JS "js/crop-field.js",
    JS "js/pages/settings.js",
    JS "js/settings/people.js",
    JS "js/settings/two-factor.js",
    JS "js/settings/roles.js",
    JS "js/settings/keys.js",
    JS "js/settings/system.js",
    JS "js/settings/webhooks.js",
    JS "js/settings/audit.js",
    JS "js/pages/tool.js",
    JS "js/assistant.js",
    SVG "favicon.svg",
];

/// The icon every page links, and `/favicon.ico` leads to.
pub const FAVICON: &str = "favicon.svg";

/// The stylesheets every page links, in order.
pub(crate) fn stylesheets() -> impl Iterator<Item = &'static str> {
    FILES
        .iter()
        .filter(|file| file.content_type == CSS)
        .map(|file| file.path)
}

/// A short hash of every file: the cache-busting segment of asset URLs.
pub fn version() -> &'static str {
    static VERSION: LazyLock<String> = LazyLock::new(|| {
        let mut hash = Sha256::new();
        for file in FILES {
            hash.update(file.path.as_bytes());
            hash.update([0]);
            hash.update(file.bytes);
        }
        hash.finalize()[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    });
    &VERSION
}

/// The file at `path` of the current `version`; `None` for anything else, an older version
/// included (its contents are gone with the upgrade).
pub fn asset(version_segment: &str, path: &str) -> Option<&'static Asset> {
    if version_segment != version() {
        return None;
    }
    FILES.iter().find(|file| file.path == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_file_is_served_under_the_current_version_only() {
        for file in FILES {
            assert!(asset(version(), file.path).is_some(), "{}", file.path);
            assert!(asset("000000000000", file.path).is_none());
        }
        assert!(asset(version(), "js/../../Cargo.toml").is_none());
        assert_eq!(version().len(), 12);
    }

    /// The admin loads nothing from elsewhere: no module or stylesheet names another origin.
    #[test]
    fn no_file_reaches_another_origin() {
        for file in FILES {
            // XML namespaces (SVG) are names, not addresses.
            let text = std::str::from_utf8(file.bytes)
                .unwrap()
                .replace("http://www.w3.org/", "");
            for needle in ["http://", "https://", "//cdn", "@import url("] {
                assert!(!text.contains(needle), "{} contains {needle}", file.path);
            }
        }
    }
}
