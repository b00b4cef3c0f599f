//! Locales (CONTRACT.md section 17): the configured tags, the default, the fallback chains, and
//! what a request may ask for.
//!
//! **Security property.** A [`LocaleTag`] only holds ASCII letters, digits and `-` (the BCP 47
//! shape `ab-CD-x1`), so the store may write it into a JSON path as a literal segment, the way
//! it writes declared field names: no quote, dot, comma, bracket or brace can ever reach SQL
//! through a tag.

use std::collections::BTreeMap;
use std::fmt;

/// A BCP 47 language tag as configured: letters first, then `-`-separated subtags of letters
/// and digits, each 1 to 8 characters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LocaleTag(String);

impl LocaleTag {
    /// `None` unless `tag` has the shape of a BCP 47 tag (see the type's documentation).
    pub fn parse(tag: &str) -> Option<LocaleTag> {
        let mut subtags = tag.split('-');
        let primary = subtags.next()?;
        let primary_ok =
            (1..=8).contains(&primary.len()) && primary.bytes().all(|b| b.is_ascii_alphabetic());
        let rest_ok = subtags
            .all(|s| (1..=8).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric()));
        (primary_ok && rest_ok).then(|| LocaleTag(tag.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for LocaleTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The locales of an instance or of one organization: which tags exist, which is the default,
/// and where a missing value is looked for next. Always coherent: the default is available,
/// every fallback names available tags, and no chain loops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locales {
    available: Vec<LocaleTag>,
    default: LocaleTag,
    fallbacks: BTreeMap<LocaleTag, LocaleTag>,
}

impl Default for Locales {
    /// `["en"]`, default `en`, no fallbacks: the configuration of an instance that says none.
    fn default() -> Self {
        Locales {
            available: vec![LocaleTag("en".into())],
            default: LocaleTag("en".into()),
            fallbacks: BTreeMap::new(),
        }
    }
}

/// What a request asks for: one locale (plain values, taken from the fallback chain), or every
/// locale (`locale=*`: localized fields as objects keyed by tag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocaleChoice {
    One(LocaleTag),
    All,
}

impl Locales {
    /// Checks a configuration: `available` not empty and without duplicates, `default` (the
    /// first when `None`) and every fallback's both ends among them, no tag falling back to
    /// itself through a loop. Tags compare case-insensitively, as BCP 47 says.
    pub fn new(
        available: &[String],
        default: Option<&str>,
        fallbacks: &BTreeMap<String, String>,
    ) -> Result<Locales, String> {
        let mut tags: Vec<LocaleTag> = Vec::with_capacity(available.len());
        for raw in available {
            let tag = LocaleTag::parse(raw)
                .ok_or_else(|| format!("\"{raw}\" is not a BCP 47 language tag"))?;
            if tags.iter().any(|t| t.0.eq_ignore_ascii_case(&tag.0)) {
                return Err(format!("\"{raw}\" is listed twice"));
            }
            tags.push(tag);
        }
        let first = tags
            .first()
            .cloned()
            .ok_or("at least one locale must be available")?;
        let find = |raw: &str, what: &str| {
            tags.iter()
                .find(|t| t.0.eq_ignore_ascii_case(raw))
                .cloned()
                .ok_or_else(|| format!("{what} \"{raw}\" is not an available locale"))
        };
        let default = match default {
            Some(raw) => find(raw, "the default locale")?,
            None => first,
        };
        let mut table = BTreeMap::new();
        for (from, to) in fallbacks {
            table.insert(find(from, "fallback")?, find(to, "fallback")?);
        }
        let locales = Locales {
            available: tags,
            default,
            fallbacks: table,
        };
        for tag in &locales.available {
            locales.checked_chain(tag)?;
        }
        Ok(locales)
    }

    pub fn available(&self) -> &[LocaleTag] {
        &self.available
    }

    pub fn default_locale(&self) -> &LocaleTag {
        &self.default
    }

    pub fn fallbacks(&self) -> &BTreeMap<LocaleTag, LocaleTag> {
        &self.fallbacks
    }

    /// Whether more than the default exists: only then can a value differ per locale.
    pub fn is_multilingual(&self) -> bool {
        self.available.len() > 1
    }

    /// The available tag `raw` names (case-insensitively), spelled as configured.
    pub fn find(&self, raw: &str) -> Option<&LocaleTag> {
        self.available
            .iter()
            .find(|t| t.0.eq_ignore_ascii_case(raw))
    }

    /// What a request's `locale` asks for: `None` is the default locale, `*` every locale, a
    /// tag that locale. An unknown tag is an error naming the available ones.
    pub fn choose(&self, raw: Option<&str>) -> Result<LocaleChoice, String> {
        match raw {
            None => Ok(LocaleChoice::One(self.default.clone())),
            Some("*") => Ok(LocaleChoice::All),
            Some(raw) => self
                .find(raw)
                .cloned()
                .map(LocaleChoice::One)
                .ok_or_else(|| {
                    let names: Vec<&str> = self.available.iter().map(LocaleTag::as_str).collect();
                    format!(
                        "unknown locale \"{raw}\": available are {} (or * for all)",
                        names.join(", ")
                    )
                }),
        }
    }

