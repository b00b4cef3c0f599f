//! `/api/documents`: every endpoint of SPEC.md "Endpoints: Documents". Handlers turn query
//! strings and bodies into service requests; the service decides everything else.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use cms_core::Timestamp;
use cms_service::documents::{
    DocumentView, DraftUpdate, ListRequest, MAX_DEPTH, NewDocument, Perspective, Publication,
    ReadOptions, ScheduleAction, ScheduleView, Validation, VersionView,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::params::{bad, flag, text};
use super::{Data, Paged, created, ok, paged};
use crate::AppState;
use crate::delivery::validators::{Conditional, IfNoneMatch, NotModified};
use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiQuery, Authed};
use cms_service::Actor;

const TAG: &str = "documents";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(query))
        .routes(routes!(by_ids))
        .routes(routes!(get, update, delete))
        .routes(routes!(publish, unpublish))
        .routes(routes!(versions))
        .routes(routes!(version))
        .routes(routes!(restore))
        .routes(routes!(back_references))
        .routes(routes!(pending_schedule, schedule, cancel_schedule))
}

/// `depth` as the client sent it (the service applies the default), refused when out of range.
fn depth(raw: Option<i64>) -> ApiResult<Option<u8>> {
    raw.map(|raw| {
        u8::try_from(raw)
            .ok()
            .filter(|d| *d <= MAX_DEPTH)
            .ok_or_else(|| bad(format!("`depth` is 0 to {MAX_DEPTH}")))
    })
    .transpose()
}

/// The read as asked; without a `perspective`, the actor's default (`published` for an
/// anonymous `public` reader, `draft` for everyone else).
fn read_options(
    actor: &Actor,
    perspective: Option<Perspective>,
    raw_depth: Option<i64>,
    include_children: Option<bool>,
    locale: Option<String>,
) -> ApiResult<ReadOptions> {
    Ok(ReadOptions {
        perspective: perspective.unwrap_or_else(|| Perspective::default_for(actor)),
        depth: depth(raw_depth)?,
        include_children: include_children.unwrap_or(false),
        locale,
    })
}

/// The `locale` query parameter of writes (the body's `locale` overrides it where the body
/// has one); publish and unpublish, which publish every locale, answer in it.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct LocaleQuery {
    /// The locale of `data`'s localized values: a tag of GET /api/locales, `*` for values
    /// keyed by locale; the default locale when absent (CONTRACT.md section 17).
    #[serde(default, deserialize_with = "text")]
    locale: Option<String>,
}

/// Which documents a list keeps: with a published copy (`published`), without one
/// (`draft`), or with unpublished changes (`changed`: never published, or a draft that
/// differs from the published copy; draft perspective only).
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
enum Status {
    Draft,
    Published,
    Changed,
}

impl From<Status> for Publication {
    fn from(status: Status) -> Self {
        match status {
            Status::Draft => Publication::DraftOnly,
            Status::Published => Publication::Published,
            Status::Changed => Publication::Changed,
        }
    }
}

/// How a read is made: which copy, how deep references resolve, whose documents.
///
/// `ListQuery` and `ByIdsQuery` repeat these three fields rather than `#[serde(flatten)]` them:
/// a flattened struct receives every value as a string and no longer parses `depth` as a
/// number.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ReadQuery {
    /// The copy read: `draft` (default) or `published` (the default, and the only one, for
    /// anonymous readers naming an organization).
    #[param(inline)]
    perspective: Option<Perspective>,
    /// How many levels of references are resolved, 0 (default) to 5.
    #[param(minimum = 0, maximum = 5)]
    depth: Option<i64>,
    /// Include the documents of child organizations.
    #[serde(default, deserialize_with = "flag")]
    include_child_organizations: Option<bool>,
    /// The locale localized fields are read in (with fallbacks), `*` for every locale keyed
    /// by tag; the default locale when absent. `where` and `sort` compare that locale's values.
    #[serde(default, deserialize_with = "text")]
    locale: Option<String>,
}

