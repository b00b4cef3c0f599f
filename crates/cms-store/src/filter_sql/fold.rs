//! The text operators' patterns: "the stored string, folded, contains (starts with, ends
//! with) the value, folded", with Unicode simple case folding on both engines (CONTRACT.md
//! section 14).
//!
//! Simple folding maps each character to one character, so that holds exactly when the
//! stored string has, at the matching positions, characters that fold like the value's. Each
//! character of the value therefore becomes the set of every character that folds like it
//! ([`cms_core::fold::variants`]): a GLOB on SQLite, a regular expression on PostgreSQL. The
//! engines then only compare code points, never fold, so neither an engine's locale nor its
//! Unicode version takes part, and the stored value is read as it is, without a function
//! call per row (DECISIONS.md, "Queries without cliffs: datetimes in UTC, one case folding",
//! has the measurements that ruled out folding in SQL on PostgreSQL).

use cms_core::fold::variants;

/// Where a value must occur in the stored string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Anchor {
    Anywhere,
    Start,
    End,
}

/// A SQLite GLOB pattern (case-sensitive by definition): `*` and `?` are wildcards, `[...]`
/// a set of characters. A character with case variants becomes their set; `*`, `?` and `[`
/// become a set of themselves, which makes them literal; everything else stands for itself.
pub(super) fn sqlite_glob(value: &str, anchor: Anchor) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    if anchor != Anchor::Start {
        out.push('*');
    }
    for c in value.chars() {
        match variants(c) {
            Some(class) => {
                out.push('[');
                out.extend(class);
                out.push(']');
            }
            None if matches!(c, '*' | '?' | '[') => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            None => out.push(c),
        }
    }
    if anchor != Anchor::End {
        out.push('*');
    }
    out
}

/// A PostgreSQL regular expression (advanced syntax, case-sensitive `~`). Every character
/// but ASCII letters and digits is written as a `\u`/`\U` escape, so nothing the client
/// wrote can be read as an operator, a director or an embedded option; a character with
/// case variants becomes the bracket expression of their escapes.
pub(super) fn postgres_regex(value: &str, anchor: Anchor) -> String {
    let mut out = String::with_capacity(value.len() * 6 + 2);
    if anchor == Anchor::Start {
        out.push('^');
    }
    for c in value.chars() {
        match variants(c) {
            Some(class) => {
                out.push('[');
                class.iter().for_each(|m| escape(*m, &mut out));
                out.push(']');
            }
            None => escape(c, &mut out),
        }
    }
    if anchor == Anchor::End {
        out.push('$');
    }
    out
}

fn escape(c: char, out: &mut String) {
    use std::fmt::Write;
    let _ = match c {
        c if c.is_ascii_alphanumeric() => write!(out, "{c}"),
        c if u32::from(c) <= 0xFFFF => write!(out, "\\u{:04X}", u32::from(c)),
        c => write!(out, "\\U{:08X}", u32::from(c)),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_sets_of_variants_and_literal_wildcards() {
        assert_eq!(sqlite_glob("Ab", Anchor::Anywhere), "*[Aa][Bb]*");
        assert_eq!(sqlite_glob("é1", Anchor::Start), "[Éé]1*");
        assert_eq!(sqlite_glob("s", Anchor::End), "*[Ssſ]");
        assert_eq!(
            sqlite_glob("*?[]%_\\", Anchor::Anywhere),
            "*[*][?][[]]%_\\*"
        );
        assert_eq!(sqlite_glob("", Anchor::Anywhere), "**");
        assert_eq!(sqlite_glob("İı", Anchor::Start), "İı*");
    }

    #[test]
    fn regex_escapes_everything_but_ascii_letters_and_digits() {
        assert_eq!(postgres_regex("Ab", Anchor::Anywhere), "[Aa][Bb]");
        assert_eq!(postgres_regex("é1", Anchor::Start), "^[\\u00C9\\u00E9]1");
        assert_eq!(postgres_regex("k", Anchor::End), "[Kk\\u212A]$");
        assert_eq!(
            postgres_regex(".*(?i)\\", Anchor::Anywhere),
            "\\u002E\\u002A\\u0028\\u003F[Ii]\\u0029\\u005C"
        );
        assert_eq!(postgres_regex("\u{1F600}", Anchor::Anywhere), "\\U0001F600");
        assert_eq!(postgres_regex("", Anchor::Anywhere), "");
    }
}
