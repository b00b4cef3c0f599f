//! The storage conformance suite for assets: records, lists, metadata, posters, deletion,
//! reference counts, direct uploads, and on PostgreSQL the row-level-security wall and the
//! delivery unit, asserted on both engines.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;

use crate::assets::{
    AssetListSpec, AssetMetadata, AssetRecord, AssetReference, ImageDetails, ImageSummary,
    UploadRecord,
};
use crate::documents::DocumentRecord;
use crate::organizations::OrganizationRecord;
use crate::references::ReferenceRecord;
use crate::{Json, Store, StoreError};

async fn open(url: &str) -> Arc<dyn Store> {
    let store = crate::connect(url).await.expect("connect");
    store.migrate().await.expect("migrate");
    store
}

fn org(id: &str, parent: Option<&str>) -> OrganizationRecord {
    OrganizationRecord {
        id: id.into(),
        name: id.into(),
        slug: id.into(),
        metadata: Json(json!({})),
        parent_id: parent.map(String::from),
        locales: None,
        require_two_factor: false,
        created_at: 1,
        updated_at: 1,
    }
}

/// Organizations o1, its child o2, and o3, unrelated. A unit acting for o1 may read o2's rows,
/// which lets these tests look across both while PostgreSQL's row-level security holds.
async fn seed(store: &Arc<dyn Store>) {
    let mut tx = store.write().await.unwrap();
    tx.insert_organization(&org("o1", None)).await.unwrap();
    tx.insert_organization(&org("o2", Some("o1")))
        .await
        .unwrap();
    tx.insert_organization(&org("o3", None)).await.unwrap();
    tx.commit().await.unwrap();
}

fn asset(id: &str, organization: &str, mime_type: &str, created_at: i64) -> AssetRecord {
    let image = mime_type.starts_with("image/");
    AssetRecord {
        id: id.into(),
        organization_id: organization.into(),
        filename: format!("{id}.bin"),
        asset_type: if image { "image" } else { "file" }.into(),
        mime_type: mime_type.into(),
        size: 1234,
        width: image.then_some(640),
        height: image.then_some(480),
        sha256: "ab".repeat(32),
        title: None,
        description: None,
        alt: None,
        credit_line: None,
        poster_id: None,
        created_by: Some("u1".into()),
        updated_by: Some("u1".into()),
        created_at,
        updated_at: created_at,
        image: ImageDetails::default(),
    }
}

async fn insert(store: &Arc<dyn Store>, assets: &[AssetRecord]) {
    for a in assets {
        let mut tx = store.write_for(&a.organization_id).await.unwrap();
        tx.insert_asset(a).await.unwrap();
        tx.commit().await.unwrap();
    }
}

fn orgs(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

fn spec(organizations: &[String]) -> AssetListSpec<'_> {
    AssetListSpec {
        organizations,
        asset_type: None,
        mime_type: None,
        search: None,
        limit: 100,
        offset: 0,
    }
}

fn ids(assets: &[AssetRecord]) -> Vec<&str> {
    assets.iter().map(|a| a.id.as_str()).collect()
}

