//! The archive's bytes: a tar stream compressed with zstd, written and read on a blocking
//! thread of its own while the unit of work feeds it through a bounded channel, so neither
//! side ever holds more than a few entries (CONTRACT.md section 19; docs/DECISIONS.md,
//! "Export and import").
//!
//! Entries, in order:
//! - `manifest.json`: the [`Manifest`];
//! - `rows/{part}/{owner}/{n}.ndjson`: rows of one part of the store's archive catalogue, one
//!   JSON object a line, all of one owner (an organization's id, or `instance`);
//! - `files/{asset id}`: each asset's original bytes.

use std::io::{self, Read, Write};

use bytes::Bytes;
use cms_store::archive::Row;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::{Error, Result};

/// What an archive says of itself, its first entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// The database shape its rows have (`cms_store::archive::SCHEMA_VERSION`).
    pub schema_version: u32,
    /// The `cms` that wrote it.
    pub cms_version: String,
    /// Unix milliseconds.
    pub created_at: i64,
    /// `sqlite` or `postgres`.
    pub source: String,
    /// The slugs asked for; `None` for the whole instance.
    pub organizations: Option<Vec<String>>,
    pub with_credentials: bool,
    /// Rows by part, and asset files: the totals an import's progress runs to.
    pub rows: std::collections::BTreeMap<String, u64>,
    pub files: u64,
}

pub const FORMAT: &str = "cms-archive/1";
pub const MANIFEST: &str = "manifest.json";

/// The owner segment of an entry whose rows act for no one organization.
pub const INSTANCE: &str = "instance";

/// Rows are cut into entries of about this many bytes of NDJSON. An import holds a few entries
/// parsed (several times their text), so this bounds its memory.
pub const ENTRY_BYTES: usize = 1 << 20;

/// An entry read back larger than this is refused: no archive this module writes has one
/// (a row entry is cut near [`ENTRY_BYTES`]; files stream).
const LARGEST_ROWS_ENTRY: u64 = 256 << 20;

/// File bytes travel in pieces of this size.
const FILE_PIECE: usize = 256 << 10;

/// What the writing side sends the archive thread.
enum Piece {
    Entry { path: String, bytes: Vec<u8> },
    FileStart { path: String, size: u64 },
    FileBytes(Bytes),
    FileEnd,
}

/// The sending half of an archive being written.
pub struct ArchiveWriter {
    pieces: mpsc::Sender<Piece>,
    thread: tokio::task::JoinHandle<io::Result<()>>,
}

impl ArchiveWriter {
    /// Starts the archive thread over `output`.
    pub fn start(output: Box<dyn Write + Send>) -> ArchiveWriter {
        let (pieces, mut received) = mpsc::channel::<Piece>(4);
        let thread = tokio::task::spawn_blocking(move || -> io::Result<()> {
            let encoder = zstd::Encoder::new(output, 3)?;
            let mut tar = tar::Builder::new(encoder);
            while let Some(piece) = received.blocking_recv() {
                match piece {
                    Piece::Entry { path, bytes } => {
                        let mut header = header(bytes.len() as u64);
                        tar.append_data(&mut header, &path, bytes.as_slice())?;
                    }
                    Piece::FileStart { path, size } => {
                        let mut header = header(size);
                        let mut body = FileBody {
                            received: &mut received,
                            current: Bytes::new(),
                            left: size,
                        };
                        tar.append_data(&mut header, &path, &mut body)?;
                        if body.left != 0 {
                            return Err(io::Error::other(format!(
                                "{path}: the file ended {} bytes short of its recorded size",
                                body.left
                            )));
                        }
                    }
                    Piece::FileBytes(_) | Piece::FileEnd => {
                        return Err(io::Error::other("file bytes outside a file"));
                    }
                }
            }
            tar.into_inner()?.finish()?.flush()
        });
        ArchiveWriter { pieces, thread }
    }

    /// Writes one whole entry (the manifest, or a part's rows).
    pub async fn entry(&self, path: String, bytes: Vec<u8>) -> Result<()> {
        self.send(Piece::Entry { path, bytes }).await
    }

    /// Writes a file of `size` bytes from `body`.
    pub async fn file(
        &self,
        path: String,
        size: u64,
        mut body: crate::storage::ByteStream,
    ) -> Result<()> {
        use futures_util::StreamExt;
        self.send(Piece::FileStart { path, size }).await?;
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| Error::Internal(format!("reading an asset: {e}")))?;
            self.send(Piece::FileBytes(chunk)).await?;
        }
        self.send(Piece::FileEnd).await
    }

    /// Ends the archive: everything is flushed to the output when this returns.
    pub async fn finish(self) -> Result<()> {
        drop(self.pieces);
        self.thread
            .await
            .map_err(|e| Error::Internal(format!("the archive thread: {e}")))?
            .map_err(|e| Error::Internal(format!("writing the archive: {e}")))
    }

    async fn send(&self, piece: Piece) -> Result<()> {
        if self.pieces.send(piece).await.is_err() {
            // The thread stopped on an error: `finish` reports it.
            return Err(Error::Internal("the archive thread stopped".into()));
        }
        Ok(())
    }
}

