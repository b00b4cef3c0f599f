//! `cms import`: an archive's entries loaded in the order they come, into an empty database.

use std::io::Read;

use cms_store::archive::{PARTS, Part, Rows, SCHEMA_VERSION, part_named};

use super::archive::{self, INSTANCE, Item, Manifest};
use super::{Progress, Transfer, TransferProgress, TransferSummary};
use crate::storage::BlobWriter;
use crate::{Error, Result};

impl Transfer {
    /// Loads the archive `input` holds into this store, which must hold no person and no
    /// organization, and its files into this storage. The store's search index is rebuilt by
    /// the next start. An import that fails part way leaves what it loaded: start again on an
    /// empty database.
    pub async fn import(
        &self,
        input: Box<dyn Read + Send>,
        progress: &(dyn Fn(TransferProgress) + Send + Sync),
    ) -> Result<TransferSummary> {
        let mut items = archive::read(input);
        let manifest = match items.recv().await {
            Some(Ok(Item::Manifest(manifest))) => manifest,
            Some(Err(e)) => return Err(e),
            _ => {
                return Err(Error::Unprocessable(
                    "this is not a cms archive: it does not start with a manifest".into(),
                ));
            }
        };
        check(&manifest)?;
        let mut tx = self.store.read_instance_wide().await?;
        if tx.holds_people_or_organizations().await? {
            return Err(Error::Conflict(
                "the database already holds people or organizations: `cms import` loads into \
                 an empty database only (merging into one with data is not supported)"
                    .into(),
            ));
        }
        drop(tx);
        let mut load = Load {
            summary: TransferSummary::default(),
            progress: Progress::new(
                manifest.rows.values().sum::<u64>() + manifest.files,
                progress,
            ),
            last_part: 0,
            unit: None,
        };
        let mut file: Option<(String, Box<dyn BlobWriter>)> = None;
        while let Some(item) = items.recv().await {
            match item? {
                Item::Manifest(_) => {
                    return Err(Error::Unprocessable("the archive has two manifests".into()));
                }
                Item::Rows { part, owner, rows } => {
                    load.rows(self, &part, &owner, rows).await?;
                }
                Item::FileStart { asset_id, size } => {
                    // Files come after every row: what the rows hold is committed first.
                    load.commit().await?;
                    let writer = self.storage.writer(&asset_id).await.map_err(storage)?;
                    load.summary.file_bytes += size;
                    file = Some((asset_id, writer));
                }
                Item::FileBytes(bytes) => match file.as_mut() {
                    Some((_, writer)) => writer.write(bytes).await.map_err(storage)?,
                    None => return Err(Error::Internal("file bytes outside a file".into())),
                },
                Item::FileEnd => {
                    if let Some((_, writer)) = file.take() {
                        writer.finish().await.map_err(storage)?;
                        load.summary.files += 1;
                        load.progress.advance(1, "files");
                    }
                }
            }
        }
        load.commit().await?;
        whole(&manifest, &load.summary)?;
        self.settle(&manifest, &load.summary).await?;
        Ok(load.summary)
    }

    /// What the loaded rows leave to do: the search index is rebuilt at the next start, and
    /// an instance loaded from some organizations has its people already, so no later
    /// sign-up becomes its first administrator.
    async fn settle(&self, manifest: &Manifest, summary: &TransferSummary) -> Result<()> {
        let mut tx = self.store.write_instance_wide().await?;
        tx.forget_search_index().await?;
        let people = summary.rows.get("users").is_some_and(|&n| n > 0);
        if manifest.organizations.is_some() && people {
            let now = chrono::Utc::now().timestamp_millis();
            crate::auth::claim_first_admin(tx.as_mut(), "import", now).await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

/// An archive this binary can load: the format it writes, rows of its database shape.
fn check(manifest: &Manifest) -> Result<()> {
    if manifest.format != archive::FORMAT {
        return Err(Error::Unprocessable(format!(
            "the archive's format is `{}`; this cms reads `{}`",
            manifest.format,
            archive::FORMAT
        )));
    }
    if manifest.schema_version != SCHEMA_VERSION {
        return Err(Error::Unprocessable(format!(
            "the archive was written by cms {} at database version {}; this cms is at version \
             {SCHEMA_VERSION}: import it with the same version, then upgrade",
            manifest.cms_version, manifest.schema_version
        )));
    }
    Ok(())
}

/// Every row the manifest counted arrived: an archive cut between two entries still ends as
/// a well-formed tar stream, and would otherwise load as if whole.
fn whole(manifest: &Manifest, loaded: &TransferSummary) -> Result<()> {
    let mut expected = std::collections::BTreeMap::<&str, u64>::new();
    for (name, rows) in &manifest.rows {
        *expected.entry(known(name)?.table).or_default() += rows;
    }
    for (table, rows) in expected {
        let arrived = loaded.rows.get(table).copied().unwrap_or(0);
        if arrived != rows {
            return Err(Error::Unprocessable(format!(
                "the archive ends early or was altered: it holds {arrived} rows of `{table}`, \
                 its manifest counts {rows}; what arrived is loaded, start again on an empty \
                 database with a whole archive"
            )));
        }
    }
    Ok(())
}

fn storage(e: crate::storage::StorageError) -> Error {
    Error::Internal(format!("asset storage: {e}"))
}

/// An import under way.
struct Load<'p> {
    summary: TransferSummary,
    progress: Progress<'p>,
    /// The position in the catalogue of the last part loaded: parts come in load order.
    last_part: usize,
    /// The unit loading now, and the rows it holds: entries share a unit up to
    /// [`ROWS_PER_UNIT`] rows, so that a commit (a flush to disk) is not paid per entry.
    unit: Option<(Box<dyn cms_store::Tx>, usize)>,
}

/// Rows loaded in one unit of work at most (a few seconds of loading at most).
const ROWS_PER_UNIT: usize = 50_000;

impl Load<'_> {
    /// Commits the unit loading now, if any.
    async fn commit(&mut self) -> Result<()> {
        if let Some((tx, _)) = self.unit.take() {
            tx.commit().await?;
        }
        Ok(())
    }

    /// Loads one entry's rows, acting for their organization.
    async fn rows(
        &mut self,
        transfer: &Transfer,
        name: &str,
        owner: &str,
        rows: Vec<cms_store::archive::Row>,
    ) -> Result<()> {
        let part = known(name)?;
        let position = PARTS
            .iter()
            .position(|p| std::ptr::eq(p, part))
            .unwrap_or_default();
        if position < self.last_part {
            return Err(Error::Unprocessable(format!(
                "the archive's `{name}` rows come after rows that depend on them"
            )));
        }
        self.last_part = position;
        let (tx, held) = match &mut self.unit {
            Some(unit) => unit,
            None => self.unit.insert((transfer.store.write().await?, 0)),
        };
        match (part.rows, owner) {
            (Rows::Organization(_) | Rows::OrganizationOrInstance(_), owner)
                if owner != INSTANCE =>
            {
                tx.act_for(owner).await?
            }
            _ => tx.act_instance_wide().await?,
        }
        tx.load_rows(part, &rows).await?;
        *held += rows.len();
        if *held >= ROWS_PER_UNIT {
            self.commit().await?;
        }
        *self.summary.rows.entry(part.table.into()).or_default() += rows.len() as u64;
        self.progress.advance(rows.len() as u64, part.name);
        Ok(())
    }
}

fn known(name: &str) -> Result<&'static Part> {
    part_named(name).ok_or_else(|| {
        Error::Unprocessable(format!(
            "the archive holds rows of `{name}`, which this cms does not know"
        ))
    })
}
