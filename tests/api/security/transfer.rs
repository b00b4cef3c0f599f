//! A row of the security table for `cms export` / `cms import` (CONTRACT.md section 19): an
//! export of one organization, without credentials, carries that organization alone and no
//! way in, and the instance it is imported into is not left open to a first administrator.

use std::sync::Arc;

use axum::http::StatusCode;
use cms::service::{ExportRequest, ObjectStorage, Transfer};
use cms_store::Dialect;
use cms_store::testing::TestDatabase;
use serde_json::json;

use super::Fx;
use crate::support::{PASSWORD, TestApp, config_for};

pub(super) async fn an_export_of_one_organization_carries_it_alone_and_no_way_in(fx: Arc<Fx>) {
    let media = fx.app.data_dir().join("media");
    let source = Transfer::new(
        fx.app.app.cms.store().clone(),
        Arc::new(ObjectStorage::local(&media).unwrap()),
    );
    let child_only = ExportRequest {
        organizations: vec!["child".into()],
        with_credentials: false,
    };
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("child.tar.zst");
    let sink = std::fs::File::create(&archive).unwrap();
    let written = source.export(&child_only, Box::new(sink), &|_| {}).await;
    written.expect("export");

    let target_db = TestDatabase::new(Dialect::Sqlite).await;
    let mut config = config_for(&target_db.url);
    // Open sign-up: only the first-administrator claim stands between a stranger and super admin.
    config.auth.invite_only = false;
    let target = TestApp::custom(config, |b| b.schemas(super::schemas())).await;
    let storage = ObjectStorage::local(target.data_dir().join("media")).unwrap();
    let into = Transfer::new(target.app.cms.store().clone(), Arc::new(storage));
    let file = std::fs::File::open(&archive).unwrap();
    into.import(Box::new(file), &|_| {}).await.expect("import");

    let mut tx = target.app.cms.store().read_instance_wide().await.unwrap();
    assert!(tx.organization_by_id(&fx.child).await.unwrap().is_some());
    for other in [&fx.parent, &fx.outsider] {
        let found = tx.organization_by_id(other).await.unwrap();
        assert!(found.is_none(), "only the named organization travels");
    }
    let stranger = tx.user_by_email("stranger@example.com").await.unwrap();
    assert!(
        stranger.is_none(),
        "people of other organizations stay behind"
    );
    let child_admin = tx.user_by_email("childadmin@example.com").await.unwrap();
    assert_eq!(child_admin.unwrap().password_hash, None, "no password hash");
    drop(tx);

    let sign_in = json!({"email": "childadmin@example.com", "password": PASSWORD});
    let res = target.post("/api/auth/sign-in/email", sign_in).send().await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{}", res.body);
    let res = target
        .get("/api/documents?type=note")
        .key(&fx.child_key)
        .send()
        .await;
    assert_eq!(
        res.status,
        StatusCode::UNAUTHORIZED,
        "keys stay behind: {}",
        res.body
    );
    let eve = json!({"name": "Eve", "email": "eve@example.com", "password": PASSWORD});
    let res = target.post("/api/auth/sign-up/email", eve).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["user"]["role"], "editor",
        "the first sign-up after an import is no administrator: {}",
        res.body
    );
    target.stop().await;
    target_db.remove().await;
}
