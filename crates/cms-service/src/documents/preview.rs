//! Preview links (CONTRACT.md section 15): a token that lets a frontend read one document's
//! draft as the person who made the link sees it, for `delivery.previewMinutes`.
//!
//! Making and revoking links are writes on the document (`document.update` and its schema
//! rule). Reading with a token is [`DocumentService::get`]: the token's actor holds nothing by
//! itself, and only that read, for that one document, asks it for its creator's grant
//! ([`Actor::preview_reader`]).

use cms_core::schema::{Operation, PreviewValues, Schema};
use cms_core::{CoreCapability, Timestamp, new_id};
use cms_store::preview_tokens::PreviewTokenRecord;
use serde::Serialize;
use serde_json::Value;

use super::DocumentService;
use crate::actor::Actor;
use crate::error::{Error, Result};
use crate::secret::{Purpose, random_token};

/// The prefix of every preview token, so one found in a log or a URL is recognisable.
pub const PREVIEW_TOKEN_PREFIX: &str = "cmsp_";

/// A new preview link: the token is shown this once.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreviewLink {
    /// The secret (`cmsp_...`): send it as `x-cms-preview` or the `preview` query parameter.
    pub token: String,
    pub expires_at: Timestamp,
    /// The type's `previewUrl` filled in, each value URL-encoded; `null` when the type has
    /// none.
    pub url: Option<String>,
}

/// What revoking a document's links did.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevokedPreviews {
    pub document_id: String,
    /// How many links stopped working.
    pub revoked: u64,
}

impl DocumentService<'_> {
    /// POST /api/documents/{id}/preview: a token reading this document's draft. Needs
    /// `document.update` and the type's update rule (making a link is part of editing), and
    /// `document.read`: the link reads as its maker, who must be able to read it.
    pub async fn create_preview(&self, actor: &Actor, id: &str) -> Result<PreviewLink> {
        let org = actor.require(CoreCapability::DocumentUpdate)?.to_string();
        actor.require(CoreCapability::DocumentRead)?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_for(&org).await?;
        let current = self.owned(&mut *tx, &org, id).await?;
        let gate = self.gate(actor);
        gate.check(Operation::Update, &current)?;
        gate.check(Operation::Read, &current)?;
        let token = format!("{PREVIEW_TOKEN_PREFIX}{}", random_token(32));
        let expires_at = now.plus_millis(self.inner.settings.preview_minutes * 60_000);
        tx.insert_preview_token(&PreviewTokenRecord {
            id: new_id(),
            organization_id: org,
            document_id: id.to_string(),
            token_hash: self.inner.secret.hash_hex(Purpose::PreviewToken, &token),
            created_by: actor.user.id.clone(),
            created_at: now.millis(),
            expires_at: expires_at.millis(),
        })
        .await?;
        tx.commit().await?;
        let schema = self
            .inner
            .schemas
            .get(&current.doc_type)
            .ok_or_else(|| Error::Internal(format!("unknown type {}", current.doc_type)))?;
        let url = schema.preview_url.as_ref().map(|template| {
            template.fill(&PreviewValues {
                id,
                slug: self.draft_slug(schema, &current.draft_data.0),
                token: &token,
                doc_type: &current.doc_type,
            })
        });
        Ok(PreviewLink {
            token,
            expires_at,
            url,
        })
    }

    /// DELETE /api/documents/{id}/preview: every link of this document stops working at once.
    pub async fn revoke_previews(&self, actor: &Actor, id: &str) -> Result<RevokedPreviews> {
        let org = actor.require(CoreCapability::DocumentUpdate)?.to_string();
        let mut tx = self.inner.store.write_for(&org).await?;
        let current = self.owned(&mut *tx, &org, id).await?;
        self.gate(actor).check(Operation::Update, &current)?;
        let revoked = tx.delete_preview_tokens(&org, id).await?;
        tx.commit().await?;
        Ok(RevokedPreviews {
            document_id: id.to_string(),
            revoked,
        })
    }

    /// The `current` of the type's first slug field in the draft (in the default locale when
    /// the field is localized).
    fn draft_slug<'d>(&self, schema: &Schema, draft: &'d Value) -> Option<&'d str> {
        let field = schema.first_slug_field()?;
        let mut value = draft.get(&field.name)?;
        if field.localized {
            let locale = self.inner.schemas.locales().default_locale();
            value = value.get(locale.as_str())?;
        }
        value.get("current")?.as_str()
    }
}
