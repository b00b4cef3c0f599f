//! `cms export` and `cms import` (CONTRACT.md section 19): the configured database and asset
//! storage, opened without starting the service, handed to the service layer's transfer.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use cms_service::TransferProgress;
pub use cms_service::transfer::{ExportRequest as ExportOptions, TransferSummary};

use crate::{Config, StartError};

/// The configured store (migrated) and storage, as `serve` would open them.
async fn transfer_of(
    config: &Config,
) -> Result<(cms_service::Transfer, Arc<dyn cms_store::Store>), StartError> {
    let store = crate::migrated_store(config).await?;
    let storage = crate::storage_from(config)?;
    Ok((cms_service::Transfer::new(store.clone(), storage), store))
}

/// Writes the archive `options` ask for to `output`, reporting progress as it goes.
pub async fn export_to(
    config: &Config,
    options: &ExportOptions,
    output: Box<dyn Write + Send>,
    progress: &(dyn Fn(TransferProgress) + Send + Sync),
) -> Result<TransferSummary, StartError> {
    let (transfer, store) = transfer_of(config).await?;
    let exported = transfer.export(options, output, progress).await;
    store.close().await;
    Ok(exported?)
}

/// Writes the archive to the new file `output` (an existing file is refused; a failed export
/// leaves none).
pub async fn export(
    config: &Config,
    options: &ExportOptions,
    output: &Path,
) -> Result<TransferSummary, StartError> {
    export_file(config, options, output, &|_| {}).await
}

/// [`export`], reporting progress as it goes.
pub async fn export_file(
    config: &Config,
    options: &ExportOptions,
    output: &Path,
    progress: &(dyn Fn(TransferProgress) + Send + Sync),
) -> Result<TransferSummary, StartError> {
    let file = new_file(output)?;
    let exported = export_to(config, options, Box::new(file), progress).await;
    if exported.is_err() {
        let _ = std::fs::remove_file(output);
    }
    exported
}

/// Creates `path` for an archive, refusing one that exists.
fn new_file(path: &Path) -> Result<std::io::BufWriter<std::fs::File>, StartError> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map(std::io::BufWriter::new)
        .map_err(|e| StartError::Io(format!("cannot create {}: {e}", path.display())))
}

/// Loads the archive `input` into the configured database, which must be empty, and its files
/// into the configured storage.
pub async fn import_from(
    config: &Config,
    input: Box<dyn Read + Send>,
    progress: &(dyn Fn(TransferProgress) + Send + Sync),
) -> Result<TransferSummary, StartError> {
    let (transfer, store) = transfer_of(config).await?;
    let imported = transfer.import(input, progress).await;
    store.close().await;
    Ok(imported?)
}

/// Loads the archive file `input` (see [`import_from`]).
pub async fn import(config: &Config, input: &Path) -> Result<TransferSummary, StartError> {
    let file = std::fs::File::open(input)
        .map_err(|e| StartError::Io(format!("cannot open {}: {e}", input.display())))?;
    import_from(config, Box::new(std::io::BufReader::new(file)), &|_| {}).await
}
