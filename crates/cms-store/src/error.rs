use sqlx::error::ErrorKind;

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// What can go wrong in storage. Constraint violations are told apart here, once, so the layers
/// above can turn them into 409s without knowing any engine's error codes.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A unique constraint refused the write (an e-mail, a slug, a name already taken).
    #[error("unique constraint violated: {0}")]
    Unique(String),
    /// A foreign key refused the write or the delete (still referenced, or a missing parent).
    #[error("foreign key constraint violated: {0}")]
    ForeignKey(String),
    #[error("invalid database configuration: {0}")]
    Config(String),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("database error: {0}")]
    Database(sqlx::Error),
    /// From the SQLite statements that do not go through sqlx (point reads, a write unit's
    /// direct statements).
    #[error("database error: {0}")]
    Embedded(rusqlite::Error),
}

/// As sqlx tells them apart on SQLite: a primary key or unique index is `Unique`.
impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ffi;
        if let rusqlite::Error::SqliteFailure(failure, message) = &e {
            let what = || message.clone().unwrap_or_else(|| failure.to_string());
            match failure.extended_code {
                ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                    return StoreError::Unique(what());
                }
                ffi::SQLITE_CONSTRAINT_FOREIGNKEY => return StoreError::ForeignKey(what()),
                _ => {}
            }
        }
        StoreError::Embedded(e)
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        if let sqlx::Error::Database(db) = &e {
            let what = db
                .constraint()
                .map(str::to_string)
                .unwrap_or_else(|| db.message().to_string());
            match db.kind() {
                ErrorKind::UniqueViolation => return StoreError::Unique(what),
                ErrorKind::ForeignKeyViolation => return StoreError::ForeignKey(what),
                _ => {}
            }
        }
        StoreError::Database(e)
    }
}
