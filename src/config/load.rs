//! Loading: defaults, then the file, then the environment (its systematic names and their
//! aliases), with a warning for every key of the file that is not known.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::{Table, Value};

use super::keys::{ALIASES, KEYS, Kind, env_name, parse_env};
use super::{Config, ConfigError, Loaded};

impl Config {
    /// Loads defaults, the file, then `env` (pass `std::env::vars()`). `path` is `--config`.
    pub fn load(
        path: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Loaded, ConfigError> {
        let env: std::collections::HashMap<String, String> = env.into_iter().collect();
        let explicit = path
            .map(Path::to_path_buf)
            .or_else(|| env.get("CMS_CONFIG").map(PathBuf::from));
        let mut table = match &explicit {
            Some(p) => read_file(p)?,
            None if Path::new("cms.toml").exists() => read_file(Path::new("cms.toml"))?,
            None => Table::new(),
        };
        let mut warnings: Vec<String> = leaf_keys(&table, "")
            .into_iter()
            .filter(|k| !KEYS.iter().any(|(known, _)| known == k))
            .map(|k| format!("unknown configuration key `{k}` is ignored"))
            .collect();

        let overrides = KEYS
            .iter()
            .map(|(key, kind)| (env_name(key), *key, *kind))
            .chain(ALIASES.iter().map(|(name, key)| {
                let kind = KEYS
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, kind)| *kind)
                    .unwrap_or(Kind::Str);
                (name.to_string(), *key, kind)
            }));
        for (name, key, kind) in overrides {
            if let Some(raw) = env.get(&name) {
                let value =
                    parse_env(raw, kind).map_err(|why| ConfigError(format!("{name}: {why}")))?;
                set_path(&mut table, key, value);
            }
        }
        let mut config =
            Config::deserialize(Value::Table(table)).map_err(|e| ConfigError(e.to_string()))?;
        config.oidc_secrets_from(&env);
        config.check(&mut warnings)?;
        Ok(Loaded { config, warnings })
    }
}

fn read_file(path: &Path) -> Result<Table, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("cannot read {}: {e}", path.display())))?;
    text.parse::<Table>()
        .map_err(|e| ConfigError(format!("{}: {e}", path.display())))
}

fn leaf_keys(table: &Table, prefix: &str) -> Vec<String> {
    table
        .iter()
        .flat_map(|(k, v)| {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            // A table of the user's own keys is one setting, not a section.
            let map = KEYS
                .iter()
                .any(|(known, kind)| *known == key && matches!(kind, Kind::Map));
            match v {
                Value::Table(t) if !map => leaf_keys(t, &key),
                _ => vec![key],
            }
        })
        .collect()
}

fn set_path(table: &mut Table, dotted: &str, value: Value) {
    let mut parts = dotted.split('.').peekable();
    let mut current = table;
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            current.insert(part.to_string(), value);
            return;
        }
        let entry = current
            .entry(part.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        if !entry.is_table() {
            *entry = Value::Table(Table::new());
        }
        current = entry.as_table_mut().expect("just made a table");
    }
}
