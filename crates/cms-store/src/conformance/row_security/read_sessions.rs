//! Read units on PostgreSQL carry their row-level security settings on the connection's session
//! (`postgres::reads`): a connection keeps the last unit's settings, and the next unit sets its
//! own only when they differ. These tests run on a store whose pools hold ONE connection, so
//! every unit borrows the connection the previous one left, and show that no unit ever sees
//! rows by another unit's settings: an organization's rows in a unit acting for another or for
//! none, the instance scope in an organization's unit or the other way round, the delivery mark
//! anywhere else; also when units are dropped at every point where they wait (a client that
//! hangs up), and when many tasks share the one connection. SQLite has no second wall.

use std::sync::Arc;

use super::super::cancel::cancel_at_wait;
use super::super::{document, org, role, with_two_organizations};
use crate::assets::AssetRecord;
use crate::postgres::PgStore;
use crate::{Store, Tx};

/// Every organization, so that only row-level security decides what a unit sees.
fn everyone() -> Vec<String> {
    ["o1", "o2", "o3"].map(String::from).to_vec()
}

/// How a unit is opened, and what it then declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `Store::read`: declares nothing.
    Nothing,
    /// `Store::read_for("o1")`, which may also read its child o2.
    ForO1,
    /// `Store::read_for("o3")`, a stranger to o1.
    ForO3,
    InstanceWide,
    Delivery,
    /// `Store::read` then `Tx::act_for("o3")` before its first statement.
    NothingThenO3,
    /// `Store::read_for("o1")` then `Tx::act_instance_wide`: instance-wide, o1 cleared.
    O1ThenInstanceWide,
    /// `Store::read_instance_wide` then `Tx::act_for("o1")`: confined to o1.
    InstanceWideThenO1,
    /// A write unit acting for o3, on the other pool: it must not inherit a read session.
    WriteForO3,
}

const KINDS: [Kind; 9] = [
    Kind::ForO1,
    Kind::Nothing,
    Kind::InstanceWide,
    Kind::ForO3,
    Kind::Delivery,
    Kind::NothingThenO3,
    Kind::O1ThenInstanceWide,
    Kind::InstanceWideThenO1,
    Kind::WriteForO3,
];

/// What a unit saw: documents, the organizations whose roles it read, and the assets a
/// delivery read returned.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    documents: Vec<&'static str>,
    roles_of: Vec<&'static str>,
    delivered: Vec<&'static str>,
}

impl Kind {
    async fn open(self, store: &dyn Store) -> Box<dyn Tx> {
        let mut tx = match self {
            Kind::Nothing | Kind::NothingThenO3 => store.read().await,
            Kind::ForO1 | Kind::O1ThenInstanceWide => store.read_for("o1").await,
            Kind::ForO3 => store.read_for("o3").await,
            Kind::InstanceWide | Kind::InstanceWideThenO1 => store.read_instance_wide().await,
            Kind::Delivery => store.read_for_delivery().await,
            Kind::WriteForO3 => store.write_for("o3").await,
        }
        .unwrap();
        match self {
            Kind::NothingThenO3 => tx.act_for("o3").await.unwrap(),
            Kind::O1ThenInstanceWide => tx.act_instance_wide().await.unwrap(),
            Kind::InstanceWideThenO1 => tx.act_for("o1").await.unwrap(),
            _ => {}
        }
        tx
    }

    /// What row-level security lets this unit see of the rows `seed` wrote.
    fn expected(self) -> Seen {
        // A delivery read is a read by id: an organization's unit reads its own assets so too.
        let (documents, roles_of, delivered): (&[_], &[_], &[_]) = match self {
            Kind::Nothing => (&[], &[], &[]),
            Kind::ForO1 | Kind::InstanceWideThenO1 => (&["d1", "d2"], &["o1", "o2"], &["a1"]),
            Kind::ForO3 | Kind::NothingThenO3 | Kind::WriteForO3 => (&["d3"], &["o3"], &["a3"]),
            Kind::InstanceWide | Kind::O1ThenInstanceWide => (&[], &["o1", "o2", "o3"], &[]),
            Kind::Delivery => (&[], &[], &["a1", "a3"]),
        };
        Seen {
            documents: documents.to_vec(),
            roles_of: roles_of.to_vec(),
            delivered: delivered.to_vec(),
        }
    }
}

/// Looks at every kind of row through `tx`, one statement at a time.
async fn observe(tx: &mut dyn Tx) -> crate::Result<Seen> {
    let everyone = everyone();
    let mut seen = Seen {
        documents: Vec::new(),
        roles_of: Vec::new(),
        delivered: Vec::new(),
    };
    for id in ["d1", "d2", "d3"] {
        if tx.document(&everyone, id).await?.is_some() {
            seen.documents.push(id);
        }
    }
    for organization in ["o1", "o2", "o3"] {
        if !tx.roles(organization).await?.is_empty() {
            seen.roles_of.push(organization);
        }
    }
    for id in ["a1", "a3"] {
        if tx.asset_for_delivery(id).await?.is_some() {
            seen.delivered.push(id);
        }
    }
    Ok(seen)
}

