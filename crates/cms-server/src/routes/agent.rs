//! The AI assistant (SPEC.md "AI assistant", CONTRACT.md section 8): the chat turn as
//! server-sent events, and the change sets with their undo.

use std::convert::Infallible;

use axum::Json;
use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use cms_agent::{ChatRequest, Message, OpenDocument, StreamEvent};
use cms_service::change_sets::{ChangeSet, Undone};
use futures_util::Stream;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::params::{page, text};
use super::{Data, Paged, ok, paged};
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiQuery, Authed};

const TAG: &str = "agent";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(chat))
        .routes(routes!(change_sets))
        .routes(routes!(change_set))
        .routes(routes!(undo))
}

/// One turn: the running message list, and the document open in the editor, if any.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatBody {
    /// OpenAI-style messages (`role`, `content`, `tool_calls`, `tool_call_id`): the list the
    /// previous `done` event returned, plus the new user message or the workspace results.
    pub messages: Vec<Message>,
    pub document: Option<OpenDocument>,
}

/// One turn of the assistant as server-sent events: `text` `{ delta }`, `toolCall` `{ id,
/// name, arguments }`, `toolResult` `{ id, name, ok, result }`, `usage` `{ inputTokens,
/// outputTokens }`, `error` `{ message }`, and last `done` `{ finishReason, messages,
/// pendingToolCalls? }`. Each tool runs as the caller and is offered only when the caller may
/// use it. 404 without a model backend (`agent.baseUrl`), 501 without a model (`agent.model`).
#[utoipa::path(post, path = "/api/agent/chat", tag = TAG, request_body = ChatBody,
    responses(
        (status = 200, description = "The turn's events", content_type = "text/event-stream", body = String),
        (status = 400, description = "A malformed message list"),
        (status = 404, description = "No model backend, or the open document is not readable"),
        (status = 501, description = "A backend without a model id"),
    ))]
async fn chat(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<ChatBody>,
) -> ApiResult<Response> {
    let events = state
        .agent()
        .chat(
            &actor,
            ChatRequest {
                messages: body.messages,
                document: body.document,
            },
        )
        .await?;
    Ok(Sse::new(server_sent(events))
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// The turn's events as they come; the stream ends after `done`. Dropping it (the client went
/// away) drops the receiver, which stops the turn.
fn server_sent(
    events: tokio::sync::mpsc::UnboundedReceiver<StreamEvent>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    futures_util::stream::unfold(events, |mut events| async move {
        let event = events.recv().await?;
        let sse = Event::default()
            .event(event.kind())
            .json_data(&event)
            .unwrap_or_else(|_| Event::default().event("error").data("{}"));
        Some((Ok(sse), events))
    })
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct PageQuery {
    /// The page, from 1.
    #[serde(default, deserialize_with = "text")]
    #[param(value_type = Option<i64>, minimum = 1)]
    page: Option<String>,
    /// Change sets per page, 1 to 100 (default 20).
    #[serde(default, deserialize_with = "text")]
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100)]
    page_size: Option<String>,
}

/// The organization's assistant turns that changed something, newest first, with their
/// operations; needs `document.read`.
#[utoipa::path(get, path = "/api/agent/change-sets", tag = TAG, params(PageQuery),
    responses((status = 200, description = "A page of change sets", body = Paged<ChangeSet>)))]
async fn change_sets(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> ApiResult<Json<Paged<ChangeSet>>> {
    let (page, page_size) = page(query.page.as_deref(), query.page_size.as_deref())?;
    let list = state
        .cms
        .change_sets()
        .list(&actor, page, page_size)
        .await?;
    Ok(paged(list.data, list.pagination))
}

/// One change set; needs `document.read`.
#[utoipa::path(get, path = "/api/agent/change-sets/{id}", tag = TAG,
    params(("id" = String, Path, description = "The change set's id")),
    responses((status = 200, description = "The change set", body = Data<ChangeSet>)))]
async fn change_set(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Data<ChangeSet>>> {
    Ok(ok(state.cms.change_sets().get(&actor, &id).await?))
}

/// Restores each document the turn changed to its version before the turn, newest change
/// first: documents created in the turn are skipped, documents changed since are reported as
/// conflicts and left alone. Needs `document.update`; 409 when undone already.
#[utoipa::path(post, path = "/api/agent/change-sets/{id}/undo", tag = TAG,
    params(("id" = String, Path, description = "The change set's id")),
    responses(
        (status = 200, description = "What was restored, skipped and left alone", body = Data<Undone>),
        (status = 409, description = "The change set was undone already"),
    ))]
async fn undo(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Data<Undone>>> {
    Ok(ok(state.cms.change_sets().undo(&actor, &id).await?))
}
