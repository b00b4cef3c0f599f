//! The live event stream (CONTRACT.md section 16) as server-sent events: the service's stream
//! of the caller's organization, one SSE event per log event, with a comment line while idle.

use std::convert::Infallible;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use cms_service::jobs::{EventStream, EventStreamRequest};
use futures_util::Stream;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::params::{bad, text};
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::{ApiQuery, Authed};

const TAG: &str = "jobs";

/// The header a reconnecting `EventSource` sends with the last id it received.
const LAST_EVENT_ID: &str = "last-event-id";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(stream))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct StreamQuery {
    /// Only events of these types, comma-separated (`document.published,asset.created`); each
    /// must be built in or declared (400 otherwise). Every type when absent.
    #[serde(default, deserialize_with = "text")]
    types: Option<String>,
    /// An event id: the events after it are replayed from the log first. `Last-Event-ID`
    /// wins when both are sent (a reconnecting client repeats the URL it started with).
    #[serde(default, deserialize_with = "text")]
    after: Option<String>,
}

/// New events of the active organization as server-sent events, each within a second of its
/// commit on any instance: `id: <event id>`, `event: <type>`, `data: <the event as GET
/// /api/events lists it>`. With `Last-Event-ID` (or `after`) the events after that id are
/// replayed first, then the new ones follow without a gap or a repeat. A comment line is sent
/// every 15 seconds while nothing happens. Events about a document type the caller may not read
/// are left out, and `publishedHash` where it may not read every field. Needs `document.read`;
/// an organization holds at most `events.maxStreams` open streams on one instance (429 with
/// `Retry-After` past it). The stream ends when the server shuts down, or when its client reads
/// too slowly to keep up: reconnect with `Last-Event-ID`.
#[utoipa::path(get, path = "/api/events/stream", tag = TAG,
    params(StreamQuery,
        ("Last-Event-ID" = Option<String>, Header, nullable = false,
            description = "The id of the last event received: replay what came after it first")),
    responses(
        (status = 200, description = "The event stream", content_type = "text/event-stream", body = String),
        (status = 400, description = "An unknown event type, or an `after` that is no event id", body = crate::error::ErrorBody),
        (status = 429, description = "The organization holds `events.maxStreams` open streams on this instance", body = crate::error::ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait before trying again"))),
        (status = 503, description = "The server is shutting down", body = crate::error::ErrorBody),
    ))]
async fn stream(
    State(state): State<AppState>,
    Authed(actor): Authed,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<StreamQuery>,
) -> ApiResult<Response> {
    let request = EventStreamRequest {
        after: last_event_id(&headers)?.or(query.after),
        types: types(query.types.as_deref())?,
    };
    let events = state.cms.jobs().event_stream(&actor, request).await?;
    let keep_alive = KeepAlive::new().interval(state.cms.settings().events.keep_alive);
    Ok(Sse::new(server_sent(events))
        .keep_alive(keep_alive)
        .into_response())
}

/// `Last-Event-ID`, when sent and not empty.
fn last_event_id(headers: &HeaderMap) -> ApiResult<Option<String>> {
    let Some(value) = headers.get(LAST_EVENT_ID) else {
        return Ok(None);
    };
    let value = value
        .to_str()
        .map_err(|_| bad("`Last-Event-ID` is an event id".into()))?
        .trim();
    Ok((!value.is_empty()).then(|| value.to_string()))
}

/// `types=a,b` as a list; an empty item is refused.
fn types(raw: Option<&str>) -> ApiResult<Vec<String>> {
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    raw.split(',')
        .map(|t| match t.trim() {
            "" => Err(bad("`types` lists event types separated by commas".into())),
            t => Ok(t.to_string()),
        })
        .collect()
}

/// The service's stream as SSE events. It ends when the service's stream does; an error while
/// reading the log ends it too (logged), and the client reconnects with `Last-Event-ID`.
fn server_sent(events: EventStream) -> impl Stream<Item = Result<Event, Infallible>> {
    futures_util::stream::unfold(events, |mut events| async move {
        let event = match events.next().await {
            Ok(Some(event)) => event,
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!(error = %e, "an event stream ended on an error");
                return None;
            }
        };
        let sse = Event::default()
            .id(line(&event.id))
            .event(line(&event.event_type))
            .json_data(&event)
            .unwrap_or_else(|_| Event::default().comment("an event could not be written"));
        Some((Ok(sse), events))
    })
}

/// A value for an SSE field line: ids and types never hold line breaks, and the field writer
/// would panic on one, so one is replaced rather than trusted away.
fn line(value: &str) -> String {
    value.replace(['\r', '\n', '\0'], " ")
}
