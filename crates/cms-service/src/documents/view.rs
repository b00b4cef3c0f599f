//! Documents and versions as every door shows them.

use cms_core::Timestamp;
use cms_store::documents::DocumentRecord;
use cms_store::versions::VersionRecord;
use serde::Serialize;
use serde_json::Value;

use crate::actor::Actor;

/// Which copy of a document a read evaluates: `where`, `sort` and `depth` apply to it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Perspective {
    #[default]
    Draft,
    Published,
}

impl Perspective {
    /// The perspective a read takes when the request names none: `published` for an anonymous
    /// `public` reader (the only one it may read, CONTRACT.md section 15), `draft` for everyone
    /// else (SPEC.md).
    pub fn default_for(actor: &Actor) -> Perspective {
        if actor.is_public() {
            Perspective::Published
        } else {
            Perspective::Draft
        }
    }

    pub fn parse(s: &str) -> Option<Perspective> {
        match s {
            "draft" => Some(Perspective::Draft),
            "published" => Some(Perspective::Published),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    pub revision: i64,
    /// The locale the document is shown in (`*`: every locale); present when its type has
    /// localized fields or the request named a locale.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// Field path → the locale actually served, for the values of the copy read (draft, or
    /// published with `perspective=published`) taken from a fallback locale.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<std::collections::BTreeMap<String, String>>)]
    pub fallback_locales: Option<cms_core::schema::FallbackLocales>,
    /// The relevance of the document to the list's `search` (higher is more relevant); present
    /// only when the request gave a `search`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

/// A document. `publishedData` and `publishedHash` are absent (not null) while draft-only.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocumentView {
    pub id: String,
    #[serde(rename = "type")]
    pub doc_type: String,
    pub organization_id: String,
    pub singleton: bool,
    /// The draft copy, shaped by the type's schema (`<Type>Data` in the components). Absent
    /// only in answers to anonymous readers (the `public` role), who see published copies only.
    #[serde(skip_serializing_if = "Value::is_null")]
    #[schema(value_type = Object)]
    pub draft_data: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub published_data: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_hash: Option<String>,
    pub published_at: Option<Timestamp>,
    #[serde(rename = "_meta")]
    pub meta: Meta,
    pub created_by: Option<String>,
    pub updated_by: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl From<DocumentRecord> for DocumentView {
    fn from(r: DocumentRecord) -> Self {
        DocumentView {
            id: r.id,
            doc_type: r.doc_type,
            organization_id: r.organization_id,
            singleton: r.singleton,
            draft_data: r.draft_data.0,
            published_data: r.published_data.map(|d| d.0),
            published_hash: r.published_hash,
            published_at: r.published_at.map(Into::into),
            meta: Meta {
                revision: r.revision,
                locale: None,
                fallback_locales: None,
                score: None,
            },
            created_by: r.created_by,
            updated_by: r.updated_by,
            created_at: r.created_at.into(),
            updated_at: r.updated_at.into(),
        }
    }
}

impl DocumentView {
    /// Leaves the draft out of the answer (the key is then absent): for anonymous readers.
    pub(crate) fn withhold_draft(&mut self) {
        self.draft_data = Value::Null;
    }

    /// The copy a perspective reads.
    pub fn data(&self, perspective: Perspective) -> Option<&Value> {
        match perspective {
            Perspective::Draft => Some(&self.draft_data),
            Perspective::Published => self.published_data.as_ref(),
        }
    }

    pub fn data_mut(&mut self, perspective: Perspective) -> Option<&mut Value> {
        match perspective {
            Perspective::Draft => Some(&mut self.draft_data),
            Perspective::Published => self.published_data.as_mut(),
        }
    }
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionView {
    pub id: String,
    pub document_id: String,
    pub version_number: i64,
    /// `draft` or `publish`.
    pub event_type: String,
    #[schema(value_type = Object)]
    pub data: Value,
    pub created_by: Option<String>,
    pub created_by_name: Option<String>,
    pub created_at: Timestamp,
}

impl From<VersionRecord> for VersionView {
    fn from(r: VersionRecord) -> Self {
        VersionView {
            id: r.id,
            document_id: r.document_id,
            version_number: r.version_number,
            event_type: r.event_type,
            data: r.data.0,
            created_by: r.created_by,
            created_by_name: r.created_by_name,
            created_at: r.created_at.into(),
        }
    }
}

/// What would block publishing a draft, reported on every save.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Validation {
    pub is_valid: bool,
    pub errors: Vec<cms_core::Issue>,
}