    /// Where a value for `tag` is looked for, in order: the tag itself, its fallbacks, then
    /// the default (every chain ends there).
    pub fn chain(&self, tag: &LocaleTag) -> Vec<&LocaleTag> {
        self.checked_chain(tag)
            .unwrap_or_else(|_| vec![&self.default])
    }

    fn checked_chain(&self, tag: &LocaleTag) -> Result<Vec<&LocaleTag>, String> {
        let mut chain: Vec<&LocaleTag> = Vec::new();
        let mut next = self.find(tag.as_str());
        while let Some(current) = next {
            if chain.contains(&current) {
                return Err(format!(
                    "the fallbacks of \"{tag}\" loop back to \"{current}\""
                ));
            }
            chain.push(current);
            next = self.fallbacks.get(current);
        }
        if !chain.contains(&&self.default) {
            chain.push(&self.default);
        }
        Ok(chain)
    }

    /// These locales narrowed to `tags` (an organization's choice): each must be available
    /// here, and the default must stay, since every chain ends at it. Fallbacks to a locale
    /// left out skip to the default.
    pub fn narrowed(&self, tags: &[String]) -> Result<Locales, String> {
        let mut kept = Vec::with_capacity(tags.len());
        for raw in tags {
            let tag = self
                .find(raw)
                .ok_or_else(|| format!("\"{raw}\" is not an available locale of this instance"))?;
            if kept.contains(tag) {
                return Err(format!("\"{raw}\" is listed twice"));
            }
            kept.push(tag.clone());
        }
        if !kept.contains(&self.default) {
            return Err(format!(
                "the default locale \"{}\" cannot be left out",
                self.default
            ));
        }
        let fallbacks = self
            .fallbacks
            .iter()
            .filter(|(from, to)| kept.contains(from) && kept.contains(to))
            .map(|(from, to)| (from.clone(), to.clone()))
            .collect();
        Ok(Locales {
            available: kept,
            default: self.default.clone(),
            fallbacks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locales() -> Locales {
        let fallbacks = BTreeMap::from([("de-AT".to_owned(), "de".to_owned())]);
        let available = ["en", "de", "de-AT", "fr"].map(String::from);
        Locales::new(&available, None, &fallbacks).unwrap()
    }

    #[test]
    fn tags_have_the_bcp47_shape_and_nothing_sql_can_read() {
        for ok in ["en", "de-AT", "zh-Hant-TW", "es-419", "x"] {
            assert!(LocaleTag::parse(ok).is_some(), "{ok}");
        }
        for bad in [
            "",
            "-",
            "de-",
            "1en",
            "de_AT",
            "de.AT",
            "de'",
            "de,AT",
            "de}",
            "abcdefghi",
        ] {
            assert!(LocaleTag::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn chains_follow_fallbacks_and_end_at_the_default() {
        let l = locales();
        let chain = |t: &str| -> Vec<String> {
            l.chain(l.find(t).unwrap())
                .into_iter()
                .map(ToString::to_string)
                .collect()
        };
        assert_eq!(chain("de-AT"), ["de-AT", "de", "en"]);
        assert_eq!(chain("fr"), ["fr", "en"]);
        assert_eq!(chain("en"), ["en"]);
        assert_eq!(chain("DE-at"), ["de-AT", "de", "en"]);
    }

    #[test]
    fn configurations_that_cannot_work_are_refused() {
        let none = BTreeMap::new();
        assert!(Locales::new(&[], None, &none).is_err());
        assert!(Locales::new(&["en".into(), "EN".into()], None, &none).is_err());
        assert!(Locales::new(&["en".into()], Some("de"), &none).is_err());
        assert!(Locales::new(&["e n".into()], None, &none).is_err());
        let to_missing = BTreeMap::from([("en".to_owned(), "fr".to_owned())]);
        assert!(Locales::new(&["en".into()], None, &to_missing).is_err());
        let looping = BTreeMap::from([
            ("de".to_owned(), "at".to_owned()),
            ("at".to_owned(), "de".to_owned()),
        ]);
        let err = Locales::new(&["en".into(), "de".into(), "at".into()], None, &looping);
        assert!(err.unwrap_err().contains("loop"));
    }

    #[test]
    fn requests_choose_one_locale_all_or_fail() {
        let l = locales();
        assert_eq!(
            l.choose(None).unwrap(),
            LocaleChoice::One(l.default.clone())
        );
        assert_eq!(l.choose(Some("*")).unwrap(), LocaleChoice::All);
        assert_eq!(
            l.choose(Some("fr")).unwrap(),
            LocaleChoice::One(LocaleTag("fr".into()))
        );
        assert!(l.choose(Some("it")).unwrap_err().contains("unknown locale"));
    }

    #[test]
    fn an_organization_narrows_but_keeps_the_default() {
        let l = locales();
        let narrowed = l.narrowed(&["en".into(), "de-AT".into()]).unwrap();
        assert_eq!(narrowed.available().len(), 2);
        assert!(narrowed.fallbacks().is_empty());
        let chain: Vec<&str> = narrowed
            .chain(narrowed.find("de-AT").unwrap())
            .into_iter()
            .map(LocaleTag::as_str)
            .collect();
        assert_eq!(chain, ["de-AT", "en"]);
        assert!(l.narrowed(&["de".into()]).is_err());
        assert!(l.narrowed(&["en".into(), "it".into()]).is_err());
    }
}