fn header(size: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_size(size);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    header
}

/// A file's bytes as the archive thread reads them: the pieces up to the file's end.
struct FileBody<'a> {
    received: &'a mut mpsc::Receiver<Piece>,
    current: Bytes,
    left: u64,
}

impl Read for FileBody<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.received.blocking_recv() {
                Some(Piece::FileBytes(bytes)) => self.current = bytes,
                Some(Piece::FileEnd) | None => return Ok(0),
                Some(_) => return Err(io::Error::other("an entry inside a file")),
            }
        }
        let n = buf.len().min(self.current.len());
        if n as u64 > self.left {
            return Err(io::Error::other(
                "the file is longer than its recorded size",
            ));
        }
        buf[..n].copy_from_slice(&self.current.split_to(n));
        self.left -= n as u64;
        Ok(n)
    }
}

/// Rows as NDJSON: one JSON object a line.
pub fn ndjson(rows: &[Row]) -> Vec<u8> {
    let mut out = Vec::new();
    for row in rows {
        // A map of JSON values always serializes.
        serde_json::to_writer(&mut out, row).expect("a JSON object serializes");
        out.push(b'\n');
    }
    out
}

/// One entry read back.
pub enum Item {
    Manifest(Manifest),
    Rows {
        part: String,
        owner: String,
        rows: Vec<Row>,
    },
    /// A file's bytes follow as [`Item::FileBytes`] until [`Item::FileEnd`].
    FileStart {
        asset_id: String,
        size: u64,
    },
    FileBytes(Bytes),
    FileEnd,
}

/// Reads `input` on a blocking thread, sending its entries in order; the channel ends after
/// the last one, or with an error.
pub fn read(input: Box<dyn Read + Send>) -> mpsc::Receiver<Result<Item>> {
    let (items, received) = mpsc::channel(2);
    tokio::task::spawn_blocking(move || {
        if let Err(e) = read_entries(input, &items) {
            let _ = items.blocking_send(Err(e));
        }
    });
    received
}

fn read_entries(input: Box<dyn Read + Send>, items: &mpsc::Sender<Result<Item>>) -> Result<()> {
    let damaged = |e: io::Error| Error::Unprocessable(format!("the archive is damaged: {e}"));
    let decoder = zstd::Decoder::new(input).map_err(damaged)?;
    let mut archive = tar::Archive::new(decoder);
    let send = |item: Item| items.blocking_send(Ok(item)).map_err(|_| stopped());
    for entry in archive.entries().map_err(damaged)? {
        let mut entry = entry.map_err(damaged)?;
        let path = entry
            .path()
            .map_err(damaged)?
            .to_string_lossy()
            .into_owned();
        let size = entry.header().size().map_err(damaged)?;
        let segments: Vec<&str> = path.split('/').collect();
        match segments.as_slice() {
            [MANIFEST] => {
                let bytes = whole(&mut entry, size, &path)?;
                let manifest = serde_json::from_slice(&bytes).map_err(|e| {
                    Error::Unprocessable(format!("the archive's manifest is not readable: {e}"))
                })?;
                send(Item::Manifest(manifest))?;
            }
            ["rows", part, owner, _] => {
                let bytes = whole(&mut entry, size, &path)?;
                let mut rows = Vec::new();
                for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
                    if line.is_empty() {
                        continue;
                    }
                    rows.push(serde_json::from_slice(line).map_err(|e| {
                        Error::Unprocessable(format!("{path}, line {}: {e}", i + 1))
                    })?);
                }
                send(Item::Rows {
                    part: part.to_string(),
                    owner: owner.to_string(),
                    rows,
                })?;
            }
            ["files", asset_id] => {
                send(Item::FileStart {
                    asset_id: asset_id.to_string(),
                    size,
                })?;
                let mut piece = vec![0; FILE_PIECE];
                loop {
                    let n = entry.read(&mut piece).map_err(damaged)?;
                    if n == 0 {
                        break;
                    }
                    send(Item::FileBytes(Bytes::copy_from_slice(&piece[..n])))?;
                }
                send(Item::FileEnd)?;
            }
            _ => {
                return Err(Error::Unprocessable(format!(
                    "the archive holds `{path}`, which no cms archive has"
                )));
            }
        }
    }
    Ok(())
}

fn whole(entry: &mut impl Read, size: u64, path: &str) -> Result<Vec<u8>> {
    if size > LARGEST_ROWS_ENTRY {
        return Err(Error::Unprocessable(format!(
            "`{path}` is {size} bytes: larger than any entry a cms archive has"
        )));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    entry
        .read_to_end(&mut bytes)
        .map_err(|e| Error::Unprocessable(format!("the archive is damaged: {e}")))?;
    Ok(bytes)
}

/// The importing side hung up (it stopped on an error of its own, which it reports).
fn stopped() -> Error {
    Error::Internal("the import stopped reading the archive".into())
}