impl ReadQuery {
    fn options(&self, actor: &Actor) -> ApiResult<ReadOptions> {
        read_options(
            actor,
            self.perspective,
            self.depth,
            self.include_child_organizations,
            self.locale.clone(),
        )
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ListQuery {
    /// The document type.
    #[serde(rename = "type", default, deserialize_with = "text")]
    #[param(required = true)]
    doc_type: Option<String>,
    /// The page, from 1.
    #[param(minimum = 1)]
    page: Option<i64>,
    /// Documents per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    page_size: Option<i64>,
    /// The same as `pageSize`, which wins when both are given.
    #[param(minimum = 1, maximum = 100)]
    limit: Option<i64>,
    /// A field to sort by, `-` first for descending; ties break by id.
    #[serde(default, deserialize_with = "text")]
    sort: Option<String>,
    /// Only documents with (`published`) or without (`draft`) a published copy, or with
    /// unpublished changes (`changed`: no published copy, or a draft that differs from it;
    /// 400 with the published perspective, which may not compare drafts).
    #[param(inline)]
    status: Option<Status>,
    /// The copy read: `draft` (default) or `published` (the default, and the only one, for
    /// anonymous readers naming an organization).
    #[param(inline)]
    perspective: Option<Perspective>,
    /// How many levels of references are resolved, 0 (default) to 5.
    #[param(minimum = 0, maximum = 5)]
    depth: Option<i64>,
    /// Include the documents of child organizations.
    #[serde(default, deserialize_with = "flag")]
    include_child_organizations: Option<bool>,
    /// The locale localized fields are read in (with fallbacks), `*` for every locale keyed
    /// by tag; the default locale when absent. `where` and `sort` compare that locale's values.
    #[serde(default, deserialize_with = "text")]
    locale: Option<String>,
    /// Full-text search over the type's searchable fields the caller may read: words (all must
    /// match), `"quoted phrases"`, `-word` / `-"phrase"` to exclude. Each result then carries
    /// `_meta.score`; without `sort` results come by relevance. Empty, only exclusions, or a
    /// type without searchable fields: 400.
    #[serde(default, deserialize_with = "kept_text")]
    search: Option<String>,
}

/// A text parameter kept even when empty (`search=` is a search, and an empty one a 400).
fn kept_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    <String as serde::Deserialize>::deserialize(d).map(Some)
}

/// Lists the documents of one type, a page at a time.
#[utoipa::path(get, path = "/api/documents", tag = TAG, params(ListQuery, IfNoneMatch),
    responses((status = 200, description = "A page of documents", body = Paged<DocumentView>, headers(("ETag" = String, description = "Strong entity tag of the answer"), ("Cache-Control" = String, description = "`private, no-cache` for credentials"))), NotModified))]
async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
    conditional: Conditional,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Response> {
    let doc_type = q.doc_type.ok_or_else(|| bad("`type` is required".into()))?;
    let request = ListRequest {
        doc_type,
        where_: Value::Null,
        sort: q.sort.into_iter().collect(),
        published: q.status.map(Publication::from),
        page: q.page,
        page_size: q.page_size.or(q.limit),
        read: read_options(
            &actor,
            q.perspective,
            q.depth,
            q.include_child_organizations,
            q.locale,
        )?,
        search: q.search,
    };
    let page = state.cms.documents().list(&actor, request).await?;
    Ok(conditional.respond(&paged(page.data, page.pagination).0))
}

/// A query: the list's options plus a `where` filter. `select` (the full document is returned)
/// and `filterOrganizationIds` (SPEC.md: ignored) are accepted and ignored.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct QueryBody {
    /// The document type.
    #[serde(rename = "type")]
    #[schema(value_type = String, required = true)]
    doc_type: Option<String>,
    /// The `where` filter (SPEC.md "Query language").
    #[serde(rename = "where", default)]
    #[schema(value_type = Option<Object>)]
    where_: Value,
    /// Documents per page, 1 to 100 (default 20).
    #[schema(minimum = 1, maximum = 100)]
    limit: Option<i64>,
    /// The page, from 1.
    #[schema(minimum = 1)]
    page: Option<i64>,
    #[serde(default)]
    sort: Option<SortSpec>,
    /// How many levels of references are resolved, 0 (default) to 5.
    #[schema(minimum = 0, maximum = 5)]
    depth: Option<i64>,
    perspective: Option<Perspective>,
    #[serde(default)]
    include_child_organizations: Option<bool>,
    /// The locale localized fields are read and compared in; `*` for every locale.
    locale: Option<String>,
    /// Full-text search over the type's searchable fields the caller may read: words (all must
    /// match), `"quoted phrases"`, `-word` / `-"phrase"` to exclude. Each result then carries
    /// `_meta.score`; without `sort` results come by relevance. Empty, only exclusions, or a
    /// type without searchable fields: 400.
    search: Option<String>,
}

