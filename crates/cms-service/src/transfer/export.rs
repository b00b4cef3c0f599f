//! `cms export`: the catalogue's parts read in one snapshot, written as they are read.

use std::io::Write;

use cms_store::Tx;
use cms_store::archive::{Carried, Filter, PARTS, Part, Row, Rows, SCHEMA_VERSION};

use super::archive::{self, ArchiveWriter, INSTANCE, MANIFEST, Manifest};
use super::{ExportRequest, Progress, Transfer, TransferProgress, TransferSummary};
use crate::{Error, Result};

/// Rows a page carries from the store.
const PAGE: usize = 1_000;

/// Streams the rows of a part a filter takes, running `body` with each page (`page`) as it
/// comes; a failure in `body` ends the reading too. A macro rather than a function taking an
/// async closure: the export future must stay `Send`, which an async closure borrowing the
/// export's state cannot yet promise.
macro_rules! for_each_page {
    ($tx:expr, $part:expr, $filter:expr, |$page:ident| $body:block) => {{
        let (pages, received) = tokio::sync::mpsc::channel(2);
        let reading = $tx.archive_rows($part, $filter, PAGE, pages);
        // The receiver moves into the handling: once that ends, on a failure too, the
        // reading's next send fails and its statement stops.
        let handling = async {
            let mut received = received;
            #[allow(unused_mut)]
            while let Some(mut $page) = received.recv().await {
                $body
            }
            Ok::<(), Error>(())
        };
        let (read, handled) = tokio::join!(reading, handling);
        handled.and(read.map_err(Error::from))
    }};
}

/// One part's rows of one owner.
struct Slice {
    part: &'static Part,
    take: Take,
}

/// Which rows of its part a slice takes (a [`Filter`] owning what it names).
enum Take {
    All,
    /// One organization's, read acting for it; every other slice reads instance-wide.
    Organization(String),
    NoOrganization,
    ChosenOrganizations,
    PeopleOfChosen,
}

impl Slice {
    fn filter<'a>(&'a self, chosen: &'a [String]) -> Filter<'a> {
        match &self.take {
            Take::All => Filter::All,
            Take::Organization(org) => Filter::Organization(org),
            Take::NoOrganization => Filter::NoOrganization,
            Take::ChosenOrganizations => Filter::Organizations(chosen),
            Take::PeopleOfChosen => Filter::PeopleOf(chosen),
        }
    }

    /// The organization its reads act for; `None`: instance-wide.
    fn owner(&self) -> Option<&str> {
        match &self.take {
            Take::Organization(org) => Some(org),
            _ => None,
        }
    }

    fn owner_segment(&self) -> &str {
        self.owner().unwrap_or(INSTANCE)
    }
}

/// What an export takes: the organizations chosen, and whether it is the whole instance.
struct Scope {
    chosen: Vec<String>,
    whole: bool,
}

impl Scope {
    /// The slices of every part this export carries, in load order.
    fn slices(&self, request: &ExportRequest) -> Vec<Slice> {
        let mut slices = Vec::new();
        let slice = |part, take| Slice { part, take };
        for part in PARTS {
            if part.carried == Carried::WithCredentials && !request.with_credentials {
                continue;
            }
            let per_organization = self
                .chosen
                .iter()
                .map(|org| slice(part, Take::Organization(org.clone())));
            match part.rows {
                Rows::Organizations if self.whole => slices.push(slice(part, Take::All)),
                Rows::Organizations => {
                    slices.push(slice(part, Take::ChosenOrganizations));
                }
                Rows::Organization(_) => slices.extend(per_organization),
                Rows::OrganizationOrInstance(_) => {
                    slices.extend(per_organization);
                    if self.whole {
                        slices.push(slice(part, Take::NoOrganization));
                    }
                }
                Rows::People(_) if self.whole => slices.push(slice(part, Take::All)),
                Rows::People(_) => slices.push(slice(part, Take::PeopleOfChosen)),
                Rows::Instance if self.whole => slices.push(slice(part, Take::All)),
                Rows::Instance => {}
            }
        }
        slices
    }
}

