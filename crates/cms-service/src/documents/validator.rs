//! The entity tag of a read of one document by id, decided without building the body
//! (CONTRACT.md section 15, "Cache validators"; issue 24: "where the answer is decided by a
//! document's revision, decide it without building the body").
//!
//! A read of one document that resolves no references (depth 0) is a pure function of: the
//! stored row's stamps (every write moves one: a draft save the revision, publish and unpublish
//! `publishedAt`, `publishedHash` and `updatedAt`), the schemas as registered (field rules,
//! localized fields), the server's version (how a body is written), the request's options
//! (perspective, locale and the organization's locale chain it resolves to), and who reads
//! (the audience, and the role the field rules strip by). The tag is a digest of exactly those
//! inputs, and the 200 carries the same tag, so a 304 can never confirm a body that the same
//! request would not get byte for byte. With depth > 0 the body also holds other documents,
//! which their own stamps would have to decide: the door hashes those bodies instead.

use cms_core::schema::Schemas;
use sha2::{Digest, Sha256};

use super::read::PointRead;
use super::{DocumentService, ReadOptions};
use crate::actor::Actor;
use crate::error::Result;

/// A strong entity tag's opaque text for a read of one document, decided from its stored
/// stamps (see the module's documentation). Lower-case hex, without quotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionTag(String);

impl RevisionTag {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// How many bytes of the digest a tag keeps: 128 bits, far past any chance of two bodies of
/// one URL sharing a tag.
const TAG_BYTES: usize = 16;

impl DocumentService<'_> {
    /// The tag of `GET /api/documents/{id}` as `actor` would get it with `read`, from a point
    /// read of the document through every check of [`Self::get`] (so a refusal or a 404 comes
    /// out exactly as `get` gives it), without stripping, localizing or writing the body.
    /// `None` when references are resolved (depth > 0): then the body decides.
    pub async fn revision_tag(
        &self,
        actor: &Actor,
        id: &str,
        read: &ReadOptions,
    ) -> Result<Option<RevisionTag>> {
        if read.resolution_depth() != 0 {
            return Ok(None);
        }
        let (creator, read) = super::read::preview_reader(actor, id, read.clone())?;
        let actor = creator.as_ref().unwrap_or(actor);
        let found = self.point_read(actor, id, &read).await?;
        Ok(self.tag_of(actor, &found, &read))
    }

    /// The tag of a point read's body; `None` when it resolves references.
    pub(super) fn tag_of(
        &self,
        actor: &Actor,
        found: &PointRead<'_>,
        read: &ReadOptions,
    ) -> Option<RevisionTag> {
        if read.resolution_depth() != 0 {
            return None;
        }
        let record = &found.record;
        let mut inputs = Inputs::new("cms.document-read");
        inputs.text(env!("CARGO_PKG_VERSION"));
        inputs.bytes(&self.inner.schema_fingerprint);
        inputs.text(&record.id);
        inputs.text(&record.organization_id);
        inputs.text(&record.doc_type);
        inputs.number(record.revision);
        inputs.number(record.updated_at);
        inputs.optional_number(record.published_at);
        inputs.optional_text(record.published_hash.as_deref());
        inputs.optional_text(record.updated_by.as_deref());
        inputs.text(match read.perspective {
            super::Perspective::Draft => "draft",
            super::Perspective::Published => "published",
        });
        inputs.optional_text(read.locale.as_deref());
        inputs.text(&found.localization.fingerprint());
        inputs.text(actor.audience().as_str());
        inputs.optional_text(found.gate.field_view(&record.doc_type));
        Some(inputs.finish())
    }
}

/// A digest of the registered schemas, made once at start.
pub(crate) fn schema_fingerprint(schemas: &Schemas) -> [u8; 32] {
    let declared = serde_json::to_vec(schemas.all()).unwrap_or_default();
    let mut digest = Sha256::new();
    digest.update(&declared);
    digest.update(format!("{:?}", schemas.locales()).as_bytes());
    digest.finalize().into()
}

/// The inputs of a tag, each written with its length so that no two sequences of inputs
/// write the same bytes.
struct Inputs(Sha256);

impl Inputs {
    fn new(domain: &str) -> Self {
        let mut inputs = Inputs(Sha256::new());
        inputs.text(domain);
        inputs
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    fn text(&mut self, text: &str) {
        self.bytes(text.as_bytes());
    }

    fn number(&mut self, n: i64) {
        self.bytes(&n.to_le_bytes());
    }

    fn optional_text(&mut self, text: Option<&str>) {
        match text {
            Some(text) => {
                self.0.update([1]);
                self.text(text);
            }
            None => self.0.update([0]),
        }
    }

    fn optional_number(&mut self, n: Option<i64>) {
        match n {
            Some(n) => {
                self.0.update([1]);
                self.number(n);
            }
            None => self.0.update([0]),
        }
    }

    fn finish(self) -> RevisionTag {
        let digest = self.0.finalize();
        RevisionTag(cms_core::hex::encode(&digest[..TAG_BYTES]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_separated() {
        let tag = |parts: &[&str]| {
            let mut inputs = Inputs::new("t");
            for p in parts {
                inputs.text(p);
            }
            inputs.finish()
        };
        assert_ne!(tag(&["ab", "c"]), tag(&["a", "bc"]));
        assert_eq!(tag(&["ab", "c"]), tag(&["ab", "c"]));
        assert_eq!(tag(&["x"]).as_str().len(), 2 * TAG_BYTES);
        let mut none = Inputs::new("t");
        none.optional_text(None);
        let mut empty = Inputs::new("t");
        empty.optional_text(Some(""));
        assert_ne!(none.finish(), empty.finish());
    }
}