async fn assets_are_inserted_read_and_scoped(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    let a1 = AssetRecord {
        title: Some("Title".into()),
        description: Some("Description".into()),
        alt: Some("Alt".into()),
        credit_line: Some("Credit".into()),
        ..asset("a1", "o1", "image/png", 10)
    };
    let a2 = asset("a2", "o2", "application/pdf", 11);
    insert(&store, &[a1.clone(), a2.clone()]).await;

    let mut tx = store.read_for("o1").await.unwrap();
    assert_eq!(
        tx.asset(&orgs(&["o1"]), "a1").await.unwrap(),
        Some(a1.clone())
    );
    assert_eq!(
        tx.asset(&orgs(&["o2"]), "a1").await.unwrap(),
        None,
        "another organization's asset is invisible"
    );
    assert_eq!(tx.asset(&orgs(&["o1"]), "a2").await.unwrap(), None);
    assert_eq!(
        tx.asset(&orgs(&["o1", "o2"]), "a2").await.unwrap(),
        Some(a2.clone())
    );
    assert_eq!(tx.asset(&[], "a1").await.unwrap(), None);
    assert_eq!(tx.asset(&orgs(&["o1"]), "nope").await.unwrap(), None);
    let wanted = ["a2".to_string(), "nope".to_string(), "a1".to_string()];
    let found = tx.assets_by_ids(&orgs(&["o1"]), &wanted).await.unwrap();
    assert_eq!(ids(&found), ["a1"], "by ids: the organization's only");
    let mut found = tx
        .assets_by_ids(&orgs(&["o1", "o2"]), &wanted)
        .await
        .unwrap();
    found.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(found, [a1.clone(), a2.clone()]);
    assert!(
        tx.assets_by_ids(&orgs(&["o1"]), &[])
            .await
            .unwrap()
            .is_empty()
    );
    assert!(tx.assets_by_ids(&[], &wanted).await.unwrap().is_empty());
    drop(tx);

    // Delivery reads by id alone.
    let mut tx = store.read_for_delivery().await.unwrap();
    assert_eq!(tx.asset_for_delivery("a1").await.unwrap(), Some(a1.clone()));
    assert_eq!(tx.asset_for_delivery("a2").await.unwrap(), Some(a2));
    assert_eq!(tx.asset_for_delivery("nope").await.unwrap(), None);
    drop(tx);

    let mut tx = store.write_for("o1").await.unwrap();
    assert!(matches!(
        tx.insert_asset(&a1).await,
        Err(StoreError::Unique(_))
    ));
    drop(tx);
    store.close().await;
}

async fn assets_are_listed_filtered_and_paged(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    let titled = |a: AssetRecord, title: &str| AssetRecord {
        title: Some(title.into()),
        ..a
    };
    insert(
        &store,
        &[
            titled(asset("i1", "o1", "image/png", 1), "Sunset Beach"),
            AssetRecord {
                description: Some("a SUNSET over water".into()),
                ..asset("i2", "o1", "image/jpeg", 2)
            },
            titled(asset("f1", "o1", "application/pdf", 3), "50% off"),
            titled(asset("f2", "o1", "imagery/x", 4), "500_off"),
            asset("i4", "o1", "image/png", 5),
            asset("i5", "o1", "image/png", 5),
            titled(asset("c1", "o2", "image/png", 6), "sunset in the child"),
        ],
    )
    .await;
    let o1 = orgs(&["o1"]);
    let both = orgs(&["o1", "o2"]);
    let mut tx = store.read_for("o1").await.unwrap();

    // Newest first, ties by id descending.
    let (all, total) = tx.list_assets(&spec(&o1)).await.unwrap();
    assert_eq!(ids(&all), ["i5", "i4", "f2", "f1", "i2", "i1"]);
    assert_eq!(total, 6);
    let (all, total) = tx.list_assets(&spec(&both)).await.unwrap();
    assert_eq!(ids(&all), ["c1", "i5", "i4", "f2", "f1", "i2", "i1"]);
    assert_eq!(total, 7);
    assert_eq!(tx.list_assets(&spec(&[])).await.unwrap(), (vec![], 0));

    // One page, and the total of all matching.
    let page = AssetListSpec {
        limit: 2,
        offset: 1,
        ..spec(&o1)
    };
    let (rows, total) = tx.list_assets(&page).await.unwrap();
    assert_eq!((ids(&rows), total), (vec!["i4", "f2"], 6));
    let past = AssetListSpec {
        offset: 10,
        ..spec(&o1)
    };
    let (rows, total) = tx.list_assets(&past).await.unwrap();
    assert_eq!((rows.len(), total), (0, 6));

    let filtered = |asset_type, mime_type, search| AssetListSpec {
        asset_type,
        mime_type,
        search,
        ..spec(&o1)
    };
    let cases: Vec<(AssetListSpec<'_>, Vec<&str>)> = vec![
        (
            filtered(Some("image"), None, None),
            vec!["i5", "i4", "i2", "i1"],
        ),
        (filtered(Some("file"), None, None), vec!["f2", "f1"]),
        (
            filtered(None, Some("image/png"), None),
            vec!["i5", "i4", "i1"],
        ),
        // A whole top-level type; `imagery/x` is not under `image/`.
        (
            filtered(None, Some("image/*"), None),
            vec!["i5", "i4", "i2", "i1"],
        ),
        (filtered(None, Some("application/*"), None), vec!["f1"]),
        (filtered(None, Some("image"), None), vec![]),
        // Title or description, case-insensitive.
        (filtered(None, None, Some("sunset")), vec!["i2", "i1"]),
        (filtered(None, None, Some("SUNSET BEACH")), vec!["i1"]),
        // LIKE wildcards in the search are literal.
        (filtered(None, None, Some("50%")), vec!["f1"]),
        (filtered(None, None, Some("0_")), vec!["f2"]),
        (filtered(None, None, Some("%")), vec!["f1"]),
        (filtered(None, None, Some("\\")), vec![]),
        // Filters combine.
        (
            filtered(Some("image"), Some("image/jpeg"), Some("sun")),
            vec!["i2"],
        ),
        (filtered(Some("file"), Some("image/*"), None), vec![]),
    ];
    for (case, expected) in cases {
        let (rows, total) = tx.list_assets(&case).await.unwrap();
        assert_eq!(ids(&rows), expected, "{case:?}");
        assert_eq!(total, expected.len() as i64, "{case:?}");
    }
    drop(tx);
    store.close().await;
}