/// One sort key or several; `-` first for descending.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
enum SortSpec {
    One(String),
    Many(Vec<String>),
}

/// Lists the documents of one type that match a `where` filter.
#[utoipa::path(post, path = "/api/documents/query", tag = TAG, request_body = QueryBody,
    responses((status = 200, description = "A page of matching documents", body = Paged<DocumentView>)))]
async fn query(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<QueryBody>,
) -> ApiResult<Json<Paged<DocumentView>>> {
    let doc_type = body
        .doc_type
        .filter(|t| !t.is_empty())
        .ok_or_else(|| bad("`type` is required".into()))?;
    let request = ListRequest {
        doc_type,
        where_: body.where_,
        sort: match body.sort {
            None => Vec::new(),
            Some(SortSpec::One(s)) => vec![s],
            Some(SortSpec::Many(v)) => v,
        },
        published: None,
        page: body.page,
        page_size: body.limit,
        read: read_options(
            &actor,
            body.perspective,
            body.depth,
            body.include_child_organizations,
            body.locale,
        )?,
        search: body.search,
    };
    let page = state.cms.documents().list(&actor, request).await?;
    Ok(paged(page.data, page.pagination))
}

/// A new document. Its `data` is validated against the type's schema (`<Type>Data`).
#[derive(Debug, Deserialize, ToSchema)]
struct CreateBody {
    /// The document type.
    #[serde(rename = "type")]
    #[schema(value_type = String, required = true)]
    doc_type: Option<String>,
    /// The draft data.
    #[schema(value_type = Option<Object>)]
    data: Option<Value>,
    /// Publish at once; the draft must then be valid.
    #[serde(default)]
    publish: bool,
    /// The locale of `data`'s localized values (a tag, or `*` for values keyed by locale);
    /// overrides the `locale` query parameter.
    locale: Option<String>,
}

/// A created document and what would block publishing it.
#[derive(Debug, Serialize, ToSchema)]
struct Created {
    /// Always `true`.
    success: bool,
    data: DocumentView,
    validation: Validation,
}

/// Creates a document (and publishes it when `publish` is true).
#[utoipa::path(post, path = "/api/documents", tag = TAG, request_body = CreateBody, params(LocaleQuery),
    responses((status = 201, description = "The new document", body = Created)))]
async fn create(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiQuery(q): ApiQuery<LocaleQuery>,
    ApiJson(body): ApiJson<CreateBody>,
) -> ApiResult<(StatusCode, Json<Created>)> {
    let doc_type = body
        .doc_type
        .filter(|t| !t.is_empty())
        .ok_or_else(|| bad("`type` is required".into()))?;
    let input = NewDocument {
        doc_type,
        data: body.data.unwrap_or(Value::Null),
        publish: body.publish,
        locale: body.locale.or(q.locale),
    };
    let (document, validation) = state.cms.documents().create(&actor, input).await?;
    Ok((
        StatusCode::CREATED,
        Json(Created {
            success: true,
            data: document,
            validation,
        }),
    ))
}

/// Reads one document. With a preview link's token and no other credentials, reads that one
/// document's draft as the link's maker sees it (CONTRACT.md section 15).
/// With no references resolved, the tag is decided from the stored document before any body
/// is built (`RevisionTag`), so a current client's 304 costs one point read.
#[utoipa::path(get, path = "/api/documents/{id}", tag = TAG,
    params(("id" = String, Path, description = "The document id"), ReadQuery, IfNoneMatch,
        ("x-cms-preview" = Option<String>, Header, description = "A preview link's token (POST /api/documents/{id}/preview): reads this document's draft without other credentials; answers carry `Cache-Control: private, no-store`"),
        ("preview" = Option<String>, Query, description = "The preview token as a query parameter, when a header cannot be sent")),
    responses((status = 200, description = "The document", body = Data<DocumentView>, headers(("ETag" = String, description = "Strong entity tag of the answer"), ("Cache-Control" = String, description = "`private, no-cache` for credentials; `private, no-store` for a preview token"))), NotModified))]