/// Opens a unit of `kind`, observes, and checks the observation.
async fn check(store: &dyn Store, kind: Kind, after: &str) {
    let mut tx = kind.open(store).await;
    let seen = observe(&mut *tx).await.unwrap();
    assert_eq!(seen, kind.expected(), "{kind:?} unit, after {after}");
}

fn asset(id: &str, organization: &str) -> AssetRecord {
    AssetRecord {
        id: id.into(),
        organization_id: organization.into(),
        filename: format!("{id}.png"),
        asset_type: "image".into(),
        mime_type: "image/png".into(),
        size: 1,
        width: Some(1),
        height: Some(1),
        sha256: "ab".repeat(32),
        title: None,
        description: None,
        alt: None,
        credit_line: None,
        poster_id: None,
        created_by: None,
        updated_by: None,
        created_at: 1,
        updated_at: 1,
        image: Default::default(),
    }
}

/// A store whose read and write pools hold one connection each, seeded with o1 (and its child
/// o2) and a stranger o3, each with a role and a document, and an asset in o1 and o3.
async fn one_connection_store(url: &str) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(PgStore::connect_sized(url, None, 1).await.unwrap());
    store.migrate().await.unwrap();
    with_two_organizations(&store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_organization(&org("o3", "stranger"))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    for (organization, doc, asset_id) in [
        ("o1", "d1", Some("a1")),
        ("o2", "d2", None),
        ("o3", "d3", Some("a3")),
    ] {
        let mut tx = store.write_for(organization).await.unwrap();
        tx.insert_role(&role(organization, "editor", &["read"]))
            .await
            .unwrap();
        tx.insert_document(&document(doc, organization, "post", false))
            .await
            .unwrap();
        if let Some(id) = asset_id {
            tx.insert_asset(&asset(id, organization)).await.unwrap();
        }
        tx.commit().await.unwrap();
    }
    store
}

/// Every kind of unit after every other, on the one connection: each sees exactly what it
/// declared, never what the unit before it declared.
async fn read_units_on_one_connection_see_only_what_they_declare(url: String) {
    let store = one_connection_store(&url).await;
    for before in KINDS {
        for kind in KINDS {
            check(&*store, before, "the start of this pair").await;
            check(&*store, kind, &format!("{before:?}")).await;
        }
    }
    store.close().await;
}

/// Units dropped at every point where they wait (borrowing the connection, setting its
/// session, each statement), after which every kind of unit still sees only its own rows: a
/// settings statement whose answer never arrived must not count as done.
async fn cancelled_read_units_leave_no_settings_behind(url: String) {
    let store = one_connection_store(&url).await;
    for cancelled in KINDS {
        for waits in 1..=12 {
            let unit = async {
                let mut tx = cancelled.open(&*store).await;
                observe(&mut *tx).await.map(|_| ())
            };
            if let Some(done) = cancel_at_wait(unit, waits).await {
                done.unwrap();
            }
            for kind in KINDS {
                check(
                    &*store,
                    kind,
                    &format!("{cancelled:?} dropped at wait {waits}"),
                )
                .await;
            }
        }
    }
    store.close().await;
}

/// Many tasks share the one read connection, each walking through every kind, some units
/// dropped half way: every unit that finishes saw exactly its own rows.
async fn tasks_sharing_one_connection_see_only_their_own_rows(url: String) {
    let store = one_connection_store(&url).await;
    let tasks: Vec<_> = (0..6)
        .map(|task| {
            let store = store.clone();
            tokio::spawn(async move {
                for round in 0..KINDS.len() * 3 {
                    let kind = KINDS[(task + round) % KINDS.len()];
                    let unit = async {
                        let mut tx = kind.open(&*store).await;
                        observe(&mut *tx).await
                    };
                    // Every third unit is given up at some wait; the others run to the end.
                    let waits = match round % 3 {
                        0 => 1 + (task + round) % 8,
                        _ => usize::MAX,
                    };
                    if let Some(seen) = cancel_at_wait(unit, waits).await {
                        assert_eq!(seen.unwrap(), kind.expected(), "{kind:?} in task {task}");
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a task saw another unit's rows");
    }
    store.close().await;
}

mod read_units_on_one_connection_see_only_what_they_declare {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        crate::testing::with_database(
            crate::Dialect::Postgres,
            super::read_units_on_one_connection_see_only_what_they_declare,
        )
        .await;
    }
}

mod cancelled_read_units_leave_no_settings_behind {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        crate::testing::with_database(
            crate::Dialect::Postgres,
            super::cancelled_read_units_leave_no_settings_behind,
        )
        .await;
    }
}

mod tasks_sharing_one_connection_see_only_their_own_rows {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        crate::testing::with_database(
            crate::Dialect::Postgres,
            super::tasks_sharing_one_connection_see_only_their_own_rows,
        )
        .await;
    }
}