async fn asset_metadata_is_set_cleared_and_kept(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    let a1 = AssetRecord {
        title: Some("Old title".into()),
        description: Some("Old description".into()),
        alt: Some("Old alt".into()),
        credit_line: None,
        ..asset("a1", "o1", "image/png", 10)
    };
    insert(&store, std::slice::from_ref(&a1)).await;

    let mut tx = store.write_for("o1").await.unwrap();
    let change = AssetMetadata {
        title: Some(Some("New title".into())),
        description: Some(None),
        alt: None,
        credit_line: Some(Some("Photo: Ada".into())),
        hotspot: Some(Some((0.25, 0.75))),
    };
    let updated = tx
        .update_asset_metadata("o1", "a1", &change, Some("u2"), 20)
        .await
        .unwrap()
        .expect("the asset of o1");
    let expected = AssetRecord {
        title: Some("New title".into()),
        description: None,
        alt: Some("Old alt".into()),
        credit_line: Some("Photo: Ada".into()),
        updated_by: Some("u2".into()),
        updated_at: 20,
        image: ImageDetails {
            hotspot_x: Some(0.25),
            hotspot_y: Some(0.75),
            ..ImageDetails::default()
        },
        ..a1.clone()
    };
    assert_eq!(updated, expected);
    // Nothing to change still records who and when.
    let touched = tx
        .update_asset_metadata("o1", "a1", &AssetMetadata::default(), None, 30)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        touched,
        AssetRecord {
            updated_by: None,
            updated_at: 30,
            ..expected.clone()
        }
    );
    // Another organization, or no such asset: nothing.
    assert_eq!(
        tx.update_asset_metadata("o2", "a1", &change, None, 40)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        tx.update_asset_metadata("o1", "nope", &change, None, 40)
            .await
            .unwrap(),
        None
    );
    tx.commit().await.unwrap();

    let mut tx = store.read_for("o1").await.unwrap();
    let stored = tx.asset(&orgs(&["o1"]), "a1").await.unwrap().unwrap();
    assert_eq!(
        (stored.title.as_deref(), stored.updated_at),
        (Some("New title"), 30)
    );
    drop(tx);
    // A hotspot is cleared as a whole.
    let mut tx = store.write_for("o1").await.unwrap();
    let cleared = AssetMetadata {
        hotspot: Some(None),
        ..AssetMetadata::default()
    };
    let updated = tx
        .update_asset_metadata("o1", "a1", &cleared, None, 50)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (updated.image.hotspot_x, updated.image.hotspot_y),
        (None, None)
    );
    tx.commit().await.unwrap();
    store.close().await;
}

