//! `/api/documents`: every endpoint of SPEC.md "Endpoints: Documents". Handlers turn query
//! strings and bodies into service requests; the service decides everything else.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::{Json, Router, routing};
use cms_core::Timestamp;
use cms_service::documents::{
    DraftUpdate, ListRequest, NewDocument, Perspective, ReadOptions, ScheduleAction,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::ok;
use super::params::{Params, bad, bool_param, int_param, param};
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiQuery, Authed};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/documents", routing::get(list).post(create))
        .route("/api/documents/query", routing::post(query))
        .route("/api/documents/by-ids", routing::get(by_ids))
        .route(
            "/api/documents/{id}",
            routing::get(get).put(update).delete(delete),
        )
        .route(
            "/api/documents/{id}/publish",
            routing::post(publish).delete(unpublish),
        )
        .route("/api/documents/{id}/versions", routing::get(versions))
        .route(
            "/api/documents/{id}/versions/{number}",
            routing::get(version),
        )
        .route(
            "/api/documents/{id}/versions/{number}/restore",
            routing::post(restore),
        )
        .route(
            "/api/documents/{id}/back-references",
            routing::get(back_references),
        )
        .route(
            "/api/documents/{id}/schedule",
            routing::get(pending_schedule)
                .post(schedule)
                .delete(cancel_schedule),
        )
}

fn perspective(raw: Option<&str>) -> ApiResult<Perspective> {
    match raw {
        None | Some("") => Ok(Perspective::Draft),
        Some(p) => Perspective::parse(p)
            .ok_or_else(|| bad("`perspective` is `draft` or `published`".into())),
    }
}

fn depth(raw: i64) -> ApiResult<u8> {
    u8::try_from(raw)
        .ok()
        .filter(|d| *d <= 5)
        .ok_or_else(|| bad("`depth` is 0 to 5".into()))
}

fn read_options(params: &[(String, String)]) -> ApiResult<ReadOptions> {
    Ok(ReadOptions {
        perspective: perspective(param(params, "perspective"))?,
        depth: depth(int_param(params, "depth", 0)?)?,
        include_children: bool_param(params, "includeChildOrganizations")?,
    })
}

fn status(raw: Option<&str>) -> ApiResult<Option<bool>> {
    match raw {
        None | Some("") => Ok(None),
        Some("draft") => Ok(Some(false)),
        Some("published") => Ok(Some(true)),
        Some(_) => Err(bad("`status` is `draft` or `published`".into())),
    }
}

async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiQuery(params): Params,
) -> ApiResult<impl IntoResponse> {
    let doc_type = param(&params, "type")
        .filter(|t| !t.is_empty())
        .ok_or_else(|| bad("`type` is required".into()))?;
    let page_size = match param(&params, "pageSize") {
        Some(_) => int_param(&params, "pageSize", 20)?,
        None => int_param(&params, "limit", 20)?,
    };
    let request = ListRequest {
        doc_type: doc_type.to_string(),
        where_: Value::Null,
        sort: param(&params, "sort")
            .filter(|s| !s.is_empty())
            .map(|s| vec![s.to_string()])
            .unwrap_or_default(),
        published: status(param(&params, "status"))?,
        page: int_param(&params, "page", 1)?,
        page_size,
        read: read_options(&params)?,
    };
    let page = state.cms.documents().list(&actor, request).await?;
    Ok(Json(
        json!({ "success": true, "data": page.data, "pagination": page.pagination }),
    ))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct QueryBody {
    #[serde(rename = "type")]
    doc_type: Option<String>,
    #[serde(rename = "where", default)]
    where_: Value,
    limit: Option<i64>,
    page: Option<i64>,
    #[serde(default)]
    sort: Option<SortSpec>,
    depth: Option<i64>,
    perspective: Option<String>,
    #[serde(default)]
    include_child_organizations: Option<bool>,
    // `select` (the full document is returned) and `filterOrganizationIds` (SPEC.md: ignored)
    // are accepted and ignored, like any other key this struct does not name.
}

#[derive(Deserialize)]
#[serde(untagged)]
enum SortSpec {
    One(String),
    Many(Vec<String>),
}

async fn query(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<QueryBody>,
) -> ApiResult<impl IntoResponse> {
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
        page: body.page.unwrap_or(1),
        page_size: body.limit.unwrap_or(20),
        read: ReadOptions {
            perspective: perspective(body.perspective.as_deref())?,
            depth: depth(body.depth.unwrap_or(0))?,
            include_children: body.include_child_organizations.unwrap_or(false),
        },
    };
    let page = state.cms.documents().list(&actor, request).await?;
    Ok(Json(
        json!({ "success": true, "data": page.data, "pagination": page.pagination }),
    ))
}

