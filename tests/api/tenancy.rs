//! Tenancy, table-driven (SPEC.md "Tenancy" and Authentication point 3, CONTRACT.md section
//! 12): every document endpoint is tried by a caller of a parent organization, of its child and
//! of an unrelated organization, against a document of each, with and without
//! `includeChildOrganizations`. Reads see their own organization, plus its children only when
//! asked; writes reach only their own; anything else is 404, never 403 (no existence oracle).
//! A document endpoint added to the service belongs in `ENDPOINTS`, and the test fails until
//! its row holds.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::assets::{ASSETS, png};
use crate::support::{Call, Session, TestApp, config_for};

/// The organizations of the scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Org {
    Parent,
    Child,
    Stranger,
}

const ORGS: [Org; 3] = [Org::Parent, Org::Child, Org::Stranger];

/// What an endpoint does with the target document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Reads it: own organization always, children when asked.
    Read,
    /// Changes it: own organization only.
    Write,
}

/// One endpoint of SPEC.md "Endpoints: Documents" that names a document: method, path (with
/// `{id}`), body, and the status it answers when the document is reachable.
struct Endpoint {
    method: Method,
    path: &'static str,
    body: fn() -> Option<Value>,
    kind: Kind,
    reachable: StatusCode,
}

fn none() -> Option<Value> {
    None
}

const ENDPOINTS: &[Endpoint] = &[
    Endpoint {
        method: Method::GET,
        path: "/api/documents/{id}",
        body: none,
        kind: Kind::Read,
        reachable: StatusCode::OK,
    },
    Endpoint {
        method: Method::GET,
        path: "/api/documents/{id}/versions",
        body: none,
        kind: Kind::Read,
        reachable: StatusCode::OK,
    },
    Endpoint {
        method: Method::GET,
        path: "/api/documents/{id}/versions/1",
        body: none,
        kind: Kind::Read,
        reachable: StatusCode::OK,
    },
    Endpoint {
        method: Method::GET,
        path: "/api/documents/{id}/back-references",
        body: none,
        kind: Kind::Read,
        reachable: StatusCode::OK,
    },
    Endpoint {
        method: Method::PUT,
        path: "/api/documents/{id}",
        body: || Some(json!({"data": {"title": "Overwritten"}})),
        kind: Kind::Write,
        reachable: StatusCode::OK,
    },
    Endpoint {
        method: Method::POST,
        path: "/api/documents/{id}/publish",
        body: || Some(json!({})),
        kind: Kind::Write,
        reachable: StatusCode::OK,
    },
    Endpoint {
        method: Method::DELETE,
        path: "/api/documents/{id}/publish",
        body: none,
        kind: Kind::Write,
        reachable: StatusCode::OK,
    },
    Endpoint {
        method: Method::POST,
        path: "/api/documents/{id}/versions/1/restore",
        body: || Some(json!({})),
        kind: Kind::Write,
        reachable: StatusCode::OK,
    },
    Endpoint {
        method: Method::POST,
        path: "/api/documents/{id}/schedule",
        body: || Some(json!({"action": "publish", "runAt": "2999-01-01T00:00:00Z"})),
        kind: Kind::Write,
        reachable: StatusCode::CREATED,
    },
    Endpoint {
        method: Method::GET,
        path: "/api/documents/{id}/schedule",
        body: none,
        kind: Kind::Write,
        reachable: StatusCode::OK,
    },
    Endpoint {
        method: Method::DELETE,
        path: "/api/documents/{id}/schedule",
        body: none,
        kind: Kind::Write,
        reachable: StatusCode::OK,
    },
    Endpoint {
        method: Method::DELETE,
        path: "/api/documents/{id}",
        body: none,
        kind: Kind::Write,
        reachable: StatusCode::OK,
    },
];

/// Three organizations, each with a write key and an author and a post that references it.
struct World {
    keys: Vec<(Org, String)>,
    /// (organization, post id, author id)
    docs: Vec<(Org, String, String)>,
    org_ids: Vec<(Org, String)>,
}

