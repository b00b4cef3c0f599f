//! /healthz and /api/cms-health: bounded checks, honest status codes.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::http::StatusCode;
use cms::service::{BlobStore, BlobWriter, ByteStream, StorageError};
use serde_json::json;

use crate::support::{TestApp, config_for};

async fn healthy_instance_reports_ok(url: String) {
    let app = TestApp::start(&url).await;
    let res = app.get("/healthz").send().await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, json!({"ok": true, "db": true, "storage": true}));

    let res = app.get("/api/cms-health").send().await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body["status"], "healthy");
    assert_eq!(res.body["database"]["status"], "healthy");
    assert!(
        res.body.get("storage").is_none(),
        "storage is probed only when enabled: {}",
        res.body
    );
    app.stop().await;
}

async fn concurrent_checks_do_not_disturb_each_other(url: String) {
    let app = std::sync::Arc::new(TestApp::start(&url).await);
    let checks: Vec<_> = (0..32)
        .map(|_| {
            let app = app.clone();
            tokio::spawn(async move { app.get("/healthz").send().await.status })
        })
        .collect();
    for check in checks {
        assert_eq!(check.await.unwrap(), StatusCode::OK);
    }
    std::sync::Arc::into_inner(app)
        .expect("all checks done")
        .stop()
        .await;
}

/// Storage that never answers.
struct Hanging;

#[async_trait]
impl BlobStore for Hanging {
    fn kind(&self) -> &'static str {
        "hanging"
    }
    async fn health(&self) -> Result<(), String> {
        std::future::pending().await
    }
    async fn writer(&self, _key: &str) -> Result<Box<dyn BlobWriter>, StorageError> {
        std::future::pending().await
    }
    async fn size(&self, _key: &str) -> Result<Option<u64>, StorageError> {
        std::future::pending().await
    }
    async fn read(
        &self,
        _key: &str,
        _range: Option<Range<u64>>,
    ) -> Result<ByteStream, StorageError> {
        std::future::pending().await
    }
    async fn delete(&self, _key: &str) -> Result<(), StorageError> {
        std::future::pending().await
    }
    async fn delete_prefix(&self, _prefix: &str) -> Result<usize, StorageError> {
        std::future::pending().await
    }
    async fn open(&self, _key: &str) -> Result<Option<(u64, ByteStream)>, StorageError> {
        std::future::pending().await
    }
    async fn presigned_put(
        &self,
        _key: &str,
        _expires_in: Duration,
    ) -> Result<Option<String>, StorageError> {
        std::future::pending().await
    }
}

/// Storage whose check panics.
struct Throwing;

#[async_trait]
impl BlobStore for Throwing {
    fn kind(&self) -> &'static str {
        "throwing"
    }
    async fn health(&self) -> Result<(), String> {
        panic!("the storage adapter blew up")
    }
    async fn writer(&self, _key: &str) -> Result<Box<dyn BlobWriter>, StorageError> {
        Err(blew_up())
    }
    async fn size(&self, _key: &str) -> Result<Option<u64>, StorageError> {
        Err(blew_up())
    }
    async fn read(
        &self,
        _key: &str,
        _range: Option<Range<u64>>,
    ) -> Result<ByteStream, StorageError> {
        Err(blew_up())
    }
    async fn delete(&self, _key: &str) -> Result<(), StorageError> {
        Err(blew_up())
    }
    async fn delete_prefix(&self, _prefix: &str) -> Result<usize, StorageError> {
        Err(blew_up())
    }
    async fn open(&self, _key: &str) -> Result<Option<(u64, ByteStream)>, StorageError> {
        Err(blew_up())
    }
    async fn presigned_put(
        &self,
        _key: &str,
        _expires_in: Duration,
    ) -> Result<Option<String>, StorageError> {
        Err(blew_up())
    }
}

fn blew_up() -> StorageError {
    StorageError::Other("the storage adapter blew up".into())
}

async fn a_hanging_storage_check_is_unhealthy_within_its_timeout(url: String) {
    let mut config = config_for(&url);
    // One second, not less: the same bound applies to the database's check, which a loaded
    // 2-core CI machine can take a few hundred milliseconds to answer.
    config.health.timeout_ms = 1_000;
    config.health.storage_health_check = true;
    let app = TestApp::with(config, Some(Arc::new(Hanging))).await;

    // The bound is the configured second; the outer limit only keeps a regression from hanging
    // the suite.
    let res = tokio::time::timeout(Duration::from_secs(10), app.get("/healthz").send())
        .await
        .expect("healthz answered");
    assert_eq!(res.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(res.body, json!({"ok": false, "db": true, "storage": false}));

    let res = tokio::time::timeout(Duration::from_secs(10), app.get("/api/cms-health").send())
        .await
        .unwrap();
    assert_eq!(
        res.status,
        StatusCode::OK,
        "a storage failure degrades, it does not fail: {}",
        res.body
    );
    assert_eq!(res.body["status"], "degraded");
    assert_eq!(res.body["storage"]["status"], "unhealthy");
    assert!(
        res.body["storage"]["error"]
            .as_str()
            .unwrap()
            .contains("1000 ms")
    );
    app.stop().await;
}

async fn a_throwing_storage_check_is_unhealthy(url: String) {
    let app = TestApp::with(config_for(&url), Some(Arc::new(Throwing))).await;
    let res = app.get("/healthz").send().await;
    assert_eq!(res.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(res.body, json!({"ok": false, "db": true, "storage": false}));
    app.stop().await;
}

async fn a_closed_database_is_unhealthy(url: String) {
    let app = TestApp::start(&url).await;
    app.app.cms.store().close().await;
    let res = app.get("/healthz").send().await;
    assert_eq!(res.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(res.body["db"], false);
    let res = app.get("/api/cms-health").send().await;
    assert_eq!(res.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(res.body["status"], "unhealthy");
    app.stop().await;
}

cms_store::both_engines!(
    healthy_instance_reports_ok,
    concurrent_checks_do_not_disturb_each_other,
    a_hanging_storage_check_is_unhealthy_within_its_timeout,
    a_throwing_storage_check_is_unhealthy,
    a_closed_database_is_unhealthy,
);