#[derive(Deserialize)]
struct CreateBody {
    #[serde(rename = "type")]
    doc_type: Option<String>,
    data: Option<Value>,
    #[serde(default)]
    publish: bool,
}

async fn create(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<CreateBody>,
) -> ApiResult<impl IntoResponse> {
    let doc_type = body
        .doc_type
        .filter(|t| !t.is_empty())
        .ok_or_else(|| bad("`type` is required".into()))?;
    let input = NewDocument {
        doc_type,
        data: body.data.unwrap_or(Value::Null),
        publish: body.publish,
    };
    let (document, validation) = state.cms.documents().create(&actor, input).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({ "success": true, "data": document, "validation": validation })),
    ))
}

async fn get(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiQuery(params): Params,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state
        .cms
        .documents()
        .get(&actor, &id, read_options(&params)?)
        .await?))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateBody {
    data: Option<Value>,
    #[serde(default)]
    publish: bool,
    expected_revision: Option<i64>,
}

async fn update(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<UpdateBody>,
) -> ApiResult<impl IntoResponse> {
    let input = DraftUpdate {
        data: body.data.unwrap_or(Value::Null),
        publish: body.publish,
        expected_revision: body.expected_revision,
    };
    Ok(ok(state.cms.documents().update(&actor, &id, input).await?))
}

async fn delete(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    state.cms.documents().delete(&actor, &id).await?;
    Ok(ok(json!({ "id": id, "deleted": true })))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RevisionBody {
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

async fn publish(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<impl IntoResponse> {
    let expected = revision_body(&body)?;
    Ok(ok(state
        .cms
        .documents()
        .publish(&actor, &id, expected)
        .await?))
}

async fn unpublish(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<impl IntoResponse> {
    let expected = revision_body(&body)?;
    Ok(ok(state
        .cms
        .documents()
        .unpublish(&actor, &id, expected)
        .await?))
}

async fn versions(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiQuery(params): Params,
) -> ApiResult<impl IntoResponse> {
    let limit = int_param(&params, "limit", 20)?;
    let offset = int_param(&params, "offset", 0)?;
    let include_children = bool_param(&params, "includeChildOrganizations")?;
    let (data, total) = state
        .cms
        .documents()
        .versions(&actor, &id, limit, offset, include_children)
        .await?;
    Ok(Json(
        json!({ "success": true, "data": data, "total": total }),
    ))
}

fn version_number(raw: &str) -> ApiResult<i64> {
    raw.parse()
        .map_err(|_| bad("the version number must be an integer".into()))
}

async fn version(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path((id, number)): Path<(String, String)>,
    ApiQuery(params): Params,
) -> ApiResult<impl IntoResponse> {
    let include_children = bool_param(&params, "includeChildOrganizations")?;
    Ok(ok(state
        .cms
        .documents()
        .version(&actor, &id, version_number(&number)?, include_children)
        .await?))
}

async fn restore(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path((id, number)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult<impl IntoResponse> {
    let expected = revision_body(&body)?;
    Ok(ok(state
        .cms
        .documents()
        .restore(&actor, &id, version_number(&number)?, expected)
        .await?))
}

async fn by_ids(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiQuery(params): Params,
) -> ApiResult<impl IntoResponse> {
    let ids: Vec<String> = params
        .iter()
        .filter(|(k, _)| k == "ids")
        .flat_map(|(_, v)| v.split(','))
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(String::from)
        .collect();
    Ok(ok(state
        .cms
        .documents()
        .by_ids(&actor, &ids, read_options(&params)?)
        .await?))
}

async fn back_references(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiQuery(params): Params,
) -> ApiResult<impl IntoResponse> {
    let include_children = bool_param(&params, "includeChildOrganizations")?;
    Ok(ok(state
        .cms
        .documents()
        .back_references(&actor, &id, include_children)
        .await?))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ScheduleBody {
    action: Option<String>,
    run_at: Option<String>,
}

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
    Ok(super::created(view))
}

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
