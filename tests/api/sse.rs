//! A reader of server-sent events for the tests of the event stream: over the in-process
//! router's streamed body or a real connection's, with every wait bounded (a missing event
//! fails the test instead of hanging it).

use std::pin::Pin;
use std::time::Duration;

use axum::body::Bytes;
use futures_util::{Stream, StreamExt};
use serde_json::Value;

/// How long a test waits for the next thing on a stream before it fails.
pub const WAIT: Duration = Duration::from_secs(15);

/// One item of an event stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Sse {
    Event {
        id: String,
        event: String,
        data: Value,
    },
    /// A comment line (`: ...`), the keep-alive.
    Comment(String),
}

type Chunks = Pin<Box<dyn Stream<Item = Result<Bytes, String>> + Send>>;

pub struct SseReader {
    chunks: Chunks,
    buffer: String,
}

impl SseReader {
    /// The body of an in-process answer (`Router::oneshot`).
    pub fn of_body(body: axum::body::Body) -> SseReader {
        SseReader::new(
            body.into_data_stream()
                .map(|c| c.map_err(|e| e.to_string())),
        )
    }

    /// The body of an answer over a connection.
    pub fn of_response(response: reqwest::Response) -> SseReader {
        SseReader::new(
            response
                .bytes_stream()
                .map(|c| c.map_err(|e| e.to_string())),
        )
    }

    fn new(chunks: impl Stream<Item = Result<Bytes, String>> + Send + 'static) -> SseReader {
        SseReader {
            chunks: Box::pin(chunks),
            buffer: String::new(),
        }
    }

    /// The next item, waiting at most [`WAIT`]; `None` when the stream has ended.
    pub async fn next(&mut self) -> Option<Sse> {
        tokio::time::timeout(WAIT, self.read_item())
            .await
            .unwrap_or_else(|_| panic!("nothing came on the stream within {WAIT:?}"))
    }

    /// The next event, past any keep-alive comment; `None` when the stream has ended.
    pub async fn next_event(&mut self) -> Option<(String, String, Value)> {
        loop {
            match self.next().await? {
                Sse::Event { id, event, data } => return Some((id, event, data)),
                Sse::Comment(_) => continue,
            }
        }
    }

    /// The next event, which must come.
    pub async fn event(&mut self) -> (String, String, Value) {
        self.next_event()
            .await
            .expect("an event, not the stream's end")
    }

    /// The stream ends (after nothing but comments).
    pub async fn ends(&mut self) {
        if let Some(event) = self.next_event().await {
            panic!("the stream went on with {event:?}");
        }
    }

    async fn read_item(&mut self) -> Option<Sse> {
        loop {
            if let Some(block) = self.take_block() {
                if let Some(item) = parse(&block) {
                    return Some(item);
                }
                continue;
            }
            match self.chunks.next().await {
                Some(Ok(chunk)) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                Some(Err(e)) => panic!("the stream broke: {e}"),
                None => return None,
            }
        }
    }

    /// The next block of lines up to a blank line, when the buffer holds a whole one.
    fn take_block(&mut self) -> Option<String> {
        let normalized = self.buffer.replace("\r\n", "\n");
        let end = normalized.find("\n\n")?;
        let block = normalized[..end].to_string();
        self.buffer = normalized[end + 2..].to_string();
        Some(block)
    }
}

fn parse(block: &str) -> Option<Sse> {
    let (mut id, mut event, mut data) = (None, None, Vec::new());
    let mut comment = None;
    for line in block.lines() {
        if let Some(text) = line.strip_prefix(':') {
            comment = Some(text.trim().to_string());
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "id" => id = Some(value.to_string()),
            "event" => event = Some(value.to_string()),
            "data" => data.push(value.to_string()),
            _ => {}
        }
    }
    if data.is_empty() {
        return comment.map(Sse::Comment);
    }
    let data = data.join("\n");
    Some(Sse::Event {
        id: id.unwrap_or_default(),
        event: event.unwrap_or_default(),
        data: serde_json::from_str(&data).unwrap_or_else(|_| panic!("data is JSON: {data}")),
    })
}
