//! Where a value sits in a document's data, as the API names it (`seo.description`,
//! `tags[2]`) and as a person reads it ("Summary", "item 3 of Tags"): validation and
//! reference checks both report issues at such a place, so their messages agree.

use super::model::Field;
use super::{index, join};

/// Where a value sits: its `path` (the issue's `path`, as the API names it) and its `label`, the
/// words a person reads in the message: the field's title (else its name), an array item by its
/// position, a key of a composite value after its field's label.
pub(crate) struct At {
    pub(crate) path: String,
    pub(crate) label: String,
}

impl At {
    /// The document's data itself.
    pub(crate) fn root() -> At {
        At {
            path: String::new(),
            label: "data".into(),
        }
    }

    /// The value of `field` inside this one.
    pub(crate) fn field(&self, field: &Field) -> At {
        At {
            path: join(&self.path, &field.name),
            label: field.title.clone().unwrap_or_else(|| field.name.clone()),
        }
    }

    /// The value of a key that is no declared field (metadata, a composite value's parts, an
    /// undeclared key): there is no title to show, so the key follows the label it belongs to.
    pub(crate) fn key(&self, key: &str) -> At {
        let label = if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{} › {key}", self.label)
        };
        At {
            path: join(&self.path, key),
            label,
        }
    }

    /// One locale's value of a localized field.
    pub(crate) fn locale(&self, tag: &str) -> At {
        At {
            path: join(&self.path, tag),
            label: format!("{} ({tag})", self.label),
        }
    }

    /// The `i`th item (from 0) of the array here, counted from 1 for people.
    pub(crate) fn item(&self, i: usize) -> At {
        At {
            path: index(&self.path, i),
            label: format!("item {} of {}", i + 1, self.label),
        }
    }
}