async fn get(
    State(state): State<AppState>,
    Authed(actor): Authed,
    conditional: Conditional,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<ReadQuery>,
) -> ApiResult<Response> {
    let documents = state.cms.documents();
    let options = q.options(&actor)?;
    if conditional.is_conditional()
        && let Some(tag) = documents.revision_tag(&actor, &id, &options).await?
        && let Some(not_modified) = conditional.not_modified(tag.as_str())
    {
        return Ok(not_modified);
    }
    Ok(match documents.get_tagged(&actor, &id, options).await? {
        (document, Some(tag)) => conditional.respond_tagged(tag.as_str(), &ok(document).0),
        (document, None) => conditional.respond(&ok(document).0),
    })
}

/// A draft save.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct UpdateBody {
    /// The whole new draft data.
    #[schema(value_type = Option<Object>)]
    data: Option<Value>,
    /// Publish the saved draft at once.
    #[serde(default)]
    publish: bool,
    /// The revision the client last read: 409 when the document has moved on.
    expected_revision: Option<i64>,
    /// The locale of `data`'s localized values: a tag (the other locales' values are kept),
    /// or `*` (values keyed by locale, taken whole); overrides the `locale` query parameter.
    locale: Option<String>,
}

/// A saved draft and what would block publishing it.
#[derive(Debug, Serialize, ToSchema)]
struct Saved {
    /// Always `true`.
    success: bool,
    data: DocumentView,
    validation: Validation,
}

/// Saves the draft (and publishes it when `publish` is true).
#[utoipa::path(put, path = "/api/documents/{id}", tag = TAG, request_body = UpdateBody,
    params(("id" = String, Path, description = "The document id"), LocaleQuery),
    responses(
        (status = 200, description = "The saved document", body = Saved),
        (status = 409, description = "`expectedRevision` is not the current revision", body = crate::error::ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<LocaleQuery>,
    ApiJson(body): ApiJson<UpdateBody>,
) -> ApiResult<Json<Saved>> {
    let input = DraftUpdate {
        data: body.data.unwrap_or(Value::Null),
        publish: body.publish,
        expected_revision: body.expected_revision,
        locale: body.locale.or(q.locale),
    };
    let (document, validation) = state.cms.documents().update(&actor, &id, input).await?;
    Ok(Json(Saved {
        success: true,
        data: document,
        validation,
    }))
}

/// What a delete reports.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Deleted {
    pub(crate) id: String,
    /// Always `true`.
    pub(crate) deleted: bool,
}

/// Deletes a document with its versions. Singletons cannot be deleted (400), nor a document
/// other documents of the organization still reference (409 with `referencedBy`: remove the
/// references first).
#[utoipa::path(delete, path = "/api/documents/{id}", tag = TAG,
    params(("id" = String, Path, description = "The document id")),
    responses(
        (status = 200, description = "The document is gone", body = Data<Deleted>),
        (status = 409, description = "Other documents still reference it; nothing was deleted", body = crate::error::ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Data<Deleted>>> {
    state.cms.documents().delete(&actor, &id).await?;
    Ok(ok(Deleted { id, deleted: true }))
}

/// The optional body of publish, unpublish and restore.
#[derive(Debug, Deserialize, Default, ToSchema)]
#[serde(rename_all = "camelCase")]
struct RevisionBody {
    /// The revision the client last read: 409 when the document has moved on.
    expected_revision: Option<i64>,
}

/// An optional JSON body: empty means "no options".
fn revision_body(bytes: &Bytes) -> ApiResult<Option<i64>> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let body: RevisionBody =
        serde_json::from_slice(bytes).map_err(|e| bad(format!("invalid JSON body: {e}")))?;
    Ok(body.expected_revision)
}

/// Publishes the draft: it must be valid (400 with `issues` otherwise).
#[utoipa::path(post, path = "/api/documents/{id}/publish", tag = TAG,
    request_body = Option<RevisionBody>,
    params(("id" = String, Path, description = "The document id"), LocaleQuery),
    responses(
        (status = 200, description = "The published document", body = Data<DocumentView>),
        (status = 409, description = "`expectedRevision` is not the current revision", body = crate::error::ErrorBody),
    ))]
async fn publish(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<LocaleQuery>,
    body: Bytes,
) -> ApiResult<Json<Data<DocumentView>>> {
    let expected = revision_body(&body)?;
    Ok(ok(state
        .cms
        .documents()
        .publish_in(&actor, &id, expected, q.locale.as_deref())
        .await?))
}

