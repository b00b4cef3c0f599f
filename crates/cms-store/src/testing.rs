//! Test support: a fresh, isolated database on either engine, removed afterwards.
//!
//! PostgreSQL tests each get their own schema (selected through the connection URL's
//! `search_path`), so they run in parallel on one server and leave nothing behind. The server
//! comes from `CMS_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`); a
//! server that cannot be reached fails the test loudly, it never skips.

use std::future::Future;

use sqlx::Connection;

use crate::Dialect;

pub const DEFAULT_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

pub fn postgres_url() -> String {
    std::env::var("CMS_TEST_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_POSTGRES_URL.to_string())
}

/// A throw-away database. Call [`TestDatabase::remove`] when done.
pub struct TestDatabase {
    pub url: String,
    pub dialect: Dialect,
    cleanup: Cleanup,
}

enum Cleanup {
    File(std::path::PathBuf),
    Schema { server: String, schema: String },
}

impl TestDatabase {
    pub async fn new(dialect: Dialect) -> TestDatabase {
        let unique = uuid::Uuid::now_v7().simple().to_string();
        match dialect {
            Dialect::Sqlite => {
                let dir = std::env::temp_dir().join(format!("cms-test-{unique}"));
                let url = format!("sqlite://{}", dir.join("cms.db").display());
                TestDatabase {
                    url,
                    dialect,
                    cleanup: Cleanup::File(dir),
                }
            }
            Dialect::Postgres => {
                let server = postgres_url();
                let schema = format!("t_{unique}");
                let mut conn = sqlx::PgConnection::connect(&server).await.unwrap_or_else(|e| {
                    panic!(
                        "PostgreSQL tests need a server at {server} (set CMS_TEST_POSTGRES_URL): {e}"
                    )
                });
                sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
                    .execute(&mut conn)
                    .await
                    .expect("create test schema");
                let sep = if server.contains('?') { '&' } else { '?' };
                // The application name lets `remove` end connections a failed test left open.
                let url = format!(
                    "{server}{sep}options=-c%20search_path%3D{schema}&application_name={schema}"
                );
                TestDatabase {
                    url,
                    dialect,
                    cleanup: Cleanup::Schema { server, schema },
                }
            }
        }
    }

    pub async fn remove(self) {
        match self.cleanup {
            Cleanup::File(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Cleanup::Schema { server, schema } => {
                if let Ok(mut conn) = sqlx::PgConnection::connect(&server).await {
                    // A panicking test may leave a transaction open that holds locks in the schema.
                    let _ = sqlx::query(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
                    )
                    .bind(&schema)
                    .execute(&mut conn)
                    .await;
                    let _ =
                        sqlx::query(sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
                            .execute(&mut conn)
                            .await;
                }
            }
        }
    }
}

/// Runs `test` against a fresh database URL and removes the database afterwards, also when the
/// test panics (the panic is then resumed).
pub async fn with_database<F, Fut>(dialect: Dialect, test: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let db = TestDatabase::new(dialect).await;
    let outcome = tokio::spawn(test(db.url.clone())).await;
    db.remove().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// Declares one test per engine for an `async fn(url: String)`:
/// `both_engines!(sign_up_works);` makes `sign_up_works::sqlite` and `sign_up_works::postgres`.
#[macro_export]
macro_rules! both_engines {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                $crate::testing::with_database($crate::Dialect::Sqlite, super::$name).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                $crate::testing::with_database($crate::Dialect::Postgres, super::$name).await;
            }
        }
    )+};
}
