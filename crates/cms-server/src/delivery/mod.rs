//! Delivery to frontends (CONTRACT.md section 15): what lets websites and apps on other origins
//! read the API from a browser and cache what they read. `cors`: which origins may call, with
//! or without credentials; `validators`: entity tags, `If-None-Match` and `Cache-Control` on
//! the read endpoints; `compression`: content-coding of JSON and text answers, and how it
//! meets the entity tags.

pub(crate) mod compression;
pub(crate) mod cors;
pub(crate) mod validators;

pub use cors::{CorsOrigins, CorsSettings};
pub use validators::CacheSettings;

/// The delivery settings as the router applies them, built once.
#[derive(Clone)]
pub(crate) struct Delivery {
    pub(crate) cors: cors::CorsPolicy,
    pub(crate) caching: validators::CachePolicy,
}

impl Delivery {
    pub(crate) fn new(cors: &CorsSettings, caching: &CacheSettings) -> Self {
        Delivery {
            cors: cors::CorsPolicy::new(cors),
            caching: validators::CachePolicy::new(caching),
        }
    }
}