/// Removes the published copy; the draft stays.
#[utoipa::path(delete, path = "/api/documents/{id}/publish", tag = TAG,
    request_body = Option<RevisionBody>,
    params(("id" = String, Path, description = "The document id"), LocaleQuery),
    responses(
        (status = 200, description = "The document, draft only", body = Data<DocumentView>),
        (status = 409, description = "`expectedRevision` is not the current revision", body = crate::error::ErrorBody),
    ))]
async fn unpublish(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<LocaleQuery>,
    body: Bytes,
) -> ApiResult<Json<Data<DocumentView>>> {
    let expected = revision_body(&body)?;
    Ok(ok(state
        .cms
        .documents()
        .unpublish_in(&actor, &id, expected, q.locale.as_deref())
        .await?))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct VersionsQuery {
    /// Versions per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    limit: Option<i64>,
    /// Versions skipped, newest first.
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Include the documents of child organizations.
    #[serde(default, deserialize_with = "flag")]
    include_child_organizations: Option<bool>,
}

/// A slice of a document's versions with their total.
#[derive(Debug, Serialize, ToSchema)]
struct Versions {
    /// Always `true`.
    success: bool,
    data: Vec<VersionView>,
    total: i64,
}

/// A document's versions, newest first.
#[utoipa::path(get, path = "/api/documents/{id}/versions", tag = TAG,
    params(("id" = String, Path, description = "The document id"), VersionsQuery),
    responses((status = 200, description = "Versions, newest first", body = Versions)))]
async fn versions(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<VersionsQuery>,
) -> ApiResult<Json<Versions>> {
    let (data, total) = state
        .cms
        .documents()
        .versions(
            &actor,
            &id,
            q.limit,
            q.offset,
            q.include_child_organizations.unwrap_or(false),
        )
        .await?;
    Ok(Json(Versions {
        success: true,
        data,
        total,
    }))
}

fn version_number(raw: &str) -> ApiResult<i64> {
    raw.parse()
        .map_err(|_| bad("the version number must be an integer".into()))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ChildrenQuery {
    /// Include the documents of child organizations.
    #[serde(default, deserialize_with = "flag")]
    include_child_organizations: Option<bool>,
}

/// One version of a document.
#[utoipa::path(get, path = "/api/documents/{id}/versions/{number}", tag = TAG,
    params(
        ("id" = String, Path, description = "The document id"),
        ("number" = i64, Path, description = "The version number"),
        ChildrenQuery,
    ),
    responses((status = 200, description = "The version", body = Data<VersionView>)))]
async fn version(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path((id, number)): Path<(String, String)>,
    ApiQuery(q): ApiQuery<ChildrenQuery>,
) -> ApiResult<Json<Data<VersionView>>> {
    let include_children = q.include_child_organizations.unwrap_or(false);
    Ok(ok(state
        .cms
        .documents()
        .version(&actor, &id, version_number(&number)?, include_children)
        .await?))
}

/// Writes an old version's data as a new draft; the published copy is untouched.
#[utoipa::path(post, path = "/api/documents/{id}/versions/{number}/restore", tag = TAG,
    request_body = Option<RevisionBody>,
    params(
        ("id" = String, Path, description = "The document id"),
        ("number" = i64, Path, description = "The version number"),
    ),
    responses(
        (status = 200, description = "The document with the restored draft", body = Data<DocumentView>),
        (status = 409, description = "`expectedRevision` is not the current revision", body = crate::error::ErrorBody),
    ))]
