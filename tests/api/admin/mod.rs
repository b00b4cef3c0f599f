//! The admin UI end to end: a real server on loopback, Debian's headless Chromium driven over
//! WebDriver, and the pages used the way an editor uses them (labels, buttons, keyboard). Each
//! module is one area of the admin; every scenario leaves screenshots in `admin-screenshots/`
//! (ignored by git) for a reviewer to look at.
//!
//! The admin speaks the same HTTP API as every other client, which the rest of this suite
//! runs on both engines; these scenarios run on SQLite.

mod accessibility;
mod account;
mod actions;
mod assets;
mod assistant;
mod audit;
mod auth;
mod autosave;
mod crop;
mod documents;
mod fields;
mod focal;
mod history;
mod invitations;
mod journey;
mod layout;
mod list;
mod live_preview;
mod localization;
mod pages;
mod polish;
mod presence;
mod preview;
mod rich_text;
mod settings;
mod single_sign_on;
mod thumbnails;
mod two_factor;
mod webhooks;

use std::path::PathBuf;
use std::time::Duration;

use fantoccini::Locator;
use fantoccini::elements::Element;
use serde_json::{Value, json};

use crate::browser::Browser;
use crate::support::{Served, Session, TestApp, serve};

/// How long a page may take to show what a step waits for. Generous: CI machines are slow
/// and share two cores; a real failure still fails, only later.
const PATIENCE: Duration = Duration::from_secs(20);

pub struct Ui {
    pub app: TestApp,
    pub served: Served,
    pub browser: Browser,
    /// The scenario's name: its screenshots are `{scenario}-{n}-{name}.png`.
    scenario: String,
    shots: std::sync::atomic::AtomicU32,
}

impl Ui {
    /// A browser on `app`, served on a loopback port.
    pub async fn start(app: TestApp, scenario: &str) -> Ui {
        let served = serve(&app).await;
        Ui::on(app, served, scenario).await
    }

    /// A browser on `app`, already served.
    pub async fn on(app: TestApp, served: Served, scenario: &str) -> Ui {
        let browser = Browser::start().await;
        browser.client.set_window_size(1280, 900).await.unwrap();
        Ui {
            app,
            served,
            browser,
            scenario: scenario.to_string(),
            shots: std::sync::atomic::AtomicU32::new(0),
        }
    }

    pub fn client(&self) -> &fantoccini::Client {
        &self.browser.client
    }

