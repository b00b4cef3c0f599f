//! A document type's `previewUrl` (CONTRACT.md section 15): the address of the frontend page
//! that shows a draft, as a template with placeholders the preview link fills in.
//!
//! The template is parsed once, at schema load, into literal text and known placeholders, so
//! an unknown placeholder or a stray brace is a schema error rather than a broken link later,
//! and filling it in cannot fail.

use std::fmt;

/// One value a template may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholder {
    /// The document id.
    Id,
    /// The `current` of the type's first slug field in the draft.
    Slug,
    /// The preview token.
    Token,
    /// The document type.
    Type,
}

impl Placeholder {
    const ALL: [Placeholder; 4] = [
        Placeholder::Id,
        Placeholder::Slug,
        Placeholder::Token,
        Placeholder::Type,
    ];

    fn name(self) -> &'static str {
        match self {
            Placeholder::Id => "id",
            Placeholder::Slug => "slug",
            Placeholder::Token => "token",
            Placeholder::Type => "type",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Value(Placeholder),
}

/// A checked `previewUrl` template: an `http://` or `https://` address with a host, no
/// whitespace or control characters, whose `{...}` are all known placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewUrl {
    template: String,
    parts: Vec<Part>,
}

/// The values a template is filled with.
#[derive(Debug, Clone, Copy)]
pub struct PreviewValues<'a> {
    pub id: &'a str,
    /// `None` when the type has no slug field or the draft's slug has no `current`: the
    /// placeholder is then filled with nothing.
    pub slug: Option<&'a str>,
    pub token: &'a str,
    pub doc_type: &'a str,
}

impl PreviewUrl {
    /// Parses a template; the error says what is wrong, for the schema error to carry.
    pub fn parse(template: &str) -> Result<PreviewUrl, String> {
        check_address(template)?;
        let parts = parse_parts(template)?;
        Ok(PreviewUrl {
            template: template.to_string(),
            parts,
        })
    }

    /// The template as declared.
    pub fn as_str(&self) -> &str {
        &self.template
    }

    /// The address with every placeholder replaced by its value, percent-encoded (RFC 3986:
    /// everything but unreserved characters), so a value can never add a path segment, a query
    /// parameter or change the host.
    pub fn fill(&self, values: &PreviewValues<'_>) -> String {
        let mut out = String::with_capacity(self.template.len() + values.token.len());
        for part in &self.parts {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Value(placeholder) => {
                    let value = match placeholder {
                        Placeholder::Id => values.id,
                        Placeholder::Slug => values.slug.unwrap_or_default(),
                        Placeholder::Token => values.token,
                        Placeholder::Type => values.doc_type,
                    };
                    encode_into(&mut out, value);
                }
            }
        }
        out
    }
}

impl fmt::Display for PreviewUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.template)
    }
}

/// `http(s)://` and a host that does not start with a placeholder (the host must be the
/// frontend's, never a value of the document), without whitespace or control characters.
fn check_address(template: &str) -> Result<(), String> {
    let lower = template.to_ascii_lowercase();
    let rest = ["http://", "https://"]
        .iter()
        .find_map(|scheme| lower.strip_prefix(scheme))
        .ok_or("previewUrl must be an http:// or https:// URL template")?;
    if template
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err("previewUrl may not contain whitespace or control characters".into());
    }
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = &rest[..host_end];
    if host.is_empty() || host.contains(['{', '}']) {
        return Err("previewUrl must name a fixed host after the scheme".into());
    }
    Ok(())
}

fn parse_parts(template: &str) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find(['{', '}']) {
        if rest.as_bytes()[open] == b'}' {
            return Err("previewUrl has a `}` without its `{`".into());
        }
        if open > 0 {
            parts.push(Part::Text(rest[..open].to_string()));
        }
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or("previewUrl has a `{` without its `}`")?;
        let name = &after[..close];
        let placeholder = Placeholder::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                format!(
                    "previewUrl has an unknown placeholder `{{{name}}}` (known: {{id}}, {{slug}}, {{token}}, {{type}})"
                )
            })?;
        parts.push(Part::Value(placeholder));
        rest = &after[close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Text(rest.to_string()));
    }
    Ok(parts)
}

/// Appends `value` percent-encoded: RFC 3986's unreserved characters as they are, every other
/// byte of its UTF-8 as `%XX`.
fn encode_into(out: &mut String, value: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xF)]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values<'a>(slug: Option<&'a str>) -> PreviewValues<'a> {
        PreviewValues {
            id: "d1",
            slug,
            token: "t/k+n",
            doc_type: "post",
        }
    }

    #[test]
    fn fills_every_placeholder_url_encoded() {
        let url =
            PreviewUrl::parse("https://www.example.com/{type}/{slug}?id={id}&preview={token}")
                .unwrap();
        assert_eq!(
            url.fill(&values(Some("héllo wörld/../x?y=1"))),
            "https://www.example.com/post/h%C3%A9llo%20w%C3%B6rld%2F..%2Fx%3Fy%3D1?id=d1&preview=t%2Fk%2Bn"
        );
        assert_eq!(
            url.fill(&values(None)),
            "https://www.example.com/post/?id=d1&preview=t%2Fk%2Bn"
        );
        assert_eq!(
            PreviewUrl::parse("http://localhost:3000")
                .unwrap()
                .fill(&values(None)),
            "http://localhost:3000"
        );
    }

    #[test]
    fn refuses_bad_templates() {
        for (template, says) in [
            ("https://x.test/{nope}", "unknown placeholder `{nope}`"),
            ("https://x.test/{id", "without its `}`"),
            ("https://x.test/id}", "without its `{`"),
            ("ftp://x.test/{id}", "http:// or https://"),
            ("javascript:alert(1)//{id}", "http:// or https://"),
            ("/relative/{id}", "http:// or https://"),
            ("https://", "fixed host"),
            ("https://{slug}.x.test/", "fixed host"),
            ("https://x.test/a b", "whitespace"),
        ] {
            let error = PreviewUrl::parse(template).unwrap_err();
            assert!(error.contains(says), "{template}: {error}");
        }
        assert!(PreviewUrl::parse("HTTPS://X.test/{ID}").is_err());
        assert!(PreviewUrl::parse("HTTPS://X.test/{id}").is_ok());
    }
}