async fn image_summaries_are_recorded_and_the_rest_found(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    let summarized = AssetRecord {
        image: ImageDetails {
            summarized: true,
            ..ImageDetails::default()
        },
        ..asset("a0", "o1", "image/png", 5)
    };
    insert(
        &store,
        &[
            summarized,
            asset("a1", "o1", "image/png", 10),
            asset("a2", "o1", "image/jpeg", 11),
            asset("a3", "o1", "application/pdf", 12),
            asset("a4", "o2", "image/png", 13),
        ],
    )
    .await;
    let mut tx = store.write_for("o1").await.unwrap();
    let todo = tx.images_to_summarize("o1", None, 10).await.unwrap();
    assert_eq!(ids(&todo), ["a1", "a2"]);
    let next = tx.images_to_summarize("o1", Some("a1"), 10).await.unwrap();
    assert_eq!(ids(&next), ["a2"]);
    assert_eq!(
        ids(&tx.images_to_summarize("o1", None, 1).await.unwrap()),
        ["a1"]
    );
    let summary = ImageSummary {
        lqip: "data:image/webp;base64,AAAA".into(),
        dominant_color: "#ff0000".into(),
        has_alpha: true,
    };
    assert!(
        tx.set_image_summary("o1", "a1", Some(&summary))
            .await
            .unwrap()
    );
    assert!(tx.set_image_summary("o1", "a2", None).await.unwrap());
    // Another organization's asset is not touched.
    assert!(!tx.set_image_summary("o1", "a4", None).await.unwrap());
    assert!(
        tx.images_to_summarize("o1", None, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let a1 = tx.asset(&orgs(&["o1"]), "a1").await.unwrap().unwrap();
    assert_eq!(
        a1.image,
        ImageDetails {
            lqip: Some(summary.lqip.clone()),
            dominant_color: Some("#ff0000".into()),
            has_alpha: Some(true),
            summarized: true,
            ..ImageDetails::default()
        }
    );
    // Not an edit by anyone.
    assert_eq!(a1.updated_at, 10);
    let a2 = tx.asset(&orgs(&["o1"]), "a2").await.unwrap().unwrap();
    assert!(a2.image.summarized && a2.image.lqip.is_none());
    tx.commit().await.unwrap();
    store.close().await;
}

async fn a_poster_is_set_and_cleared_when_deleted(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    insert(
        &store,
        &[
            asset("v1", "o1", "video/mp4", 1),
            asset("p1", "o1", "image/jpeg", 2),
        ],
    )
    .await;
    let o1 = orgs(&["o1"]);
    let mut tx = store.write_for("o1").await.unwrap();
    assert!(
        tx.set_asset_poster("o1", "v1", "p1", Some("u2"), 5)
            .await
            .unwrap()
    );
    assert!(
        !tx.set_asset_poster("o2", "v1", "p1", None, 6)
            .await
            .unwrap(),
        "another organization's asset"
    );
    assert!(
        !tx.set_asset_poster("o1", "nope", "p1", None, 6)
            .await
            .unwrap()
    );
    let v1 = tx.asset(&o1, "v1").await.unwrap().unwrap();
    assert_eq!(
        (
            v1.poster_id.as_deref(),
            v1.updated_by.as_deref(),
            v1.updated_at
        ),
        (Some("p1"), Some("u2"), 5)
    );
    tx.commit().await.unwrap();

    let mut tx = store.write_for("o1").await.unwrap();
    assert!(matches!(
        tx.set_asset_poster("o1", "v1", "missing", None, 7).await,
        Err(StoreError::ForeignKey(_))
    ));
    drop(tx);

    // Deleting the poster leaves the video without one.
    let mut tx = store.write_for("o1").await.unwrap();
    assert_eq!(
        tx.delete_assets("o1", &orgs(&["p1"])).await.unwrap(),
        ["p1"]
    );
    tx.commit().await.unwrap();
    let mut tx = store.read_for("o1").await.unwrap();
    let v1 = tx.asset(&o1, "v1").await.unwrap().unwrap();
    assert_eq!((v1.poster_id, v1.updated_at), (None, 5));
    drop(tx);
    store.close().await;
}

async fn only_own_assets_are_deleted(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    insert(
        &store,
        &[
            asset("a", "o1", "image/png", 1),
            asset("b", "o1", "image/png", 2),
            asset("c", "o2", "image/png", 3),
            asset("d", "o1", "image/png", 4),
        ],
    )
    .await;
    let mut tx = store.write_for("o1").await.unwrap();
    assert!(tx.delete_assets("o1", &[]).await.unwrap().is_empty());
    let mut deleted = tx
        .delete_assets("o1", &orgs(&["a", "c", "missing", "b"]))
        .await
        .unwrap();
    deleted.sort();
    assert_eq!(deleted, ["a", "b"]);
    // More ids than one statement takes.
    let mut many: Vec<String> = (0..1200).map(|i| format!("x{i}")).collect();
    many.insert(700, "d".into());
    assert_eq!(tx.delete_assets("o1", &many).await.unwrap(), ["d"]);
    tx.commit().await.unwrap();

    let mut tx = store.read_for("o1").await.unwrap();
    let (rows, _) = tx.list_assets(&spec(&orgs(&["o1", "o2"]))).await.unwrap();
    assert_eq!(ids(&rows), ["c"], "another organization's asset stays");
    drop(tx);
    store.close().await;
}

fn document(id: &str, organization: &str, created_at: i64) -> DocumentRecord {
    DocumentRecord {
        id: id.into(),
        organization_id: organization.into(),
        doc_type: "post".into(),
        singleton: false,
        draft_data: Json(json!({})),
        published_data: None,
        published_hash: None,
        revision: 1,
        created_by: None,
        updated_by: None,
        created_at,
        updated_at: created_at,
        published_at: None,
    }
}

fn reference(path: &str, to_id: &str, target: &str) -> ReferenceRecord {
    ReferenceRecord {
        path: path.into(),
        to_id: to_id.into(),
        target: target.into(),
    }
}

async fn references_are_counted_per_distinct_document(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    insert(
        &store,
        &[
            asset("a1", "o1", "image/png", 1),
            asset("a2", "o1", "image/png", 2),
            asset("a3", "o1", "image/png", 3),
        ],
    )
    .await;
    let asset_ref = |path: &str, to: &str| reference(path, to, "asset");
    // d1 (o1, published) references a1 from two paths of its draft and from its published copy.
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_document(&document("d2", "o1", 20)).await.unwrap();
    tx.insert_document(&document("d1", "o1", 10)).await.unwrap();
    tx.set_published("d1", &json!({}), "hash", None, 11)
        .await
        .unwrap();
    tx.replace_references(
        "d1",
        "o1",
        "draft",
        &[
            asset_ref("cover", "a1"),
            asset_ref("gallery[0].asset", "a1"),
        ],
    )
    .await
    .unwrap();
    tx.replace_references("d1", "o1", "published", &[asset_ref("cover", "a1")])
        .await
        .unwrap();
    // d2 (o1, draft only) references a1, and a document whose id happens to be `a2`.
    tx.replace_references(
        "d2",
        "o1",
        "draft",
        &[
            asset_ref("image", "a1"),
            reference("related", "a2", "document"),
        ],
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    // d3 in the child o2, d4 in the unrelated o3.
    for (id, organization, created_at) in [("d3", "o2", 5), ("d4", "o3", 1)] {
        let mut tx = store.write_for(organization).await.unwrap();
        tx.insert_document(&document(id, organization, created_at))
            .await
            .unwrap();
        tx.replace_references(id, organization, "draft", &[asset_ref("file", "a1")])
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    let o1 = orgs(&["o1"]);
    let both = orgs(&["o1", "o2"]);
    let asked = orgs(&["a1", "a2", "a3", "unknown"]);
    let mut tx = store.read_for("o1").await.unwrap();
    assert_eq!(
        tx.asset_reference_counts(&o1, &asked).await.unwrap(),
        HashMap::from([("a1".to_string(), 2)]),
        "distinct documents of o1; a document reference to `a2` is not an asset reference"
    );
    assert_eq!(
        tx.asset_reference_counts(&both, &asked).await.unwrap(),
        HashMap::from([("a1".to_string(), 3)])
    );
    assert!(
        tx.asset_reference_counts(&[], &asked)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        tx.asset_reference_counts(&o1, &[])
            .await
            .unwrap()
            .is_empty()
    );
    // More ids than one statement takes.
    let mut many: Vec<String> = (0..1200).map(|i| format!("x{i}")).collect();
    many.insert(900, "a1".into());
    assert_eq!(
        tx.asset_reference_counts(&o1, &many).await.unwrap(),
        HashMap::from([("a1".to_string(), 2)])
    );

    let referencing = |id: &str, published: bool, organization: &str| AssetReference {
        document_id: id.into(),
        doc_type: "post".into(),
        published,
        organization_id: organization.into(),
    };
    assert_eq!(
        tx.asset_references(&both, "a1").await.unwrap(),
        [
            referencing("d3", false, "o2"),
            referencing("d1", true, "o1"),
            referencing("d2", false, "o1"),
        ],
        "each document once, oldest first"
    );
    assert_eq!(
        tx.asset_references(&o1, "a1").await.unwrap(),
        [
            referencing("d1", true, "o1"),
            referencing("d2", false, "o1")
        ]
    );
    assert!(tx.asset_references(&both, "a2").await.unwrap().is_empty());
    assert!(tx.asset_references(&[], "a1").await.unwrap().is_empty());
    drop(tx);

    // References go with the document.
    let mut tx = store.write_for("o1").await.unwrap();
    tx.delete_document("d1").await.unwrap();
    assert_eq!(
        tx.asset_reference_counts(&o1, &asked).await.unwrap(),
        HashMap::from([("a1".to_string(), 1)])
    );
    tx.commit().await.unwrap();
    store.close().await;
}

fn upload(id: &str, organization: &str) -> UploadRecord {
    UploadRecord {
        id: id.into(),
        organization_id: organization.into(),
        filename: "photo.jpg".into(),
        mime_type: "image/jpeg".into(),
        size: 5_000_000,
        created_by: Some("u1".into()),
        created_at: 100,
        expires_at: 100 + 15 * 60 * 1000,
    }
}

async fn uploads_are_kept_per_organization(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    let u1 = upload("u1", "o1");
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_upload(&u1).await.unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.write_for("o1").await.unwrap();
    assert_eq!(tx.upload("o1", "u1").await.unwrap(), Some(u1.clone()));
    assert_eq!(tx.upload("o2", "u1").await.unwrap(), None);
    assert_eq!(tx.upload("o1", "nope").await.unwrap(), None);
    assert!(!tx.delete_upload("o2", "u1").await.unwrap());
    assert!(tx.delete_upload("o1", "u1").await.unwrap());
    assert!(!tx.delete_upload("o1", "u1").await.unwrap());
    assert_eq!(tx.upload("o1", "u1").await.unwrap(), None);
    tx.commit().await.unwrap();

    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_upload(&u1).await.unwrap();
    assert!(matches!(
        tx.insert_upload(&u1).await,
        Err(StoreError::Unique(_))
    ));
    drop(tx);
    store.close().await;
}

crate::both_engines!(
    assets_are_inserted_read_and_scoped,
    assets_are_listed_filtered_and_paged,
    asset_metadata_is_set_cleared_and_kept,
    image_summaries_are_recorded_and_the_rest_found,
    a_poster_is_set_and_cleared_when_deleted,
    only_own_assets_are_deleted,
    references_are_counted_per_distinct_document,
    uploads_are_kept_per_organization,
);

/// SPEC.md Authentication point 3 for assets: on PostgreSQL the database keeps a unit acting
/// for one organization away from another's assets and uploads, even when the application's own
/// filter names them; a delivery unit reads any asset by id and nothing else; a unit acting for
/// nobody sees none.
async fn row_level_security_walls_off_assets(url: String) {
    use sqlx::{Connection, Executor};
    let store = open(&url).await;
    seed(&store).await;
    let a1 = asset("a1", "o1", "image/png", 1);
    insert(&store, &[a1.clone(), asset("p1", "o1", "image/png", 2)]).await;
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_document(&document("d1", "o1", 1)).await.unwrap();
    tx.replace_references("d1", "o1", "draft", &[reference("cover", "a1", "asset")])
        .await
        .unwrap();
    tx.insert_upload(&upload("u1", "o1")).await.unwrap();
    tx.commit().await.unwrap();
    let o1 = orgs(&["o1"]);
    let change = AssetMetadata {
        title: Some(Some("taken".into())),
        ..AssetMetadata::default()
    };

    // Acting for o3 while the application's filter names o1.
    let mut tx = store.write_for("o3").await.unwrap();
    assert_eq!(tx.asset(&o1, "a1").await.unwrap(), None);
    assert_eq!(tx.asset_for_delivery("a1").await.unwrap(), None);
    assert_eq!(tx.list_assets(&spec(&o1)).await.unwrap(), (vec![], 0));
    assert_eq!(
        tx.update_asset_metadata("o1", "a1", &change, None, 9)
            .await
            .unwrap(),
        None
    );
    assert!(
        !tx.set_asset_poster("o1", "a1", "p1", None, 9)
            .await
            .unwrap()
    );
    assert!(tx.delete_assets("o1", &o1_ids()).await.unwrap().is_empty());
    assert!(
        tx.asset_reference_counts(&o1, &o1_ids())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(tx.asset_references(&o1, "a1").await.unwrap().is_empty());
    assert_eq!(tx.upload("o1", "u1").await.unwrap(), None);
    assert!(!tx.delete_upload("o1", "u1").await.unwrap());
    assert!(
        tx.insert_asset(&asset("a9", "o1", "image/png", 9))
            .await
            .is_err(),
        "an asset of another organization cannot be inserted"
    );
    drop(tx);
    let mut tx = store.write_for("o3").await.unwrap();
    assert!(
        tx.insert_upload(&upload("u9", "o1")).await.is_err(),
        "an upload of another organization cannot be inserted"
    );
    drop(tx);
    // A child never reads its parent's assets.
    let mut tx = store.read_for("o2").await.unwrap();
    assert_eq!(tx.asset(&orgs(&["o1", "o2"]), "a1").await.unwrap(), None);
    drop(tx);

    // A delivery unit reads any asset by id, and nothing else.
    let mut tx = store.read_for_delivery().await.unwrap();
    assert_eq!(tx.asset_for_delivery("a1").await.unwrap(), Some(a1.clone()));
    assert!(tx.document(&o1, "d1").await.unwrap().is_none());
    assert!(tx.asset_references(&o1, "a1").await.unwrap().is_empty());
    assert_eq!(tx.upload("o1", "u1").await.unwrap(), None);
    drop(tx);
    // Reads only: a unit marked for delivery changes no asset.
    let mut tx = store.write().await.unwrap();
    tx.act_for_delivery().await.unwrap();
    assert_eq!(tx.asset_for_delivery("a1").await.unwrap(), Some(a1.clone()));
    assert_eq!(
        tx.update_asset_metadata("o1", "a1", &change, None, 9)
            .await
            .unwrap(),
        None
    );
    assert!(tx.delete_assets("o1", &o1_ids()).await.unwrap().is_empty());
    assert!(
        tx.insert_asset(&asset("a8", "o1", "image/png", 9))
            .await
            .is_err()
    );
    drop(tx);
    // A unit that names no organization sees no asset.
    let mut tx = store.read().await.unwrap();
    assert_eq!(tx.asset_for_delivery("a1").await.unwrap(), None);
    assert_eq!(tx.asset(&o1, "a1").await.unwrap(), None);
    drop(tx);

    // The application's role holds the rights on the new tables (migration 0005's default
    // privileges), within the wall.
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    conn.execute(sqlx::AssertSqlSafe(format!(
        "SET ROLE {}",
        crate::postgres::APPLICATION_ROLE
    )))
    .await
    .unwrap();
    let mut raw = conn.begin().await.unwrap();
    raw.execute("SELECT set_config('cms.organization_id', 'o1', true)")
        .await
        .unwrap();
    let seen: (i64, i64) = sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM assets), (SELECT COUNT(*) FROM asset_uploads)",
    )
    .fetch_one(&mut *raw)
    .await
    .unwrap();
    assert_eq!(seen, (2, 1));
    raw.execute(
        "INSERT INTO asset_uploads (id, organization_id, filename, mime_type, size, created_at, \
         expires_at) VALUES ('u2', 'o1', 'f', 'image/png', 1, 1, 2)",
    )
    .await
    .unwrap();
    let updated = raw
        .execute("UPDATE assets SET title = 'raw' WHERE id = 'a1'")
        .await
        .unwrap();
    let deleted = raw
        .execute("DELETE FROM asset_uploads WHERE id = 'u2'")
        .await
        .unwrap();
    assert_eq!((updated.rows_affected(), deleted.rows_affected()), (1, 1));
    raw.execute("SELECT set_config('cms.organization_id', 'o3', true)")
        .await
        .unwrap();
    let seen: (i64, i64) = sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM assets), (SELECT COUNT(*) FROM asset_uploads)",
    )
    .fetch_one(&mut *raw)
    .await
    .unwrap();
    assert_eq!(seen, (0, 0), "walled off");
    drop(raw);
    conn.close().await.unwrap();

    // Nothing above changed o1's rows.
    let mut tx = store.read_for("o1").await.unwrap();
    assert_eq!(tx.asset(&o1, "a1").await.unwrap(), Some(a1));
    assert!(tx.upload("o1", "u1").await.unwrap().is_some());
    drop(tx);
    store.close().await;
}

fn o1_ids() -> Vec<String> {
    orgs(&["a1", "p1"])
}

mod row_level_security_walls_off_assets {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        crate::testing::with_database(
            crate::Dialect::Postgres,
            super::row_level_security_walls_off_assets,
        )
        .await;
    }
}
