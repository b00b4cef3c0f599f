//! Loading schema files named by `schemas.paths` (CONTRACT.md section 1).

use std::path::{Path, PathBuf};

use cms_core::schema::{Schema, parse_schemas};

use crate::ConfigError;

/// The schemas of the configured files, or the demo schemas when none are configured. Every
/// error names the file (and, from the parser, the schema and field).
pub fn load(patterns: &[String]) -> Result<Vec<Schema>, ConfigError> {
    if patterns.is_empty() {
        return Ok(cms_core::schema::demo_schemas());
    }
    let mut schemas = Vec::new();
    for pattern in patterns {
        let files = expand(pattern)?;
        if files.is_empty() {
            return Err(ConfigError(format!(
                "schemas.paths: `{pattern}` matches no file"
            )));
        }
        for file in files {
            schemas.extend(load_file(&file)?);
        }
    }
    Ok(schemas)
}

fn load_file(file: &Path) -> Result<Vec<Schema>, ConfigError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| ConfigError(format!("{}: {e}", file.display())))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| ConfigError(format!("{}: not valid JSON: {e}", file.display())))?;
    parse_schemas(&json).map_err(|e| ConfigError(format!("{}: {e}", file.display())))
}

/// The files a pattern names, sorted: a plain path, or a `*` wildcard in the file name.
fn expand(pattern: &str) -> Result<Vec<PathBuf>, ConfigError> {
    let path = Path::new(pattern);
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let Some((prefix, suffix)) = name.split_once('*') else {
        return Ok(vec![path.to_path_buf()]);
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let entries = std::fs::read_dir(&dir)
        .map_err(|e| ConfigError(format!("schemas.paths: {}: {e}", dir.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.len() >= prefix.len() + suffix.len()
                    && n.starts_with(prefix)
                    && n.ends_with(suffix)
            })
        })
        .collect();
    files.sort();
    Ok(files)
}
