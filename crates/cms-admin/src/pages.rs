//! The admin's pages: a path under `/admin` names one, and each starts from the same shell,
//! which loads the page's module.

use askama::Template;

/// A page of the admin, parsed from the path after `/admin`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Page {
    SignIn,
    SignUp,
    ForgotPassword,
    ResetPassword,
    /// `/admin/accept-invitation?token=<secret>`, as an invitation's `acceptUrl` reads (the
    /// page takes the secret from its URL); `/admin/accept-invitation/{id}`, the older form,
    /// still opens for invitations made before secrets existed.
    AcceptInvitation {
        id: Option<String>,
    },
    Home,
    Documents {
        doc_type: String,
    },
    /// `id` is `new` for a document not created yet.
    Document {
        doc_type: String,
        id: String,
    },
    Assets,
    Asset {
        id: String,
    },
    Settings {
        section: String,
    },
    Tool {
        id: String,
    },
}

/// The settings sections, in the order the admin shows them.
pub const SETTINGS_SECTIONS: &[&str] = &[
    "account",
    "organization",
    "members",
    "roles",
    "api-keys",
    "webhooks",
    "plugins",
    "jobs",
    "events",
    "audit",
];

impl Page {
    /// The page at `path` (the part after `/admin`, with or without its leading slash).
    pub fn from_path(path: &str) -> Option<Page> {
        let path = path.trim_matches('/');
        let segments: Vec<&str> = if path.is_empty() {
            Vec::new()
        } else {
            path.split('/').collect()
        };
        if !segments.iter().all(|s| is_name(s)) {
            return None;
        }
        let owned = |s: &str| s.to_string();
        Some(match segments.as_slice() {
            [] => Page::Home,
            ["sign-in"] => Page::SignIn,
            ["sign-up"] => Page::SignUp,
            ["forgot-password"] => Page::ForgotPassword,
            ["reset-password"] => Page::ResetPassword,
            ["accept-invitation"] => Page::AcceptInvitation { id: None },
            ["accept-invitation", id] => Page::AcceptInvitation {
                id: Some(owned(id)),
            },
            ["documents", doc_type] => Page::Documents {
                doc_type: owned(doc_type),
            },
            ["documents", doc_type, id] => Page::Document {
                doc_type: owned(doc_type),
                id: owned(id),
            },
            ["assets"] => Page::Assets,
            ["assets", id] => Page::Asset { id: owned(id) },
            ["settings"] => Page::Settings {
                section: SETTINGS_SECTIONS[0].to_string(),
            },
            ["settings", section] if SETTINGS_SECTIONS.contains(section) => Page::Settings {
                section: owned(section),
            },
            ["tools", id] => Page::Tool { id: owned(id) },
            _ => return None,
        })
    }

    /// Pages the signed-out may open. Every other page sends them to sign-in first.
    pub fn is_public(&self) -> bool {
        matches!(
            self,
            Page::SignIn
                | Page::SignUp
                | Page::ForgotPassword
                | Page::ResetPassword
                | Page::AcceptInvitation { .. }
        )
    }

    /// The module under `js/pages/` that draws the page, and the parameters it gets.
    fn module_and_params(&self) -> (&'static str, Vec<(&'static str, &str)>) {
        match self {
            Page::SignIn | Page::SignUp | Page::ForgotPassword | Page::ResetPassword => {
                ("auth", vec![])
            }
            Page::AcceptInvitation { id } => {
                ("auth", id.iter().map(|id| ("id", id.as_str())).collect())
            }
            Page::Home => ("home", vec![]),
            Page::Documents { doc_type } => ("documents", vec![("type", doc_type)]),
            Page::Document { doc_type, id } => ("document", vec![("type", doc_type), ("id", id)]),
            Page::Assets => ("assets", vec![]),
            Page::Asset { id } => ("assets", vec![("id", id)]),
            Page::Settings { section } => ("settings", vec![("section", section)]),
            Page::Tool { id } => ("tool", vec![("id", id)]),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Page::SignIn => "sign-in",
            Page::SignUp => "sign-up",
            Page::ForgotPassword => "forgot-password",
            Page::ResetPassword => "reset-password",
            Page::AcceptInvitation { .. } => "accept-invitation",
            Page::Home => "home",
            Page::Documents { .. } => "documents",
            Page::Document { .. } => "document",
            Page::Assets => "assets",
            Page::Asset { .. } => "asset",
            Page::Settings { .. } => "settings",
            Page::Tool { .. } => "tool",
        }
    }

    /// The document title before the page's module refines it.
    fn title(&self) -> &'static str {
        match self {
            Page::SignIn => "Sign in",
            Page::SignUp => "Create an account",
            Page::ForgotPassword => "Forgot password",
            Page::ResetPassword => "Choose a new password",
            Page::AcceptInvitation { .. } => "Invitation",
            Page::Home => "Content",
            Page::Documents { .. } => "Documents",
            Page::Document { .. } => "Document",
            Page::Assets | Page::Asset { .. } => "Assets",
            Page::Settings { .. } => "Settings",
            Page::Tool { .. } => "Tool",
        }
    }
}

/// Path segments the admin accepts: type names, ids and section names. Anything else is not a
/// page, which keeps odd input out of the shell entirely.
fn is_name(segment: &str) -> bool {
    (1..=128).contains(&segment.len())
        && segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && segment != "."
        && segment != ".."
}

#[derive(Template)]
#[template(path = "page.html")]
struct Shell<'a> {
    title: &'a str,
    page: &'a str,
    module: &'a str,
    params: Vec<(&'a str, &'a str)>,
    public: bool,
    assets: String,
    stylesheets: Vec<&'static str>,
}

/// The HTML of `page`.
pub fn render(page: &Page) -> String {
    let (module, params) = page.module_and_params();
    let shell = Shell {
        title: page.title(),
        page: page.name(),
        module,
        params,
        public: page.is_public(),
        assets: format!("/admin/static/{}", crate::version()),
        stylesheets: crate::assets::stylesheets().collect(),
    };
    // The template has no fallible parts: only strings, escaped by askama.
    shell
        .render()
        .unwrap_or_else(|e| unreachable!("the admin shell failed to render: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_pages() {
        assert_eq!(Page::from_path(""), Some(Page::Home));
        assert_eq!(Page::from_path("/"), Some(Page::Home));
        assert_eq!(Page::from_path("/sign-in"), Some(Page::SignIn));
        assert_eq!(
            Page::from_path("/documents/post/new"),
            Some(Page::Document {
                doc_type: "post".into(),
                id: "new".into()
            })
        );
        assert_eq!(
            Page::from_path("/settings"),
            Some(Page::Settings {
                section: "account".into()
            })
        );
        for bad in [
            "/nope",
            "/settings/nope",
            "/documents/a/b/c",
            "/documents/<x>",
            "/documents/..",
            "/assets/a%20b",
        ] {
            assert_eq!(Page::from_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_shell_loads_the_page_module_and_escapes_its_parameters() {
        let html = render(&Page::Document {
            doc_type: "post".into(),
            id: "new".into(),
        });
        assert!(html.contains(r#"data-page="document""#), "{html}");
        assert!(html.contains(r#"data-module="document""#), "{html}");
        assert!(html.contains(r#"data-type="post""#), "{html}");
        assert!(html.contains(&format!("/admin/static/{}/js/app.js", crate::version())));
        assert!(html.contains("css/base.css"));
        assert!(!html.contains("http"), "{html}");
    }
}