impl World {
    fn key(&self, org: Org) -> &str {
        &self.keys.iter().find(|(o, _)| *o == org).unwrap().1
    }

    fn post(&self, org: Org) -> &str {
        &self.docs.iter().find(|(o, ..)| *o == org).unwrap().1
    }

    fn author(&self, org: Org) -> &str {
        &self.docs.iter().find(|(o, ..)| *o == org).unwrap().2
    }

    fn org_id(&self, org: Org) -> &str {
        &self.org_ids.iter().find(|(o, _)| *o == org).unwrap().1
    }

    fn title(org: Org) -> String {
        format!("{org:?} post")
    }
}

async fn create_org(app: &TestApp, ada: &Session, slug: &str, parent: Option<&str>) -> String {
    let mut body = json!({"name": slug, "slug": slug});
    if let Some(parent) = parent {
        body["parentId"] = json!(parent);
    }
    let res = app
        .post("/api/organizations", body)
        .cookie(ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

async fn switch(app: &TestApp, ada: &Session, org_id: &str) {
    let res = app
        .post(
            "/api/organizations/switch",
            json!({ "organizationId": org_id }),
        )
        .cookie(ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
}

async fn create_doc(app: &TestApp, key: &str, doc_type: &str, data: Value) -> String {
    let res = app
        .post(
            "/api/documents",
            json!({"type": doc_type, "data": data, "publish": true}),
        )
        .key(key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

async fn world(app: &TestApp) -> World {
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let session = app.get("/api/auth/get-session").cookie(&ada).send().await;
    let parent = session.body["session"]["activeOrganizationId"]
        .as_str()
        .unwrap()
        .to_string();
    let child = create_org(app, &ada, "child", Some(&parent)).await;
    let stranger = create_org(app, &ada, "stranger", None).await;
    let org_ids = vec![
        (Org::Parent, parent),
        (Org::Child, child),
        (Org::Stranger, stranger),
    ];
    let mut keys = Vec::new();
    let mut docs = Vec::new();
    for (org, org_id) in &org_ids {
        switch(app, &ada, org_id).await;
        let key = app
            .create_key(
                &ada,
                json!({"name": format!("{org:?}"), "permissions": ["write"]}),
            )
            .await;
        let author = create_doc(app, &key, "author", json!({"name": format!("{org:?}")})).await;
        let post = create_doc(
            app,
            &key,
            "post",
            json!({"title": World::title(*org), "author": {"_ref": author}}),
        )
        .await;
        keys.push((*org, key));
        docs.push((*org, post, author));
    }
    World {
        keys,
        docs,
        org_ids,
    }
}

/// Whether `caller` may reach a document of `owner` with this kind of access.
fn reachable(kind: Kind, caller: Org, owner: Org, include_children: bool) -> bool {
    caller == owner
        || (kind == Kind::Read && include_children && caller == Org::Parent && owner == Org::Child)
}

async fn every_document_endpoint_honours_tenancy(url: String) {
    let app = TestApp::start(&url).await;
    let w = world(&app).await;
    for endpoint in ENDPOINTS {
        for caller in ORGS {
            for owner in ORGS {
                for include_children in [false, true] {
                    // Own documents are exercised once, last, so writes do not disturb the
                    // other cases: see below.
                    if caller == owner {
                        continue;
                    }
                    let path = endpoint.path.replace("{id}", w.post(owner));
                    let path = match include_children {
                        true => format!("{path}?includeChildOrganizations=true"),
                        false => path,
                    };
                    let mut call = app.req(endpoint.method.clone(), &path).key(w.key(caller));
                    if let Some(body) = (endpoint.body)() {
                        call = call.json(body);
                    }
                    let res = call.send().await;
                    let expected = match reachable(endpoint.kind, caller, owner, include_children) {
                        true => endpoint.reachable,
                        false => StatusCode::NOT_FOUND,
                    };
                    assert_eq!(
                        res.status, expected,
                        "{} {path} by {caller:?} on {owner:?}'s post: {}",
                        endpoint.method, res.body
                    );
                }
            }
        }
    }
    // Nothing above reached another organization's data: every post is as it was.
    for org in ORGS {
        let res = app
            .get(&format!("/api/documents/{}", w.post(org)))
            .key(w.key(org))
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        assert_eq!(res.body["data"]["draftData"]["title"], World::title(org));
        assert_eq!(res.body["data"]["_meta"]["revision"], 1);
        assert!(res.body["data"]["publishedData"].is_object());
    }
    // And each endpoint works on the caller's own post (so the 404s above are tenancy, not a
    // malformed request), in table order: the schedule exists when it is read and cancelled, and
    // the post is deleted last.
    for endpoint in ENDPOINTS {
        let path = endpoint.path.replace("{id}", w.post(Org::Stranger));
        let mut call = app
            .req(endpoint.method.clone(), &path)
            .key(w.key(Org::Stranger));
        if let Some(body) = (endpoint.body)() {
            call = call.json(body);
        }
        let res = call.send().await;
        assert_eq!(
            res.status, endpoint.reachable,
            "{} {path} on its own post: {}",
            endpoint.method, res.body
        );
    }
    app.stop().await;
}

/// Lists, queries, by-ids and back-references: what each caller sees, per organization.
async fn collections_show_own_and_asked_for_children_only(url: String) {
    let app = TestApp::start(&url).await;
    let w = world(&app).await;
    let all_posts: Vec<String> = ORGS.iter().map(|o| w.post(*o).to_string()).collect();
    for caller in ORGS {
        for include_children in [false, true] {
            let mut expected: Vec<String> = ORGS
                .iter()
                .filter(|owner| reachable(Kind::Read, caller, **owner, include_children))
                .map(|o| World::title(*o))
                .collect();
            expected.sort();
            let flag = format!("includeChildOrganizations={include_children}");
            let key = w.key(caller);
            let context = format!("{caller:?}, {flag}");

            let list = app
                .get(&format!("/api/documents?type=post&sort=title&{flag}"))
                .key(key)
                .send()
                .await;
            assert_eq!(sorted_titles(&list.body), expected, "list: {context}");

            let query = app
                .post(
                    "/api/documents/query",
                    json!({"type": "post", "includeChildOrganizations": include_children}),
                )
                .key(key)
                .send()
                .await;
            assert_eq!(sorted_titles(&query.body), expected, "query: {context}");

            let by_ids = app
                .get(&format!(
                    "/api/documents/by-ids?ids={}&{flag}",
                    all_posts.join(",")
                ))
                .key(key)
                .send()
                .await;
            assert_eq!(sorted_titles(&by_ids.body), expected, "by-ids: {context}");

            // A where clause naming another organization's data finds nothing either.
            for owner in ORGS {
                let probe = app
                    .post(
                        "/api/documents/query",
                        json!({"type": "post", "includeChildOrganizations": include_children,
                               "where": {"title": {"equals": World::title(owner)}}}),
                    )
                    .key(key)
                    .send()
                    .await;
                let seen = reachable(Kind::Read, caller, owner, include_children);
                assert_eq!(
                    probe.body["pagination"]["total"],
                    u64::from(seen),
                    "where on {owner:?}'s title: {context}"
                );
            }

            // Back-references of the caller's own author: only its own organization's post
            // refers to it; back-references of another organization's author are 404 unless
            // readable.
            for owner in ORGS {
                let res = app
                    .get(&format!(
                        "/api/documents/{}/back-references?{flag}",
                        w.author(owner)
                    ))
                    .key(key)
                    .send()
                    .await;
                if reachable(Kind::Read, caller, owner, include_children) {
                    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
                    assert_eq!(sorted_titles(&res.body), vec![World::title(owner)]);
                } else {
                    assert_eq!(res.status, StatusCode::NOT_FOUND, "{context}: {}", res.body);
                }
            }
        }
    }
    // Depth resolution never crosses the wall: the child's draft points at the parent's
    // author, which the child cannot read, so the reference stays as written.
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "reaching up",
                   "author": {"_ref": w.author(Org::Parent)}}}),
        )
        .key(w.key(Org::Child))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    for flag in ["false", "true"] {
        let res = app
            .get(&format!(
                "/api/documents/{id}?depth=2&includeChildOrganizations={flag}"
            ))
            .key(w.key(Org::Child))
            .send()
            .await;
        assert_eq!(
            res.body["data"]["draftData"]["author"],
            json!({"_ref": w.author(Org::Parent)}),
            "{}",
            res.body
        );
    }
    app.stop().await;
}

/// Creates land in the caller's own organization, whatever the body or query says.
async fn writes_land_in_the_callers_own_organization(url: String) {
    let app = TestApp::start(&url).await;
    let w = world(&app).await;
    for caller in ORGS {
        let res = app
            .post(
                "/api/documents?includeChildOrganizations=true",
                json!({"type": "post", "data": {"title": "new"},
                       "organizationId": w.org_id(Org::Stranger)}),
            )
            .key(w.key(caller))
            .send()
            .await;
        match res.status {
            StatusCode::CREATED => {
                assert_eq!(res.body["data"]["organizationId"], w.org_id(caller));
            }
            // A body naming an organization may be refused outright; it must never be obeyed.
            status => assert_eq!(status, StatusCode::BAD_REQUEST, "{}", res.body),
        }
        let res = app
            .post(
                "/api/documents",
                json!({"type": "post", "data": {"title": format!("{caller:?} new")}}),
            )
            .key(w.key(caller))
            .send()
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
        assert_eq!(res.body["data"]["organizationId"], w.org_id(caller));
    }
    app.stop().await;
}

/// The document routes the tests above call without a document id in the path.
const COLLECTION_PATHS: &[&str] = &[
    "/api/documents",
    "/api/documents/query",
    "/api/documents/by-ids",
];

/// The guard behind "a new endpoint that forgets tenancy fails a test": every path the
/// documents router declares must be a row of `ENDPOINTS` or one of `COLLECTION_PATHS`.
#[test]
fn every_document_route_is_in_the_tenancy_table() {
    let router = include_str!("../../crates/cms-server/src/routes/documents.rs");
    let declared: Vec<&str> = router
        .split('"')
        .filter(|piece| piece.starts_with("/api/documents"))
        .collect();
    assert!(declared.len() >= 8, "the router's paths were found");
    for path in declared {
        let covered = COLLECTION_PATHS.contains(&path)
            || ENDPOINTS
                .iter()
                .any(|e| e.path.replace("/1", "/{number}") == path);
        assert!(covered, "{path} has no row in the tenancy tests");
    }
}

/// One endpoint of SPEC.md "Endpoints: Assets" that names an asset, as `ENDPOINTS` for
/// documents; `prepare` adds the body.
struct AssetEndpoint {
    method: Method,
    path: &'static str,
    prepare: for<'a> fn(Call<'a>) -> Call<'a>,
    kind: Kind,
    reachable: StatusCode,
}

