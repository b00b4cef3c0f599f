//! Full-text search (CONTRACT.md section 14): the one tokenizer for stored text and queries, the
//! query language parsed into a type, and the rows a document copy's searchable fields are
//! indexed as.
//!
//! Both engines index the tokens made here verbatim (SQLite's FTS5 with the `ascii` tokenizer,
//! PostgreSQL's `tsvector` built from the tokens with their positions), so what a word is, how
//! case and diacritics fold, and therefore which documents match, is decided once, in Rust,
//! for both.

use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;
use unicode_segmentation::UnicodeSegmentation;

mod rows;

pub use rows::{SearchRow, searchable_paths};

/// The longest token, in bytes: longer words are cut (on a character boundary) the same way in
/// stored text and in queries. PostgreSQL refuses lexemes past 2 KiB, and a tsvector past
/// 1 MiB; with [`CHUNK_TOKENS`] tokens of at most this size a row stays far below both.
pub const MAX_TOKEN_BYTES: usize = 100;

/// Tokens per indexed row: a long field is indexed as several rows (chunks) that overlap by
/// [`CHUNK_OVERLAP`] tokens. PostgreSQL keeps at most 256 positions per lexeme and positions up
/// to 16,383 in a tsvector; chunks keep every position of both engines exact, so phrases match
/// alike on both.
pub const CHUNK_TOKENS: usize = 1024;

/// Tokens two neighbouring chunks share, so a phrase of up to this many words that crosses a
/// chunk boundary is still found (on both engines alike).
pub const CHUNK_OVERLAP: usize = 24;

/// The most terms one search may hold: each term is a condition of its own in SQL.
pub const MAX_TERMS: usize = 16;

/// The longest search string, in characters.
pub const MAX_SEARCH_CHARS: usize = 1000;

/// The normalized tokens of `text`: Unicode words (UAX #29), compatibility-decomposed,
/// lowercased, with the Latin/Greek/Cyrillic diacritics removed (`Café` → `cafe`) and every
/// character that is neither alphanumeric nor a combining mark treated as a separator
/// (`don't` → `don`, `t`), then recomposed (NFC). Tokens contain no ASCII punctuation or
/// space, so both engines' indexes take each one as one word.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.unicode_words() {
        let folded: String = word
            .nfkd()
            .flat_map(char::to_lowercase)
            .filter(|c| !is_diacritic(*c))
            .collect();
        for part in folded.split(|c: char| !(c.is_alphanumeric() || is_combining_mark(c))) {
            if part.is_empty() || part.chars().all(is_combining_mark) {
                continue;
            }
            out.push(truncate(part.nfc().collect()));
        }
    }
    out
}

/// The combining marks that are diacritics of Latin, Greek and Cyrillic letters (the Unicode
/// blocks of combining diacritical marks). Marks of other scripts (Indic vowel signs, ...) are
/// part of their letters and stay.
fn is_diacritic(c: char) -> bool {
    matches!(c,
        '\u{0300}'..='\u{036F}'
            | '\u{1AB0}'..='\u{1AFF}'
            | '\u{1DC0}'..='\u{1DFF}'
            | '\u{20D0}'..='\u{20FF}'
            | '\u{FE20}'..='\u{FE2F}')
}

fn truncate(mut token: String) -> String {
    if token.len() > MAX_TOKEN_BYTES {
        let mut end = MAX_TOKEN_BYTES;
        while !token.is_char_boundary(end) {
            end -= 1;
        }
        token.truncate(end);
    }
    token
}

/// The key of a whole value's tokens, for the exact-match boost: a field whose every token, in
/// order, equals the search's words. A digest rather than the text, so a long body costs a
/// few bytes in the index.
pub fn exact_key(tokens: &[String]) -> String {
    let digest = Sha256::digest(tokens.join(" ").as_bytes());
    crate::hex::encode(&digest[..8])
}

/// One term of a search: a word (one token) or a phrase (tokens adjacent, in order, in one
/// field); `negated` terms exclude the documents that match them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchTerm {
    /// Normalized tokens, never empty.
    pub tokens: Vec<String>,
    pub negated: bool,
}

impl SearchTerm {
    pub fn is_phrase(&self) -> bool {
        self.tokens.len() > 1
    }
}

/// A parsed search: at least one term that is not negated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    terms: Vec<SearchTerm>,
}

/// Why a search string is refused (a 400 at every door).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    #[error("search is empty: give at least one word")]
    Empty,
    #[error("search only excludes: give at least one word that is not excluded")]
    OnlyExclusions,
    #[error("search is too long: at most {MAX_SEARCH_CHARS} characters")]
    TooLong,
    #[error("search has too many terms: at most {MAX_TERMS}")]
    TooManyTerms,
}

impl SearchQuery {
    /// Parses `words "quoted phrase" -excluded -"excluded phrase"`. A word that normalizes to
    /// several tokens (`don't`, `e-mail`) is a phrase of them; one that normalizes to none
    /// (punctuation) is dropped; an unterminated quote runs to the end. Repeated terms count
    /// once.
    pub fn parse(input: &str) -> Result<SearchQuery, SearchError> {
        if input.chars().count() > MAX_SEARCH_CHARS {
            return Err(SearchError::TooLong);
        }
        let mut terms: Vec<SearchTerm> = Vec::new();
        let mut rest = input.trim_start();
        while !rest.is_empty() {
            let (negated, after_sign) = match rest.strip_prefix('-') {
                Some(after) => (true, after),
                None => (false, rest),
            };
            let (text, after) = match after_sign.strip_prefix('"') {
                Some(quoted) => match quoted.find('"') {
                    Some(end) => (&quoted[..end], &quoted[end + 1..]),
                    None => (quoted, ""),
                },
                None => {
                    let end = after_sign
                        .find(char::is_whitespace)
                        .unwrap_or(after_sign.len());
                    (&after_sign[..end], &after_sign[end..])
                }
            };
            let tokens = tokenize(text);
            if !tokens.is_empty() {
                let term = SearchTerm { tokens, negated };
                if !terms.contains(&term) {
                    terms.push(term);
                }
            }
            rest = after.trim_start();
        }
        if terms.is_empty() {
            return Err(SearchError::Empty);
        }
        if terms.iter().all(|t| t.negated) {
            return Err(SearchError::OnlyExclusions);
        }
        if terms.len() > MAX_TERMS {
            return Err(SearchError::TooManyTerms);
        }
        Ok(SearchQuery { terms })
    }

    /// Every term, in the order written.
    pub fn terms(&self) -> &[SearchTerm] {
        &self.terms
    }

    /// The terms a document must match.
    pub fn required(&self) -> impl Iterator<Item = &SearchTerm> {
        self.terms.iter().filter(|t| !t.negated)
    }

    /// The terms a document must not match.
    pub fn excluded(&self) -> impl Iterator<Item = &SearchTerm> {
        self.terms.iter().filter(|t| t.negated)
    }

    /// [`exact_key`] of the required terms' tokens in the order written: a field whose whole
    /// value is exactly these words gets the exact-match boost.
    pub fn exact_key(&self) -> String {
        let tokens: Vec<String> = self.required().flat_map(|t| t.tokens.clone()).collect();
        exact_key(&tokens)
    }
}

#[cfg(test)]
mod tests;