    /// Hands the helpers another browser and returns the one they drove: a scenario with two
    /// people drives both browsers with the same helpers, one at a time (the other's page keeps
    /// running meanwhile). Stop the returned one too.
    pub fn swap_browser(&mut self, browser: Browser) -> Browser {
        std::mem::replace(&mut self.browser, browser)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.served.origin, path)
    }

    /// Opens `path` and waits until its page says it is drawn.
    pub async fn open(&self, path: &str) {
        self.client().goto(&self.url(path)).await.unwrap();
        self.ready().await;
    }

    /// Waits until the current page is drawn and usable (`main[data-ready]`, set by the
    /// page's module when it has what it needs).
    pub async fn ready(&self) {
        if let Err(e) = self
            .client()
            .wait()
            .at_most(PATIENCE)
            .for_element(Locator::Css("main[data-ready='true']"))
            .await
        {
            let text = self.main_text().await;
            let url = self.client().current_url().await.unwrap();
            panic!("{url} was not ready: {e}; it shows: {text}");
        }
    }

    /// Waits for the browser to be at `path` (after a navigation the page started), then for
    /// the page to be ready.
    pub async fn arrive(&self, path: &str) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let url = self.client().current_url().await.unwrap();
            if url.path() == path {
                let ready = self
                    .client()
                    .execute("return document.readyState === 'complete' && !!document.querySelector(\"main[data-ready='true']\")", vec![])
                    .await
                    .unwrap();
                if ready == json!(true) {
                    return;
                }
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "did not arrive at {path}: at {url}, showing {}",
                self.main_text().await
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn main_text(&self) -> String {
        match self.client().find(Locator::Css("body")).await {
            Ok(body) => body.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    /// The element `css` matches, waiting for it to appear.
    pub async fn find(&self, css: &str) -> Element {
        self.client()
            .wait()
            .at_most(PATIENCE)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no element {css}: {e}"))
    }

    /// The form control labelled `label` (the label's text without a required marker).
    pub async fn control(&self, label: &str) -> Element {
        let xpath = format!(
            "//label[normalize-space(translate(., '*', ''))={}]",
            xpath_literal(label)
        );
        let found = self
            .client()
            .wait()
            .at_most(PATIENCE)
            .for_element(Locator::XPath(&xpath))
            .await;
        let label_el = match found {
            Ok(el) => el,
            Err(e) => panic!(
                "no label {label:?}: {e}; the page shows: {}",
                self.main_text().await
            ),
        };
        let id = label_el
            .attr("for")
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("label {label:?} names no control"));
        self.client()
            .find(Locator::Id(&id))
            .await
            .unwrap_or_else(|e| panic!("label {label:?} names #{id}, which is missing: {e}"))
    }

    /// Types `value` into the control labelled `label`, replacing what it held.
    pub async fn fill(&self, label: &str, value: &str) {
        let control = self.control(label).await;
        control.clear().await.unwrap();
        control.send_keys(value).await.unwrap();
    }

    /// Clicks the button, link, disclosure (`summary`) or listbox option whose text is `text`,
    /// waiting for it to be there.
    pub async fn click(&self, text: &str) {
        let literal = xpath_literal(text);
        let xpath = format!(
            "(//button[normalize-space(.)={literal} and not(@disabled)] | //a[normalize-space(.)={literal}] | //summary[normalize-space(.)={literal}] | //*[@role='option' and normalize-space(.)={literal}])[not(ancestor-or-self::*[@hidden])]"
        );
        let found = self
            .client()
            .wait()
            .at_most(PATIENCE)
            .for_element(Locator::XPath(&xpath))
            .await;
        let el = match found {
            Ok(el) => el,
            Err(e) => panic!(
                "no button or link {text:?}: {e}; the page shows: {}",
                self.main_text().await
            ),
        };
        self.press(&el).await;
    }

    /// Clicks `el` after scrolling it to the middle of the window, as a person scrolls to what
    /// they click (WebDriver would scroll it to the top edge, under the sticky top bar).
    pub async fn press(&self, el: &Element) {
        self.eval(
            "arguments[0].scrollIntoView({ block: 'center' })",
            vec![serde_json::to_value(el).unwrap()],
        )
        .await;
        el.click().await.unwrap();
    }

    /// Waits until the page shows `text` somewhere.
    pub async fn see(&self, text: &str) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let shown = self.main_text().await;
            if shown.contains(text) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the page never showed {text:?}; it shows: {shown}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Runs `script` in the page (`arguments` as in WebDriver) and returns its value.
    pub async fn eval(&self, script: &str, args: Vec<Value>) -> Value {
        self.client().execute(script, args).await.unwrap()
    }

    /// How far the page reaches past the window's right edge (0 when it fits), and the
    /// elements that do, to name the culprit: `[pixels, ["TAG.class", ...]]`.
    pub async fn sideways_overflow(&self) -> Value {
        self.eval(
            "const w = document.documentElement.clientWidth;
             const wide = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > w + 1).map(e => e.tagName + '.' + e.className);
             return [document.documentElement.scrollWidth - w, wide];",
            vec![],
        )
        .await
    }

    /// Signs the browser in as `session` (the cookie sign-in would have set; WebDriver's
    /// cookie API refuses an IP address as a cookie domain). The cookie is set only once the
    /// sign-in page has drawn its form: a signed-in visitor is sent home by that page, and had
    /// its session check run after the cookie was set, that move home would race the test's
    /// next navigation (seen under load: the list page's test found the home page).
    pub async fn sign_in_as(&self, session: &Session) {
        self.client()
            .goto(&self.url("/admin/sign-in"))
            .await
            .unwrap();
        self.ready().await;
        // Scenarios save with the buttons, at their own pace: autosave (a preference of the
        // browser) is off for them, and `autosave.rs` turns it on.
        self.eval(
            "document.cookie = arguments[0] + '; path=/'; localStorage.setItem('cms.autosave', 'off')",
            vec![json!(session.cookie)],
        )
        .await;
    }

    /// Turns autosave on in this browser (the admin's preference, off in scenarios).
    pub async fn autosave_on(&self) {
        self.eval("localStorage.setItem('cms.autosave', 'on')", vec![])
            .await;
    }

    /// Saves a screenshot of the page as it is now, for a reviewer.
    pub async fn screenshot(&self, name: &str) {
        let png = self.client().screenshot().await.unwrap();
        let n = self.shots.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let dir = screenshots_dir();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("{}-{n:02}-{name}.png", self.scenario)),
            png,
        )
        .unwrap();
    }

    pub async fn stop(self) {
        self.browser.stop().await;
        drop(self.served);
        self.app.stop().await;
    }
}

/// `admin-screenshots/` at the repository root (ignored by git).
pub fn screenshots_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("admin-screenshots")
}

/// `text` as an XPath string literal, whatever quotes it holds.
fn xpath_literal(text: &str) -> String {
    if !text.contains('\'') {
        format!("'{text}'")
    } else if !text.contains('"') {
        format!("\"{text}\"")
    } else {
        let parts: Vec<String> = text.split('\'').map(|p| format!("'{p}'")).collect();
        format!("concat({})", parts.join(", \"'\", "))
    }
}

/// Runs a browser scenario on SQLite.
#[macro_export]
macro_rules! admin_scenarios {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    cms_store::testing::with_database(cms_store::Dialect::Sqlite, super::$name)
                        .await;
                }
            )*
        }
    };
}