impl Transfer {
    /// Writes the archive `request` asks for to `output`, reporting progress as it goes.
    pub async fn export(
        &self,
        request: &ExportRequest,
        output: Box<dyn Write + Send>,
        progress: &(dyn Fn(TransferProgress) + Send + Sync),
    ) -> Result<TransferSummary> {
        let mut tx = self.store.snapshot().await?;
        let scope = scope(tx.as_mut(), request).await?;
        let slices = scope.slices(request);
        let mut manifest = Manifest {
            format: archive::FORMAT.into(),
            schema_version: SCHEMA_VERSION,
            cms_version: env!("CARGO_PKG_VERSION").into(),
            created_at: chrono::Utc::now().timestamp_millis(),
            source: match self.store.dialect() {
                cms_store::Dialect::Sqlite => "sqlite",
                cms_store::Dialect::Postgres => "postgres",
            }
            .into(),
            organizations: (!scope.whole).then(|| request.organizations.clone()),
            with_credentials: request.with_credentials,
            rows: Default::default(),
            files: 0,
        };
        for slice in &slices {
            act(tx.as_mut(), slice.owner()).await?;
            let count = tx
                .archive_count(slice.part, slice.filter(&scope.chosen))
                .await?;
            *manifest.rows.entry(slice.part.name.into()).or_default() += count;
            if slice.part.table == "assets" {
                manifest.files += count;
            }
        }
        let total = manifest.rows.values().sum::<u64>() + manifest.files;
        let writer = ArchiveWriter::start(output);
        let written = async {
            let manifest_json =
                serde_json::to_vec_pretty(&manifest).expect("a manifest serializes");
            writer.entry(MANIFEST.into(), manifest_json).await?;
            let mut run = Run {
                summary: TransferSummary::default(),
                progress: Progress::new(total, progress),
            };
            for slice in &slices {
                run.rows(tx.as_mut(), &writer, slice, &scope.chosen, request)
                    .await?;
            }
            for slice in slices.iter().filter(|s| s.part.table == "assets") {
                run.files(self, tx.as_mut(), &writer, slice, &scope.chosen)
                    .await?;
            }
            Ok::<_, Error>(run.summary)
        }
        .await;
        tx.commit().await?;
        match written {
            Ok(summary) => {
                writer.finish().await?;
                Ok(summary)
            }
            // The archive thread's own error says more than the closed channel that ended
            // the writing side.
            Err(e) => Err(writer.finish().await.err().unwrap_or(e)),
        }
    }
}

/// The organizations an export takes: the ones named and their children, or every one.
async fn scope(tx: &mut dyn Tx, request: &ExportRequest) -> Result<Scope> {
    tx.act_instance_wide().await?;
    let mut organizations: Vec<Row> = Vec::new();
    for part in PARTS.iter().filter(|p| p.rows == Rows::Organizations) {
        for_each_page!(tx, part, Filter::All, |page| {
            organizations.extend(page);
        })?;
    }
    let text =
        |row: &Row, column: &str| row.get(column).and_then(|v| v.as_str()).map(str::to_string);
    if request.organizations.is_empty() {
        return Ok(Scope {
            chosen: organizations.iter().filter_map(|o| text(o, "id")).collect(),
            whole: true,
        });
    }
    let mut named = Vec::new();
    for slug in &request.organizations {
        match organizations
            .iter()
            .find(|o| text(o, "slug").as_deref() == Some(slug))
        {
            Some(found) => named.extend(text(found, "id")),
            None => return Err(Error::NotFound(format!("no organization `{slug}`"))),
        }
    }
    let children = organizations.iter().filter(|o| {
        text(o, "parent_id").is_some_and(|parent| named.contains(&parent))
            && !text(o, "id").is_some_and(|id| named.contains(&id))
    });
    let children: Vec<String> = children.filter_map(|o| text(o, "id")).collect();
    named.extend(children);
    Ok(Scope {
        chosen: named,
        whole: false,
    })
}

