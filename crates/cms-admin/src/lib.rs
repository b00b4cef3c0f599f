//! The admin UI: which page a path under `/admin` is, the HTML shell each page starts from, and
//! the stylesheets and ES modules that do the work in the browser. Every module talks to the
//! same HTTP API as any other client; nothing here calls a service.
//!
//! The files are built into the binary. Their URLs carry a hash of their contents
//! (`/admin/static/{version}/...`), so a browser may keep them forever and still never runs a
//! stale module after an upgrade.

mod assets;
mod pages;

pub use assets::{Asset, FAVICON, asset, version};
pub use pages::{Page, render};