async fn restore(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path((id, number)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult<Json<Data<DocumentView>>> {
    let expected = revision_body(&body)?;
    Ok(ok(state
        .cms
        .documents()
        .restore(&actor, &id, version_number(&number)?, expected)
        .await?))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ByIdsQuery {
    /// Document ids, comma-separated, the parameter repeatable; at most 100.
    #[serde(default)]
    ids: Vec<String>,
    /// The copy read: `draft` (default) or `published` (the default, and the only one, for
    /// anonymous readers naming an organization).
    #[param(inline)]
    perspective: Option<Perspective>,
    /// How many levels of references are resolved, 0 (default) to 5.
    #[param(minimum = 0, maximum = 5)]
    depth: Option<i64>,
    /// Include the documents of child organizations.
    #[serde(default, deserialize_with = "flag")]
    include_child_organizations: Option<bool>,
    /// The locale localized fields are read in (with fallbacks), `*` for every locale keyed
    /// by tag; the default locale when absent. `where` and `sort` compare that locale's values.
    #[serde(default, deserialize_with = "text")]
    locale: Option<String>,
}

/// Documents by id, in request order; missing or unreadable ids are left out.
#[utoipa::path(get, path = "/api/documents/by-ids", tag = TAG, params(ByIdsQuery, IfNoneMatch),
    responses((status = 200, description = "The documents found", body = Data<Vec<DocumentView>>, headers(("ETag" = String, description = "Strong entity tag of the answer"), ("Cache-Control" = String, description = "`private, no-cache` for credentials"))), NotModified))]
async fn by_ids(
    State(state): State<AppState>,
    Authed(actor): Authed,
    conditional: Conditional,
    ApiQuery(q): ApiQuery<ByIdsQuery>,
) -> ApiResult<Response> {
    let ids: Vec<String> = q
        .ids
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(String::from)
        .collect();
    let read = read_options(
        &actor,
        q.perspective,
        q.depth,
        q.include_child_organizations,
        q.locale,
    )?;
    let documents = state.cms.documents().by_ids(&actor, &ids, read).await?;
    Ok(conditional.respond(&ok(documents).0))
}

/// The documents whose draft or published copy references this one.
#[utoipa::path(get, path = "/api/documents/{id}/back-references", tag = TAG,
    params(("id" = String, Path, description = "The document id"), ChildrenQuery, IfNoneMatch),
    responses((status = 200, description = "The referencing documents", body = Data<Vec<DocumentView>>, headers(("ETag" = String, description = "Strong entity tag of the answer"), ("Cache-Control" = String, description = "`private, no-cache` for credentials"))), NotModified))]
async fn back_references(
    State(state): State<AppState>,
    Authed(actor): Authed,
    conditional: Conditional,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<ChildrenQuery>,
) -> ApiResult<Response> {
    let include_children = q.include_child_organizations.unwrap_or(false);
    let referrers = state
        .cms
        .documents()
        .back_references(&actor, &id, include_children)
        .await?;
    Ok(conditional.respond(&ok(referrers).0))
}

/// A scheduled publish or unpublish.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct ScheduleBody {
    /// `publish` or `unpublish`.
    #[schema(value_type = ScheduleAction, required = true)]
    action: Option<String>,
    /// When, as an ISO 8601 date and time.
    #[schema(value_type = String, format = DateTime, required = true)]
    run_at: Option<String>,
}

/// Schedules a publish or unpublish, replacing a pending one.
#[utoipa::path(post, path = "/api/documents/{id}/schedule", tag = TAG, request_body = ScheduleBody,
    params(("id" = String, Path, description = "The document id")),
    responses((status = 201, description = "The pending schedule", body = Data<ScheduleView>)))]
async fn schedule(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ScheduleBody>,
) -> ApiResult<impl IntoResponse> {
    let action = body
        .action
        .as_deref()
        .and_then(ScheduleAction::parse)
        .ok_or_else(|| bad("`action` is `publish` or `unpublish`".into()))?;
    let run_at = body
        .run_at
        .as_deref()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .ok_or_else(|| bad("`runAt` is an ISO 8601 date and time".into()))?;
    let run_at = Timestamp::from(run_at.with_timezone(&chrono::Utc));
    let view = state
        .cms
        .documents()
        .schedule(&actor, &id, action, run_at)
        .await?;
    Ok(created(view))
}

/// The pending schedule of a document, or null.
#[utoipa::path(get, path = "/api/documents/{id}/schedule", tag = TAG,
    params(("id" = String, Path, description = "The document id")),
    responses((status = 200, description = "The pending schedule, or null", body = Data<Option<ScheduleView>>)))]
async fn pending_schedule(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state
        .cms
        .documents()
        .pending_schedule(&actor, &id)
        .await?))
}

/// Cancels the pending schedule.
#[utoipa::path(delete, path = "/api/documents/{id}/schedule", tag = TAG,
    params(("id" = String, Path, description = "The document id")),
    responses((status = 200, description = "The cancelled schedule", body = Data<ScheduleView>)))]
async fn cancel_schedule(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state
        .cms
        .documents()
        .cancel_schedule(&actor, &id)
        .await?))
}