fn no_body(call: Call<'_>) -> Call<'_> {
    call
}

const ASSET_ENDPOINTS: &[AssetEndpoint] = &[
    AssetEndpoint {
        method: Method::GET,
        path: "/api/assets/{id}",
        prepare: no_body,
        kind: Kind::Read,
        reachable: StatusCode::OK,
    },
    AssetEndpoint {
        method: Method::GET,
        path: "/api/assets/{id}/references",
        prepare: no_body,
        kind: Kind::Read,
        reachable: StatusCode::OK,
    },
    AssetEndpoint {
        method: Method::GET,
        path: "/api/assets/{id}/signed-url",
        prepare: no_body,
        kind: Kind::Read,
        reachable: StatusCode::OK,
    },
    AssetEndpoint {
        method: Method::PATCH,
        path: "/api/assets/{id}",
        prepare: |call| call.json(json!({"title": "Overwritten"})),
        kind: Kind::Write,
        reachable: StatusCode::OK,
    },
    AssetEndpoint {
        method: Method::POST,
        path: "/api/assets/{id}/poster",
        prepare: |call| call.multipart(&[], Some(("file", "poster.png", &png(4, 3, 10)))),
        kind: Kind::Write,
        reachable: StatusCode::OK,
    },
    AssetEndpoint {
        method: Method::DELETE,
        path: "/api/assets/{id}",
        prepare: no_body,
        kind: Kind::Write,
        reachable: StatusCode::OK,
    },
];

/// The asset routes without an asset id in the path, exercised by
/// `asset_collections_show_own_and_asked_for_children_only`.
const ASSET_COLLECTION_PATHS: &[&str] = &[
    "/api/assets",
    "/api/assets/bulk",
    "/api/assets/references/counts",
    "/api/assets/upload-url",
    "/api/assets/confirm",
];

/// A video asset (so a poster can be attached) per organization, uploaded with its key, and
/// a post of that organization referencing it.
async fn asset_world(app: &TestApp) -> (World, Vec<(Org, String)>) {
    let w = world(app).await;
    let mut assets = Vec::new();
    for org in ORGS {
        let mut video = vec![0, 0, 0, 0x18];
        video.extend_from_slice(b"ftypmp42");
        video.extend_from_slice(&[0; 40]);
        let res = app
            .req(Method::POST, ASSETS)
            .key(w.key(org))
            .multipart(
                &[("title", &format!("{org:?} clip"))],
                Some(("file", "clip.mp4", &video)),
            )
            .send()
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
        let id = res.body["data"]["id"].as_str().unwrap().to_string();
        create_doc(
            app,
            w.key(org),
            "post",
            // A video is no image: it is placed in the text as a file.
            json!({"title": format!("{org:?} with clip"),
                   "body": [{"_type": "file", "_key": "clip", "asset": {"_ref": id}}]}),
        )
        .await;
        assets.push((org, id));
    }
    (w, assets)
}

fn asset_of(assets: &[(Org, String)], org: Org) -> &str {
    &assets.iter().find(|(o, _)| *o == org).unwrap().1
}

fn tenancy_config(url: &str) -> cms::Config {
    let mut config = config_for(url);
    config.assets.signing_secret = Some("an asset signing secret of 32+ characters".into());
    config
}

async fn every_asset_endpoint_honours_tenancy(url: String) {
    let app = TestApp::with(tenancy_config(&url), None).await;
    let (w, assets) = asset_world(&app).await;
    for endpoint in ASSET_ENDPOINTS {
        for caller in ORGS {
            for owner in ORGS {
                for include_children in [false, true] {
                    if caller == owner {
                        continue;
                    }
                    let path = endpoint.path.replace("{id}", asset_of(&assets, owner));
                    let path = match include_children {
                        true => format!("{path}?includeChildOrganizations=true"),
                        false => path,
                    };
                    let call = app.req(endpoint.method.clone(), &path).key(w.key(caller));
                    let res = (endpoint.prepare)(call).send().await;
                    let expected = match reachable(endpoint.kind, caller, owner, include_children) {
                        true => endpoint.reachable,
                        false => StatusCode::NOT_FOUND,
                    };
                    assert_eq!(
                        res.status, expected,
                        "{} {path} by {caller:?} on {owner:?}'s asset: {}",
                        endpoint.method, res.body
                    );
                }
            }
        }
    }
    // Nothing above changed another organization's asset.
    for org in ORGS {
        let res = app
            .get(&format!("{ASSETS}/{}", asset_of(&assets, org)))
            .key(w.key(org))
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        assert_eq!(res.body["data"]["title"], format!("{org:?} clip"));
        assert_eq!(res.body["data"]["posterId"], Value::Null);
    }
    // Each endpoint works on the caller's own asset, in table order (the post that references
    // it goes first, so the delete at the end is not refused).
    let own = asset_of(&assets, Org::Stranger);
    let referencing = app
        .get(&format!("{ASSETS}/{own}/references"))
        .key(w.key(Org::Stranger))
        .send()
        .await;
    let post = referencing.body["data"]["references"][0]["documentId"]
        .as_str()
        .unwrap()
        .to_string();
    let res = app
        .req(Method::DELETE, &format!("/api/documents/{post}"))
        .key(w.key(Org::Stranger))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    for endpoint in ASSET_ENDPOINTS {
        let path = endpoint.path.replace("{id}", own);
        let call = app
            .req(endpoint.method.clone(), &path)
            .key(w.key(Org::Stranger));
        let res = (endpoint.prepare)(call).send().await;
        assert_eq!(
            res.status, endpoint.reachable,
            "{} {path} on its own asset: {}",
            endpoint.method, res.body
        );
    }
    app.stop().await;
}

/// Lists, reference counts and bulk deletes: what each caller sees and reaches.
async fn asset_collections_show_own_and_asked_for_children_only(url: String) {
    let app = TestApp::with(tenancy_config(&url), None).await;
    let (w, assets) = asset_world(&app).await;
    let all: Vec<String> = ORGS
        .iter()
        .map(|o| asset_of(&assets, *o).to_string())
        .collect();
    for caller in ORGS {
        for include_children in [false, true] {
            let mut expected: Vec<String> = ORGS
                .iter()
                .filter(|owner| reachable(Kind::Read, caller, **owner, include_children))
                .map(|o| format!("{o:?} clip"))
                .collect();
            expected.sort();
            let res = app
                .get(&format!(
                    "{ASSETS}?includeChildOrganizations={include_children}"
                ))
                .key(w.key(caller))
                .send()
                .await;
            let mut titles: Vec<String> = res.body["data"]
                .as_array()
                .unwrap_or_else(|| panic!("{}", res.body))
                .iter()
                .map(|a| a["title"].as_str().unwrap().to_string())
                .collect();
            titles.sort();
            assert_eq!(titles, expected, "{caller:?}, children {include_children}");
        }
        // Counts come from the caller's documents (and its children's) only.
        let res = app
            .post(
                &format!("{ASSETS}/references/counts"),
                json!({ "ids": all }),
            )
            .key(w.key(caller))
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        for owner in ORGS {
            let counted = caller == owner || (caller == Org::Parent && owner == Org::Child);
            assert_eq!(
                res.body["data"][asset_of(&assets, owner)],
                u64::from(counted),
                "{caller:?} counting {owner:?}'s asset"
            );
        }
    }
    // A bulk delete naming other organizations' assets deletes none of them.
    for caller in ORGS {
        let others: Vec<&str> = ORGS
            .iter()
            .filter(|o| **o != caller)
            .map(|o| asset_of(&assets, *o))
            .collect();
        let res = app
            .req(Method::DELETE, &format!("{ASSETS}/bulk"))
            .key(w.key(caller))
            .json(json!({ "ids": others }))
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        assert_eq!(res.body["data"], json!({"deleted": 0, "failed": 2}));
    }
    for org in ORGS {
        let res = app
            .get(&format!("{ASSETS}/{}", asset_of(&assets, org)))
            .key(w.key(org))
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    }
    app.stop().await;
}

/// Every path the assets router declares is a row of `ASSET_ENDPOINTS` or one of
/// `ASSET_COLLECTION_PATHS`.
#[test]
fn every_asset_route_is_in_the_tenancy_table() {
    let router = include_str!("../../crates/cms-server/src/routes/assets.rs");
    let declared: Vec<&str> = router
        .split('"')
        .filter(|piece| piece.starts_with("/api/assets"))
        .collect();
    assert!(declared.len() >= 9, "the router's paths were found");
    for path in declared {
        let covered = ASSET_COLLECTION_PATHS.contains(&path)
            || ASSET_ENDPOINTS.iter().any(|e| e.path == path);
        assert!(covered, "{path} has no row in the tenancy tests");
    }
}

fn sorted_titles(body: &Value) -> Vec<String> {
    let mut titles: Vec<String> = body["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {body}"))
        .iter()
        .map(|d| {
            d["draftData"]["title"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    titles.sort();
    titles
}

cms_store::both_engines!(
    every_document_endpoint_honours_tenancy,
    collections_show_own_and_asked_for_children_only,
    writes_land_in_the_callers_own_organization,
    every_asset_endpoint_honours_tenancy,
    asset_collections_show_own_and_asked_for_children_only,
);