/// A child organization exported without its parent arrives as an organization of its own:
/// the parent it names is not in the archive (its row would refer to nothing).
fn detach_from_parent_left_behind(organization: &mut Row, chosen: &[String]) {
    let parent = organization.get("parent_id").and_then(|v| v.as_str());
    if parent.is_some_and(|parent| !chosen.iter().any(|c| c == parent)) {
        organization.insert("parent_id".into(), serde_json::Value::Null);
    }
}

/// Acts for the slice's owner: one organization, or instance-wide.
async fn act(tx: &mut dyn Tx, owner: Option<&str>) -> Result<()> {
    match owner {
        Some(organization) => tx.act_for(organization).await?,
        None => tx.act_instance_wide().await?,
    }
    Ok(())
}

/// An export under way: what it wrote so far.
struct Run<'p> {
    summary: TransferSummary,
    progress: Progress<'p>,
}

impl Run<'_> {
    /// Reads one slice page by page, writing its rows in entries of about
    /// [`archive::ENTRY_BYTES`].
    async fn rows(
        &mut self,
        tx: &mut dyn Tx,
        writer: &ArchiveWriter,
        slice: &Slice,
        chosen: &[String],
        request: &ExportRequest,
    ) -> Result<()> {
        act(tx, slice.owner()).await?;
        let part = slice.part;
        let mut entry = Vec::new();
        let mut entries = 0;
        for_each_page!(tx, part, slice.filter(chosen), |page| {
            for row in &mut page {
                if !request.with_credentials {
                    for column in part.columns.iter().filter(|c| c.credential) {
                        row.insert(column.name.into(), serde_json::Value::Null);
                    }
                }
                if part.rows == Rows::Organizations {
                    detach_from_parent_left_behind(row, chosen);
                }
            }
            entry.extend(archive::ndjson(&page));
            if entry.len() >= archive::ENTRY_BYTES {
                entries += 1;
                let path = entry_path(part, slice.owner_segment(), entries);
                writer.entry(path, std::mem::take(&mut entry)).await?;
            }
            *self.summary.rows.entry(part.table.into()).or_default() += page.len() as u64;
            self.progress.advance(page.len() as u64, part.name);
        })?;
        if !entry.is_empty() {
            entries += 1;
            writer
                .entry(entry_path(part, slice.owner_segment(), entries), entry)
                .await?;
        }
        Ok(())
    }

    /// Streams the files of one slice's assets from storage into the archive.
    async fn files(
        &mut self,
        transfer: &Transfer,
        tx: &mut dyn Tx,
        writer: &ArchiveWriter,
        slice: &Slice,
        chosen: &[String],
    ) -> Result<()> {
        act(tx, slice.owner()).await?;
        for_each_page!(tx, slice.part, slice.filter(chosen), |page| {
            for row in &page {
                let Some(id) = row.get("id").and_then(|v| v.as_str()) else {
                    continue;
                };
                let opened = transfer.storage.open(id).await;
                match opened.map_err(|e| Error::Internal(format!("asset storage: {e}")))? {
                    Some((size, body)) => {
                        writer.file(format!("files/{id}"), size, body).await?;
                        self.summary.files += 1;
                        self.summary.file_bytes += size;
                    }
                    None => {
                        tracing::warn!(asset = id, "export: the asset's file is not in storage");
                        self.summary.missing_files.push(id.to_string());
                    }
                }
                self.progress.advance(1, "files");
            }
        })
    }
}

fn entry_path(part: &Part, owner: &str, n: usize) -> String {
    format!("rows/{}/{owner}/{n:06}.ndjson", part.name)
}
