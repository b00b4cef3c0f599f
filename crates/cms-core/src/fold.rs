//! Unicode simple case folding (CaseFolding.txt, statuses C and S), the one notion of "the
//! same letter in another case" that the `where` language's text operators use on every
//! engine (CONTRACT.md section 14).
//!
//! The table is ICU4X's (`icu_casemap`, its Unicode data compiled in), read through
//! [`simple_fold`]. Simple folding maps one code point to one code point, so two strings fold
//! to the same string exactly when they have the same length in characters and each pair of
//! characters folds alike. The store uses that to compare without folding stored values in
//! SQL: a pattern character becomes the set of every character that folds like it
//! ([`variants`]), and the engines only match code points (DECISIONS.md, "Queries without
//! cliffs: datetimes in UTC, one case folding").

use std::collections::HashMap;
use std::sync::OnceLock;

use icu_casemap::CaseMapper;

/// The simple case fold of `c`: `c` itself when it has none (`ß`, `İ` and `ı` among them:
/// their folds are full or Turkic mappings, which simple folding leaves out).
pub fn simple_fold(c: char) -> char {
    CaseMapper::new().simple_fold(c)
}

/// `s` with every character replaced by its simple fold; as long, in characters, as `s`.
pub fn fold_str(s: &str) -> String {
    s.chars().map(simple_fold).collect()
}

/// Every character whose simple fold is `c`'s, `c` included, in code point order, when there
/// is more than one; `None` for a character no other character folds like (most of them).
pub fn variants(c: char) -> Option<&'static [char]> {
    classes().get(&simple_fold(c)).map(|class| &class[..])
}

/// The classes of more than one character, keyed by their common fold. Built once from the
/// table by folding every scalar value (about a million lookups, a few milliseconds), so the
/// inverse cannot disagree with [`simple_fold`].
fn classes() -> &'static HashMap<char, Box<[char]>> {
    static CLASSES: OnceLock<HashMap<char, Box<[char]>>> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let mut by_fold: HashMap<char, Vec<char>> = HashMap::new();
        for c in all_chars() {
            let folded = simple_fold(c);
            if folded != c {
                by_fold.entry(folded).or_default().push(c);
            }
        }
        by_fold
            .into_iter()
            .map(|(folded, mut members)| {
                members.push(folded);
                members.sort_unstable();
                (folded, members.into_boxed_slice())
            })
            .collect()
    })
}

/// Every Unicode scalar value.
pub fn all_chars() -> impl Iterator<Item = char> {
    ('\0'..='\u{D7FF}').chain('\u{E000}'..=char::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_by_simple_case_folding() {
        // Status C and S mappings.
        assert_eq!(fold_str("ÉCOLE"), "école");
        assert_eq!(fold_str("ΣΊΣΥΦΟΣ"), "σίσυφοσ");
        assert_eq!(fold_str("σίσυφος"), "σίσυφοσ");
        assert_eq!(fold_str("МОСКВА"), "москва");
        assert_eq!(simple_fold('ẞ'), 'ß');
        assert_eq!(simple_fold('\u{212A}'), 'k', "KELVIN SIGN");
        assert_eq!(simple_fold('ſ'), 's', "LONG S");
        assert_eq!(
            simple_fold('\u{1F88}'),
            '\u{1F80}',
            "status S: one code point"
        );
        // Cherokee folds to its uppercase letters.
        assert_eq!(simple_fold('\u{AB70}'), '\u{13A0}');
        assert_eq!(
            simple_fold('\u{1E900}'),
            '\u{1E922}',
            "Adlam, outside the BMP"
        );
        // Full (F) and Turkic (T) mappings are not simple folding.
        assert_eq!(simple_fold('ß'), 'ß');
        assert_eq!(simple_fold('İ'), 'İ');
        assert_eq!(simple_fold('ı'), 'ı');
        assert_eq!(simple_fold('I'), 'i');
        assert_eq!(simple_fold('\u{0390}'), '\u{0390}');
    }

    #[test]
    fn variants_are_the_characters_that_fold_alike() {
        assert_eq!(variants('s'), Some(&['S', 's', 'ſ'][..]));
        assert_eq!(variants('K'), Some(&['K', 'k', '\u{212A}'][..]));
        assert_eq!(variants('ς'), Some(&['Σ', 'ς', 'σ'][..]));
        let sharp_s = variants('ẞ').unwrap();
        assert!(sharp_s.starts_with(&['ß', 'ẞ']), "{sharp_s:?}");
        assert_eq!(variants('i'), Some(&['I', 'i'][..]));
        assert_eq!(variants('İ'), None);
        assert_eq!(variants('ı'), None);
        assert_eq!(variants('7'), None);
        assert_eq!(variants('*'), None);
    }

    /// The classes partition exactly the characters that have case variants: every scalar
    /// value is in its own fold's class when it has one, folding is idempotent, and no class
    /// holds a character that folds elsewhere. The store's patterns rely on all three.
    #[test]
    fn classes_are_exactly_the_fold_equivalence() {
        let mut in_classes = 0usize;
        for c in all_chars() {
            let folded = simple_fold(c);
            assert_eq!(simple_fold(folded), folded, "{c:?} folds twice differently");
            match variants(c) {
                Some(class) => {
                    assert!(class.len() >= 2);
                    assert!(class.contains(&c), "{c:?} outside its class");
                    assert!(class.iter().all(|m| simple_fold(*m) == folded));
                    assert!(class.windows(2).all(|w| w[0] < w[1]));
                    in_classes += 1;
                }
                None => assert_eq!(folded, c, "{c:?} folds but has no class"),
            }
        }
        let members: usize = classes().values().map(|c| c.len()).sum();
        assert_eq!(members, in_classes);
        // The pattern syntaxes of both engines are safe for class members: letters only.
        for class in classes().values() {
            assert!(class.iter().all(|c| c.is_alphabetic() || !c.is_ascii()));
            assert!(
                !class
                    .iter()
                    .any(|c| matches!(c, ']' | '^' | '-' | '\\' | '['))
            );
        }
    }
}
