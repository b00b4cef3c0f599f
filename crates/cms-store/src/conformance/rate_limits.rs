//! Rate-limit counters: fixed windows per key, purged when over, and concurrent hits each
//! counted.

use super::open;

async fn rate_limit_counters_count_per_window_and_are_purged(url: String) {
    use crate::rate_limits::RateCount;
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    // A window of 100 ms: a window that began at or before `now - 100` is over.
    for (now, expected) in [
        (
            1000,
            RateCount {
                window_start: 1000,
                hits: 1,
            },
        ),
        (
            1050,
            RateCount {
                window_start: 1000,
                hits: 2,
            },
        ),
        (
            1099,
            RateCount {
                window_start: 1000,
                hits: 3,
            },
        ),
        (
            1100,
            RateCount {
                window_start: 1100,
                hits: 1,
            },
        ),
    ] {
        assert_eq!(
            tx.hit_rate_limit("signIn.email:aa", now, now - 100)
                .await
                .unwrap(),
            expected
        );
    }
    // Another key counts on its own.
    assert_eq!(
        tx.hit_rate_limit("signIn.email:bb", 1150, 1050)
            .await
            .unwrap(),
        RateCount {
            window_start: 1150,
            hits: 1
        }
    );
    assert_eq!(tx.purge_rate_limits(1100).await.unwrap(), 1);
    assert_eq!(
        tx.hit_rate_limit("signIn.email:bb", 1160, 1060)
            .await
            .unwrap()
            .hits,
        2,
        "the purge kept the live window"
    );
    tx.commit().await.unwrap();
    store.close().await;
}

async fn concurrent_rate_limit_hits_each_count(url: String) {
    let store = open(&url).await;
    let hits: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut tx = store.write_instance_wide().await.unwrap();
                let count = tx.hit_rate_limit("k", 5000, 0).await.unwrap();
                tx.commit().await.unwrap();
                count.hits
            })
        })
        .collect();
    let mut seen = Vec::new();
    for h in hits {
        seen.push(h.await.unwrap());
    }
    seen.sort();
    assert_eq!(seen, (1..=8).collect::<Vec<i64>>());
    store.close().await;
}

crate::both_engines!(
    rate_limit_counters_count_per_window_and_are_purged,
    concurrent_rate_limit_hits_each_count,
);
