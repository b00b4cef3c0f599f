//! Instance-wide values: a flag is claimed once, and values are put, replaced and deleted.

use super::open;

async fn an_instance_flag_is_claimed_once(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(tx.claim_instance_flag("firstAdmin", "u1", 1).await.unwrap());
    assert!(!tx.claim_instance_flag("firstAdmin", "u2", 2).await.unwrap());
    assert_eq!(
        tx.instance_flag("firstAdmin").await.unwrap().as_deref(),
        Some("u1")
    );
    tx.commit().await.unwrap();
    store.close().await;
}

async fn instance_values_are_put_replaced_and_deleted(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.put_instance_value("signUpPolicy", "{}", 1)
        .await
        .unwrap();
    tx.put_instance_value("signUpPolicy", "{\"inviteOnly\":false}", 2)
        .await
        .unwrap();
    assert_eq!(
        tx.instance_flag("signUpPolicy").await.unwrap().as_deref(),
        Some("{\"inviteOnly\":false}")
    );
    assert!(tx.delete_instance_value("signUpPolicy").await.unwrap());
    assert!(!tx.delete_instance_value("signUpPolicy").await.unwrap());
    assert_eq!(tx.instance_flag("signUpPolicy").await.unwrap(), None);
    tx.commit().await.unwrap();
    store.close().await;
}

crate::both_engines!(
    an_instance_flag_is_claimed_once,
    instance_values_are_put_replaced_and_deleted,
);
