//! The security test table (issue 11, Build point 5): the access-control bypass classes that
//! have hit other content services, one row each, with the request and the refusal expected.
//!
//! Every row runs against ONE shared fixture per engine ([`fixture`]): an app with a parent
//! organization, its child and an outsider; people holding owner, admin, editor, viewer and
//! custom roles; read-only and capability-limited API keys; a `note` schema with a field only
//! `admin` may read and one only `admin` may update; documents that reference each other across
//! organizations; an asset a document references; and a tiny plugin route that reads through
//! the service. Rows that end sessions, change roles or remove members act on people of their
//! own, so the rows do not depend on each other's order. A failing row does not stop the table:
//! every row runs, and the test then fails naming each failed row, its class, the attack and
//! the refusal it expected.

mod jobs;

use jobs::{
    job_powers_beyond_the_organization_need_a_super_admin_session,
    super_admin_key_stays_inside_its_organization,
};
mod locales;
use locales::{
    localized_hidden_field_stays_hidden_in_every_locale, organization_locales_need_org_settings,
};
mod people;
use people::*;
mod single_sign_on;
use single_sign_on::single_sign_on_never_takes_over_or_raises;
mod two_factor;
use two_factor::two_factor_is_the_persons_and_its_requirement_holds;
mod audit;
use audit::audit_log_needs_org_settings_and_stays_in_its_organization;
mod public_role;
use public_role::*;
mod search;
use search::search_never_reads_a_hidden_field;
mod presence;
use presence::presence_stays_in_the_documents_organization;
mod preview;
use preview::{
    preview_actor_is_refused_by_the_service, preview_link_needs_update_on_that_document,
    preview_token_reads_one_draft_as_its_maker,
};
mod delivery;
use delivery::{cookie_writes_pass_from_listed_origins_only, entity_tags_confirm_no_hidden_field};
mod webhooks;
use webhooks::{
    webhook_routes_need_org_settings_in_the_organization,
    webhook_routes_refuse_anonymous_and_preview_callers, webhook_secret_is_never_read_back,
};
mod event_stream;
use event_stream::*;
mod asset_dedup;
use asset_dedup::duplicate_uploads_answer_only_the_callers_own_asset;
mod mcp;
use mcp::{
    hidden_field_stripped_from_mcp_tools, mcp_foreign_ids_are_not_found,
    mcp_tools_hold_the_key_scope,
};
mod metrics;
use metrics::metrics_need_the_metrics_token;
mod transfer;
use transfer::an_export_of_one_organization_carries_it_alone_and_no_way_in;
mod images;
use images::{
    pixel_bomb_transform_is_refused_from_its_header,
    transforms_need_a_signature_over_their_parameters,
};

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use axum::extract::Path;
use axum::http::{Method, StatusCode};
use cms::core::RequiredCapabilities;
use cms::core::schema::parse_schemas;
use cms::plugin::{Plugin, PluginParts};
use cms::server::plugins::Service;
use cms::server::{ApiResult, Authed, PluginRoute, ok};
use cms::service::MailKind;
use cms::service::documents::ReadOptions;
use futures_util::FutureExt;
use serde_json::{Value, json};

use crate::assets::{ASSETS, png};
use crate::people_support::{sign_in, token_of, user_id};
use crate::support::{PASSWORD, Reply, Session, TestApp, config_for};

mod hardening;
use hardening::*;

const DOCS: &str = "/api/documents";
const QUERY: &str = "/api/documents/query";
const GQL: &str = "/api/graphql";
/// The upload limit of the fixture (`assets.maxUploadBytes`).
const MAX_UPLOAD: usize = 64 * 1024;
/// The one origin of the fixture's `cors.origins`.
const LISTED_ORIGIN: &str = "https://site.example";
/// The JSON body limit of the fixture (`server.maxJsonBytes`).
const MAX_JSON: usize = 256 * 1024;
/// The fixture's `assets.signingSecret`; its `assets.transformSigning` is on.
const SIGNING_SECRET: &str = "the fixture's asset signing secret, 32+ characters";

/// The fixture's `metrics.token`.
const METRICS_TOKEN: &str = "the fixture's metrics token, 32+ characters long";

/// Values only an `admin` may read; none of them may appear in an answer to anyone else.
const HIDDEN: [&str; 5] = ["S-ALPHA", "S-BETA", "S-OUT", "S-CHILD", "\"secret\""];

// ---------------------------------------------------------------------------------------------
// The fixture
// ---------------------------------------------------------------------------------------------

/// One app per engine and everything the rows reach.
struct Fx {
    app: TestApp,
    parent: String,
    child: String,
    outsider: String,
    /// Instance super admin, owner of the parent (bypasses schema and field rules).
    ada: Session,
    /// Role `admin` in the parent: reads and updates the admin-only fields.
    admin: Session,
    /// Role `editor` in the parent: the usual attacker of the field rules.
    editor: Session,
    /// Role `viewer` in the parent.
    viewer: Session,
    /// Custom role `auditor` in the parent (`document.read` only).
    auditor: Session,
    /// Role `admin` in the child organization.
    child_admin: Session,
    /// Role `admin` in the outsider organization.
    stranger: Session,
    /// People whose sessions, membership or role a row ends or changes.
    quitter: Session,
    forgetful: Session,
    leaver: Session,
    demoted: Session,
    shifting: Session,
    /// Parent keys made by `admin`: `permissions: [read]`, and `capabilities: [document.read,
    /// document.create]`.
    read_key: String,
    caps_key: String,
    /// Write keys of the child (by `child_admin`) and of the outsider (by `stranger`).
    child_key: String,
    stranger_key: String,
    /// Write keys of `leaver` and `demoted` (both `admin` in the parent until their row).
    leaver_key: String,
    demoted_key: String,
    /// Parent documents: `alpha` (published, has the asset as cover), `beta` (published,
    /// references alpha), `cross` (references the outsider's note).
    alpha: String,
    beta: String,
    cross: String,
    /// The child's note (references alpha, its parent's).
    child_note: String,
    /// The outsider's note (published, has the outsider's asset as cover).
    stranger_note: String,
    /// The parent's asset (alpha's cover) and the outsider's.
    asset: String,
    stranger_asset: String,
    /// The assistant's model: a puppet making the tool calls a row spells.
    _model: crate::agent::Model,
    /// A single sign-on provider `corp` (new accounts from example.com join the parent as
    /// viewers).
    oidc: crate::oidc_provider::OidcProvider,
}

fn schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "document", "name": "note", "fields": [
            { "name": "title", "type": "string", "indexed": true, "searchable": true },
            { "name": "secret", "type": "string", "indexed": true, "searchable": true,
              "access": { "read": ["admin"], "update": ["admin"] } },
            { "name": "locked", "type": "string", "access": { "update": ["admin"] } },
            { "name": "rank", "type": "number", "indexed": true },
            { "name": "ref", "type": "reference", "to": ["note"] },
            { "name": "cover", "type": "image" },
            { "name": "motto", "type": "string", "localized": true, "searchable": true,
              "access": { "read": ["admin"], "update": ["admin"] } }
        ] },
        // A type only `admin` may read at all (the event stream's rows).
        { "type": "document", "name": "memo", "access": { "read": ["admin"] },
          "fields": [{ "name": "title", "type": "string" }] }
    ]))
    .unwrap()
}

/// A plugin route reading a note through the service with the caller's actor.
struct Probe;

impl Plugin for Probe {
    fn id(&self) -> &str {
        "probe"
    }

    fn register(&self, parts: &mut PluginParts) {
        let read = parts.required(&["document.read"]);
        parts.route(PluginRoute::new(
            "note",
            Method::GET,
            "/probe/notes/{id}",
            read,
            |Service(cms): Service, Authed(actor): Authed, Path(id): Path<String>| async move {
                let doc = cms
                    .documents()
                    .get(&actor, &id, ReadOptions::default())
                    .await?;
                ApiResult::Ok(ok(doc))
            },
        ));
        // A members-only route too, so both gates are in the table.
        parts.route(PluginRoute::new(
            "whoami",
            Method::GET,
            "/probe/whoami",
            RequiredCapabilities::Members,
            |Authed(actor): Authed| async move { ok(actor.user.email) },
        ));
    }
}

async fn new_org(app: &TestApp, ada: &Session, slug: &str, parent: Option<&str>) -> String {
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

async fn person(app: &TestApp, name: &str, org: &str, role: &str) -> Session {
    let s = app.sign_up(name, &format!("{name}@example.com")).await;
    app.join(&s, org, role).await;
    s
}

async fn new_note(app: &TestApp, s: &Session, data: Value, publish: bool) -> String {
    let res = app
        .post(
            DOCS,
            json!({"type": "note", "data": data, "publish": publish}),
        )
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

async fn new_asset(app: &TestApp, s: &Session, name: &str) -> String {
    let res = app
        .req(Method::POST, ASSETS)
        .cookie(s)
        .multipart(&[], Some(("file", name, &png(4, 3, 10))))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

async fn fixture(url: &str) -> Fx {
    let mut config = config_for(url);
    config.auth.invite_only = false;
    config.assets.max_upload_bytes = MAX_UPLOAD as u64;
    config.assets.signing_secret = Some(SIGNING_SECRET.into());
    config.assets.transform_signing = true;
    config.server.max_json_bytes = MAX_JSON;
    config.cors.origins = vec![LISTED_ORIGIN.to_string()];
    config.locales.available = vec!["en".into(), "de".into()];
    config.metrics.token = Some(METRICS_TOKEN.into());
    // Webhook endpoints store their signing secrets sealed (the rows of 26).
    config.plugins.secret_encryption_key =
        Some("a secret encryption key of at least thirty-two characters".into());
    let model = crate::agent::Model::puppet().await;
    config.agent.base_url = Some(model.base_url.clone());
    config.agent.model = Some("puppet".into());
    let oidc = crate::oidc_provider::OidcProvider::start(&format!(
        "{}/api/auth/oidc/corp/callback",
        config.public_base_url()
    ));
    config.auth.oidc.providers = vec![oidc.config("viewer")];
    let app = TestApp::custom(config, |b| b.schemas(schemas()).plugin(Probe)).await;

    let ada = app.sign_up("Ada", "ada@example.com").await;
    let parent = app.active_organization(&ada).await;
    let child = new_org(&app, &ada, "child", Some(&parent)).await;
    let outsider = new_org(&app, &ada, "outsider", None).await;
    for (name, capabilities) in [
        ("auditor", json!(["document.read"])),
        ("shifting", json!(["document.read", "document.create"])),
    ] {
        let res = app
            .post(
                "/api/roles",
                json!({"name": name, "capabilities": capabilities}),
            )
            .cookie(&ada)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    }

    let admin = person(&app, "admin", &parent, "admin").await;
    let editor = person(&app, "editor", &parent, "editor").await;
    let viewer = person(&app, "viewer", &parent, "viewer").await;
    let auditor = person(&app, "auditor", &parent, "auditor").await;
    let child_admin = person(&app, "childadmin", &child, "admin").await;
    let stranger = person(&app, "stranger", &outsider, "admin").await;
    let quitter = person(&app, "quitter", &parent, "viewer").await;
    let forgetful = person(&app, "forgetful", &parent, "viewer").await;
    let leaver = person(&app, "leaver", &parent, "admin").await;
    let demoted = person(&app, "demoted", &parent, "admin").await;
    let shifting = person(&app, "shifting", &parent, "shifting").await;

    let read_key = app
        .create_key(&admin, json!({"name": "read", "permissions": ["read"]}))
        .await;
    let caps_key = app
        .create_key(
            &admin,
            json!({"name": "caps", "permissions": ["write"],
                   "capabilities": ["document.read", "document.create"]}),
        )
        .await;
    let write = json!({"name": "write", "permissions": ["write"]});
    let child_key = app.create_key(&child_admin, write.clone()).await;
    let stranger_key = app.create_key(&stranger, write.clone()).await;
    let leaver_key = app.create_key(&leaver, write.clone()).await;
    let demoted_key = app.create_key(&demoted, write).await;

    let asset = new_asset(&app, &admin, "pixel.png").await;
    let alpha = new_note(
        &app,
        &admin,
        json!({"title": "Alpha", "secret": "S-ALPHA", "locked": "L-ALPHA", "rank": 1,
               "cover": {"asset": {"_ref": asset}}}),
        true,
    )
    .await;
    let beta = new_note(
        &app,
        &admin,
        json!({"title": "Beta", "secret": "S-BETA", "locked": "L-BETA", "rank": 2,
               "ref": {"_ref": alpha}}),
        true,
    )
    .await;
    let stranger_asset = new_asset(&app, &stranger, "other.png").await;
    let stranger_note = new_note(
        &app,
        &stranger,
        json!({"title": "Outsider", "secret": "S-OUT",
               "cover": {"asset": {"_ref": stranger_asset}}}),
        true,
    )
    .await;
    let cross = new_note(
        &app,
        &admin,
        json!({"title": "Cross", "rank": 3, "ref": {"_ref": stranger_note}}),
        false,
    )
    .await;
    let child_note = new_note(
        &app,
        &child_admin,
        json!({"title": "Child", "secret": "S-CHILD", "ref": {"_ref": alpha}}),
        false,
    )
    .await;

    Fx {
        app,
        parent,
        child,
        outsider,
        ada,
        admin,
        editor,
        viewer,
        auditor,
        child_admin,
        stranger,
        quitter,
        forgetful,
        leaver,
        demoted,
        shifting,
        read_key,
        caps_key,
        child_key,
        stranger_key,
        leaver_key,
        demoted_key,
        alpha,
        beta,
        cross,
        child_note,
        stranger_note,
        asset,
        stranger_asset,
        _model: model,
        oidc,
    }
}

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

type RowFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One attack: its class, its name, the request in a line, the refusal expected in a line.
struct Row {
    class: &'static str,
    name: &'static str,
    attack: &'static str,
    refusal: &'static str,
    run: fn(Arc<Fx>) -> RowFuture,
}

macro_rules! row {
    ($class:literal, $name:ident, $attack:literal => $refusal:literal) => {
        Row {
            class: $class,
            name: stringify!($name),
            attack: $attack,
            refusal: $refusal,
            run: |fx| Box::pin($name(fx)),
        }
    };
}

fn rows() -> Vec<Row> {
    vec![
        // 1. `where` and `sort` on a field the caller may not read.
        row!("1 where/sort oracle", where_on_hidden_field_matches_nothing,
            "editor: POST /api/documents/query where secret equals/not_equals/exists/like (alone and inside and)"
            => "200, total 0 whatever the value (admin's same filter finds 1)"),
        row!("1 where/sort oracle", hidden_clause_in_or_is_value_blind,
            "editor: where or[secret equals <right|wrong>, title equals Beta]"
            => "200, exactly [Beta] for either value"),
        row!("1 where/sort oracle", sort_on_hidden_field_is_ignored,
            "editor: GET /api/documents?sort=secret|-secret and query sort secret"
            => "200, the default order (admin's sort=secret does reorder)"),
        row!("1 where/sort oracle", graphql_where_and_sort_on_hidden_field,
            "editor: allNote(where: {secret: {equals: S-ALPHA}}) and allNote(sort: [\"secret\"])"
            => "[] for the where, default order for the sort"),
        row!("1 where/sort oracle", published_hash_is_no_oracle,
            "editor: read publishedHash of a note (REST, GraphQL, /api/events): visible copy + a guess, hashed, confirms the guess"
            => "no publishedHash for a caller who may not read every field (the admin's is the real digest)"),
        // 2. Filters never dropped.
        row!("2 filter never dropped", undeclared_or_malformed_filter_matches_nothing,
            "editor: where on an undeclared field, a malformed clause, an unknown operator on a hidden field"
            => "200, total 0 (never every row)"),
        row!("2 filter never dropped", graphql_undeclared_filter_matches_nothing,
            "editor: allNote(where: {nosuch: {equals: 1}})" => "[] (never every row)"),
        // 3. Field read and write bypass.
        row!("3 field bypass", hidden_field_stripped_from_every_rest_read,
            "editor: get (both copies), list, query, by-ids, back-references, versions, version, depth"
            => "200, the admin-only field absent everywhere, readable fields present"),
        row!("3 field bypass", hidden_field_stripped_from_graphql,
            "editor: Note(id){secret}, allNote{secret}, reference ref{secret}" => "secret null"),
        row!("3 field bypass", hidden_field_stripped_from_plugin_route,
            "editor: GET /api/probe/notes/{id} (plugin route reading through the service)"
            => "200, field absent (admin sees it)"),
        row!("3 field bypass", hidden_field_stripped_from_assistant_tools,
            "editor via POST /api/agent/chat: get_document, query_documents where/sort on secret, update_document {secret, locked}, get_document of the outsider's note"
            => "no admin-only value in any tool result, total 0, stored values unchanged, not found"),
        row!("3 field bypass", hidden_field_stripped_from_mcp_tools,
            "editor session via POST /api/mcp: get_document, query_documents where/sort on secret, update_document {secret, locked}, resources/read of a note"
            => "no admin-only value in any answer, total 0, stored values unchanged"),
        row!("3 field bypass", hidden_field_stripped_from_write_answers,
            "editor: PUT, publish, create answers" => "no admin-only value in any answer"),
        row!("3 field bypass", unwritable_fields_survive_rest_put,
            "editor: PUT alpha data {secret: FORGED, locked: FORGED}"
            => "200, stored secret and locked unchanged"),
        row!("3 field bypass", unwritable_fields_survive_graphql_update,
            "editor: updateNote(id, data {secret: FORGED, locked: FORGED})"
            => "stored values unchanged"),
        row!("3 field bypass", unwritable_fields_absent_on_create,
            "editor: POST /api/documents data {secret, locked}" => "201, both fields absent"),
        // 4. Tenancy escape.
        row!("4 tenancy", by_ids_omits_other_organizations,
            "editor: by-ids with the outsider's and the child's ids"
            => "200, only own ids (child's with includeChildOrganizations)"),
        row!("4 tenancy", back_references_of_foreign_document_are_404,
            "editor: GET back-references of the outsider's note" => "404 handler envelope, never 403"),
        row!("4 tenancy", versions_of_foreign_document_are_404,
            "editor: /versions, /versions/1, restore of the outsider's note" => "404, never 403"),
        row!("4 tenancy", depth_never_resolves_across_organizations,
            "editor: GET cross?depth=2 (refers to the outsider); child: GET its note?depth=2 (refers to the parent)"
            => "200, the reference stays {_ref}"),
        row!("4 tenancy", foreign_asset_references_are_404_and_uncounted,
            "editor: GET /api/assets/{outsider}/references; references/counts with both assets"
            => "404; the outsider's asset counts 0"),
        row!("4 tenancy", graphql_foreign_document_is_null,
            "editor: Note(id: outsider's) and updateNote on it" => "null without error; NOT_FOUND on the mutation"),
        row!("4 tenancy", graphql_asset_of_another_organization_stays_out,
            "editor: a note whose cover names the outsider's asset, read as cover { asset { ... } }"
            => "asset null (own asset resolves)"),
        row!("4 tenancy", child_cannot_read_its_parent,
            "child key: GET parent's note (also with includeChildOrganizations), list"
            => "404; the list shows the child's only"),
        row!("4 tenancy", writes_with_include_children_stay_home,
            "parent editor: PUT/DELETE the child's note ?includeChildOrganizations=true; create with it"
            => "404 for the child's note (it stays); the create lands in the parent"),
        row!("4 tenancy", mcp_foreign_ids_are_not_found,
            "editor via /api/mcp: get/update/publish_document and resources/read of the outsider's and the child's notes; outsider key: get_document of the parent's"
            => "isError `document not found` / -32002, nothing changed"),
        // 5. Bare ids.
        row!("5 bare ids", foreign_document_by_bare_id_is_404,
            "outsider key: GET/PUT/DELETE /api/documents/{parent's id}; an asset id as a document id"
            => "404 handler envelope, nothing changed"),
        row!("5 bare ids", foreign_asset_by_bare_id_is_404,
            "editor: GET/PATCH/DELETE /api/assets/{outsider's}; a document id as an asset id"
            => "404, the asset unchanged"),
        // 6. Mass assignment.
        row!("6 mass assignment", top_level_system_fields_on_create_are_ignored,
            "POST /api/documents with organizationId, createdBy, id, _meta, revision at the top level"
            => "201 with the real organization, author, a new id and revision 1"),
        row!("6 mass assignment", system_fields_inside_data_are_refused,
            "POST/PUT data {organizationId|createdBy|_meta|id|revision: ...}"
            => "400 with an `unknown` issue naming the key; nothing stored"),
        row!("6 mass assignment", top_level_system_fields_on_update_are_ignored,
            "PUT with organizationId, createdBy, _meta, revision at the top level"
            => "200, organization, author and revision the real ones"),
        row!("6 mass assignment", asset_owner_cannot_be_assigned,
            "upload with organizationId of the outsider; PATCH an asset with organizationId"
            => "403 {error}; 400 (unknown key), the asset unchanged"),
        // 7. Sessions and keys that must die.
        row!("7 revocation", sign_out_kills_the_session,
            "cookie and Bearer token after POST /api/auth/sign-out" => "401 {error: Unauthorized}"),
        row!("7 revocation", password_reset_kills_every_session,
            "both sessions of a user after reset-password" => "401 {error: Unauthorized}"),
        row!("7 revocation", removed_member_and_their_key_lose_access,
            "session and key of a member after DELETE /api/organizations/members"
            => "session 403 {error}; key 401 {error}"),
        row!("7 revocation", role_change_applies_on_the_next_request,
            "admin demoted to viewer: POST /api/documents by session and by their key"
            => "403 {error: Forbidden} at once; reads still 200"),
        row!("7 revocation", custom_role_edit_applies_on_the_next_request,
            "custom role loses document.create: POST /api/documents" => "403 at once (no role cache)"),
        row!("7 revocation", cookie_write_without_origin_is_refused,
            "cookie POST /api/documents without Origin/Referer (CSRF)" => "403 {error: Forbidden}"),
        // 8. GraphQL amplification.
        row!("8 graphql amplification", graphql_alias_flood_is_refused,
            "one query with 600 aliases of allNote{id}" => "200 with error `Query is too complex.`, data null"),
        row!("8 graphql amplification", graphql_nesting_beyond_the_depth_limit_is_refused,
            "ref{ref{...}} nested past GRAPHQL_MAX_DEPTH" => "200 with error `Query is nested too deep.`, data null"),
        // 9. Limits.
        row!("9 limits", document_list_bounds_are_400,
            "GET /api/documents pageSize/limit -1|0|101|huge, page 0|-1|overflow, depth -1|6"
            => "400 handler envelope, never 500"),
        row!("9 limits", query_and_read_bounds_are_400,
            "query limit/page/depth out of range; GET by id depth 6; versions limit/offset out of range; by-ids depth 9"
            => "400 handler envelope"),
        row!("9 limits", asset_job_event_bounds_are_400,
            "assets limit -1|0|101, offset -1; jobs and events page 0, pageSize -1|101, not a number"
            => "400 handler envelope; a huge asset offset is an empty page"),
        row!("9 limits", graphql_bounds_are_refused,
            "allNote(limit: -1 | 0 | 1000, page: 0)" => "BAD_REQUEST error, no data"),
        row!("9 limits", json_body_over_the_limit_is_413,
            "POST /api/documents/query with a body past server.maxJsonBytes" => "413 Payload Too Large"),
        // 10. Active content.
        row!("10 active content", svg_and_html_are_served_inert,
            "upload SVG with <script> and HTML named .png, then GET /media"
            => "attachment, nosniff, CSP default-src 'none' + sandbox; a PNG stays inline"),
        // 11. Bombs and size.
        row!("11 upload size", pixel_bomb_is_stored_without_decoding,
            "upload a 100000x100000 PNG header of ~100 bytes"
            => "201, dimensions from the header, served byte for byte"),
        row!("11 upload size", pixel_bomb_transform_is_refused_from_its_header,
            "GET /media/{100000x100000 PNG}?w=10&h=10&fit=crop by a reader"
            => "400 naming the megapixel limit, before any decode"),
        row!("11 upload size", upload_over_the_limit_is_413,
            "upload past assets.maxUploadBytes" => "413 Payload Too Large, nothing stored"),
        row!("10 active content", transforms_need_a_signature_over_their_parameters,
            "assets.transformSigning: /media?w=8 anonymous, by outsider session/key, child admin; sig for w=8 used for w=9, with fm added, the original's sig, expired"
            => "403 {error: Forbidden}; a parent reader or a matching signature 200"),
        // 12. Unbounded bulk operations.
        row!("12 bulk", by_ids_over_100_is_400,
            "GET by-ids with 101 ids" => "400 (100 is accepted)"),
        row!("12 bulk", asset_bulk_over_the_limit_is_400,
            "DELETE /api/assets/bulk and references/counts with 1001 ids, or none"
            => "400 handler envelope (1000 is accepted)"),
        // 13. Enumeration.
        row!("13 enumeration", sign_in_does_not_tell_unknown_from_wrong,
            "sign-in with an unknown e-mail and with a wrong password" => "the same 401 and body"),
        row!("13 enumeration", password_reset_request_does_not_tell,
            "request-password-reset for a known and an unknown address" => "the same 200 and body"),
        row!("13 enumeration", invite_only_sign_up_refuses_before_existence,
            "inviteOnly: sign-up with an existing and with a new e-mail"
            => "the same 403 body (422 only when sign-up is open)"),
        // 14. API key scope.
        row!("14 key scope", read_only_key_cannot_write,
            "read key: POST/PUT/DELETE documents, publish, upload, GraphQL mutation"
            => "403 {error: Forbidden} / FORBIDDEN; reads 200"),
        row!("14 key scope", capability_key_does_exactly_what_is_listed,
            "key with capabilities [document.read, document.create]: create, update, delete, publish, assets"
            => "create 201, read 200, everything else 403"),
        row!("14 key scope", key_cannot_reach_another_organization,
            "outsider key: list notes, by-ids, GraphQL Note(id) of the parent's"
            => "only its own documents"),
        row!("14 key scope", mcp_tools_hold_the_key_scope,
            "read key via /api/mcp: tools/list, tools/call create_document; capability key: create with publish, publish_document"
            => "no writing tool listed, -32602 on call; the capability key lists create but not publish, both refused, nothing stored"),
        row!("14 key scope", bad_or_expired_key_is_401_even_with_a_cookie,
            "x-api-key unknown (beside a valid cookie); a key past expiresInDays"
            => "401 {error: Unauthorized}"),
        row!("14 key scope", plugin_route_gate_holds,
            "GET /api/probe/notes/{id} with no credential, with a key of another organization"
            => "401 {error}; 404"),
        // 15-17. People (issue 21, CONTRACT.md section 13): role ceiling, invitation takeover,
        // e-mail change.
        row!("15 role ceiling", admin_cannot_change_own_role,
            "admin: PATCH /api/organizations/members own userId to owner, to admin"
            => "403 {error: Forbidden}, role unchanged"),
        row!("15 role ceiling", role_ceiling_caps_assignment_and_invitation,
            "member with member.changeRole+member.invite, without apiKey.manage: give/invite a role holding it, admin, owner"
            => "403 for each (role ceiling {error: Forbidden})"),
        row!("15 role ceiling", member_with_password_stays_under_the_ceiling,
            "POST /api/organizations/members: editor (no member.invite); admin making an owner; admin with the viewer's e-mail"
            => "403 {error}; 403; 409 and the viewer's password unchanged"),
        row!("16 invitation takeover", invited_address_without_secret_joins_nothing,
            "sign-up with an invited address and a guessed invitationToken; accept by id with it; GET invitations"
            => "account created in no organization; accept 403 {error}; invitation pending, no secret listed"),
        row!("17 e-mail change", email_change_needs_password_and_new_mailbox,
            "session: PATCH /api/user email without currentPassword, with a wrong one, with the right one"
            => "400; 403 {error}; 200 with the e-mail unchanged until the new address's link is followed"),
        // 18, 19. Instance-wide powers need a session (issue 21, Build point 1).
        row!("18 job scope", job_powers_beyond_the_organization_need_a_super_admin_session,
            "super admin's key: GET jobs/events/jobs health ?scope=all; cancel/retry an outsider's job; viewer cancels a job"
            => "403 {error}; 404, job unchanged; 403 (the super admin's session: 200)"),
        row!("19 key scope instance", super_admin_key_stays_inside_its_organization,
            "super admin's key: switch organization, GET/DELETE another organization, instance settings"
            => "403 {error}; 404; 403, organization kept; 403"),
        // 20. Hardening (issue 21, Build point 8).
        row!("20 hardening", redirect_targets_stay_on_the_instance,
            "GET /api/auth/verify-email?callbackURL=/<tab>/evil, //evil, /\\evil, https://evil; signed out GET /admin/..."
            => "400 naming callbackURL, no Location; sign-in redirect= a path of the instance"),
        row!("20 hardening", api_answers_are_neither_sniffed_nor_framed,
            "plugin route 401/404, unknown route, read key 403, GraphQL, public form route"
            => "x-content-type-options: nosniff and x-frame-options: DENY on each"),
        row!("20 hardening", form_flood_from_one_address_is_429,
            "31 POST /api/forms/{id}/submissions in a minute from one address"
            => "the 31st is 429 Too Many Requests with Retry-After; another address is not held"),
        // 21. Localization (issue 26, CONTRACT.md section 17). Last: it adds a note.
        row!("21 localization", localized_hidden_field_stays_hidden_in_every_locale,
            "editor: read a note whose admin-only localized motto has en and de values with locale=en|de|*, list, by-ids, where motto in each locale; PUT motto with locale=de and *"
            => "no motto value anywhere, total 0 (the admin's filter finds 1), stored values unchanged"),
        row!("21 localization", organization_locales_need_org_settings,
            "editor session, read key, outsider admin: PATCH /api/organizations/{parent} {locales}; GET /api/locales signed out"
            => "403 {error}; 403; 404; 401"),
        // 22. Full-text search (issue 23, CONTRACT.md section 14). It adds a note too.
        row!("22 search", search_never_reads_a_hidden_field,
            "editor: search=<word only in the admin-only secret / localized motto> on list and query, in en and de; search=title -<hidden word>; GraphQL allNote(search:)"
            => "total 0 (the admin finds 1); the hidden word excludes nothing and scores nothing; []"),
        // 23. Preview links (issue 24, CONTRACT.md section 15).
        row!("23 preview link", preview_token_reads_one_draft_as_its_maker,
            "editor's token for beta: GET beta?depth=1; alpha, outsider's, child's note, list, by-ids, plugin route, organizations, user/access, GraphQL, PUT"
            => "200 without a hidden value; 401 {error: Unauthorized} for everything else"),
        row!("23 preview link", preview_actor_is_refused_by_the_service,
            "the token's actor straight into the service: get another id, by-ids, list, update, delete, new link, organizations, members, keys, preferences"
            => "Unauthenticated for each; the one read works"),
        row!("23 preview link", preview_link_needs_update_on_that_document,
            "viewer, read key: POST/DELETE /api/documents/{beta}/preview; stranger, its key, child admin"
            => "403 {error: Forbidden}; 404 handler envelope"),
        // 24. Delivery to frontends (issue 24, CONTRACT.md section 15).
        row!("24 delivery", cookie_writes_pass_from_listed_origins_only,
            "editor cookie POST /api/documents with Origin https://evil.example, http://site.example, https://site.example.evil.example, https://site.example:8443 (only https://site.example is listed)"
            => "403 {error: Forbidden}, no CORS header, nothing written (the listed origin passes the check)"),
        row!("24 delivery", entity_tags_confirm_no_hidden_field,
            "editor: GET a note by id, at depth 1, the list and by-ids with If-None-Match: <the admin's ETag>"
            => "200 with the editor's own tag and no admin-only value (never 304)"),
        // 25. The `public` role (issue 24, CONTRACT.md section 15): anonymous reads naming an
        // organization. Its rows grant the parent's `public` role both reads.
        row!("25 public role", public_reader_never_writes,
            "no credential, x-cms-organization: parent (granted reads): POST/PUT/publish/DELETE documents, upload, API key, assistant chat, plugin routes, GraphQL mutation"
            => "401 {error} each; nothing written"),
        row!("25 public role", public_reader_sees_published_copies_only,
            "same: get, depth, list sort=secret, by-ids, back-references, where secret, perspective=draft, a draft-only note, versions, GraphQL allNote{secret}"
            => "200 without draftData, the admin-only field or draft-only notes; the filter value-blind; 403; 404; 401"),
        row!("25 public role", public_reader_stays_in_its_organization,
            "same with includeChildOrganizations=true: the child's and the outsider's notes and assets; organizations, members, roles, events, jobs, get-session"
            => "404 / left out; 401 each; no session"),
        row!("25 public role", unknown_or_ungranted_organization_stays_anonymous,
            "x-cms-organization: an ungranted organization, an unknown slug, empty; the parent's slug beside a bad key or a forged cookie"
            => "401 {error} alike (no oracle); 401 (no fall back to public)"),
        row!("25 public role", public_role_holds_reads_only_and_is_nobodys,
            "admin: PATCH /api/roles/public with a write or people capability; editor: PATCH public; owner: a member or an invitation with role public; DELETE public"
            => "400 naming the capability; 403; 400; 403"),
        row!("25 public role", changed_status_needs_the_draft_perspective,
            "no credential, x-cms-organization: parent (granted reads); viewer with perspective=published: GET the note list with status=changed"
            => "400 handler envelope, no draft; the editor (draft perspective): 200 without the admin-only field"),
        // 26. Webhook endpoints (issue 25, CONTRACT.md section 16).
        row!("26 webhooks", webhook_routes_need_org_settings_in_the_organization,
            "viewer, editor, read key, capability key, outsider write key: every /api/webhooks route on the parent's endpoint; outsider admin, child admin: the same by id, and their list"
            => "403 {error: Forbidden}; 404 handler envelope, a list without it; the endpoint unchanged, no test queued"),
        row!("26 webhooks", webhook_routes_refuse_anonymous_and_preview_callers,
            "no credential with x-cms-organization: parent (public role granted reads); a preview token: every /api/webhooks route"
            => "401 {error: Unauthorized} each; the endpoint unchanged"),
        row!("26 webhooks", webhook_secret_is_never_read_back,
            "admin and super admin: GET list, GET by id, deliveries, PATCH answer after create and rotate-secret"
            => "neither secret nor any whsec_ value in any answer"),
        // 27. The live event stream (issue 25, CONTRACT.md section 16).
        row!("27 event stream", event_stream_refuses_anonymous_readers_and_preview_tokens,
            "GET /api/events/stream with x-cms-organization / ?organization= of a parent whose public role reads; no credential; a preview token by header and by ?preview="
            => "401 {error: Unauthorized} each"),
        row!("27 event stream", event_stream_needs_document_read,
            "a key of the parent whose capabilities are [asset.read]: GET /api/events/stream"
            => "403 {error: Forbidden} (the read key: 200)"),
        row!("27 event stream", event_stream_never_sends_another_organizations_events,
            "editor's and stranger's streams; the child and the outsider publish, then the parent"
            => "the parent's stream gets the parent's event first, the outsider's its own only"),
        row!("27 event stream", event_stream_leaves_out_hidden_types,
            "editor's stream while the admin publishes a memo (admin-only type), then a note (admin-only field)"
            => "the editor gets the note first, without publishedHash; the admin gets both with it"),
        // 28. De-duplicated uploads (issue 32 point 8).
        // 29. The account's password and sessions (issue 29, CONTRACT.md section 20).
        row!("29 accounts", password_and_sessions_stay_the_persons,
            "read key, capability key: POST /api/user/change-password, GET /api/user/sessions, DELETE the creator's session; viewer, admin, outsider: DELETE /api/user/sessions/{editor's}"
            => "403 for keys; 404 for another person's session, which still works"),
        row!("29 accounts", single_sign_on_never_takes_over_or_raises,
            "provider sign-in with an unverified address equal to the parent admin's; a new address of an allowed domain; an address of another domain"
            => "refused (sso=unverified, nobody signed in); the new account holds exactly the provider's viewer role in the parent; refused (sso=domain)"),
        row!("29 accounts", two_factor_is_the_persons_and_its_requirement_holds,
            "read key, capability key: GET /api/user/two-factor, POST enroll/confirm/disable, PATCH requireTwoFactor; viewer: PATCH requireTwoFactor; admin without two-factor in an organization requiring it: list, create, new key, PATCH the organization"
            => "403 everywhere; the member's refusals name the missing second factor"),
        row!("30 audit log", audit_log_needs_org_settings_and_stays_in_its_organization,
            "viewer, editor, auditor, read key, capability key, nobody: GET /api/audit; the parent's admin and the read key: ?scope=all; the parent's, the child's and the outsider's admins: GET /api/audit"
            => "403 (401 for nobody); each admin reads only entries of their own organization; the super admin reads scope=all"),
        // 30. GET /metrics (CONTRACT.md section 19).
        row!("30 metrics", metrics_need_the_metrics_token,
            "GET /metrics with no credential, a same-length wrong token, the token plus a character, the super admin's session (cookie and Bearer), a read key, a write key as Bearer, the token as x-api-key"
            => "401 {error: Unauthorized} each; the token reads 200, its labels route templates and no document or asset id"),
        // 30. cms export / cms import (CONTRACT.md section 19).
        row!("30 export and import", an_export_of_one_organization_carries_it_alone_and_no_way_in,
            "cms export --org child (no --with-credentials), imported into an empty database with open sign-up: the parent and outsider organizations, the stranger, the child admin's password, the child's write key; then a first sign-up"
            => "only the child and its people arrive, with no password hash; sign-in 401, the key 401; the sign-up is an editor, not the first administrator"),
        // 30. Presence on the document editor (issue 30 point 5).
        row!("30 presence", presence_stays_in_the_documents_organization,
            "the parent's editor has alpha open; outsider admin, child admin: PUT/GET/DELETE /api/documents/{alpha}/presence; the outsider's write key: the same"
            => "404 handler envelope naming nobody; 403 for the key; the parent's admin still lists exactly the editor"),
        row!("28 duplicate uploads", duplicate_uploads_answer_only_the_callers_own_asset,
            "outsider admin, child write key, parent editor: POST /api/assets with the bytes of the parent's asset (the outsider has the same bytes)"
            => "the outsider's own asset (200, duplicate); 201 a new asset of the child, no mark; the parent's asset (200)"),
    ]
}

async fn security_table(url: String) {
    let fx = Arc::new(fixture(&url).await);
    let mut failed = Vec::new();
    let rows = rows();
    for row in &rows {
        let outcome = AssertUnwindSafe((row.run)(fx.clone())).catch_unwind().await;
        if let Err(panic) = outcome {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failed.push(format!(
                "[{}] {}\n    attack:   {}\n    expected: {}\n    failure:  {}",
                row.class, row.name, row.attack, row.refusal, message
            ));
        }
    }
    let Ok(fx) = Arc::try_unwrap(fx) else {
        panic!("a row kept the fixture")
    };
    fx.app.stop().await;
    assert!(
        failed.is_empty(),
        "{} of {} security rows failed:\n{}",
        failed.len(),
        rows.len(),
        failed.join("\n")
    );
}

/// The names of the table are unique (a failure names its row).
#[test]
fn row_names_are_unique() {
    let rows = rows();
    let mut names: Vec<&str> = rows.iter().map(|r| r.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), rows.len());
}

cms_store::both_engines!(security_table);

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn assert_no_hidden(what: &str, body: &Value) {
    let text = body.to_string();
    for hidden in HIDDEN {
        assert!(!text.contains(hidden), "{what} leaks {hidden}: {text}");
    }
}

/// GraphQL answers name every selected field (null when stripped): only the values count.
fn assert_no_hidden_values(what: &str, body: &Value) {
    let text = body.to_string();
    for hidden in HIDDEN.iter().filter(|h| h.starts_with("S-")) {
        assert!(!text.contains(hidden), "{what} leaks {hidden}: {text}");
    }
}

fn forbidden(what: &str, res: &Reply) {
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{what}: {}", res.body);
    assert_eq!(res.body, json!({"error": "Forbidden"}), "{what}");
}

fn unauthorized(what: &str, res: &Reply) {
    assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{what}: {}", res.body);
    assert_eq!(res.body, json!({"error": "Unauthorized"}), "{what}");
}

fn handler_error(what: &str, res: &Reply, status: StatusCode, error: &str) {
    assert_eq!(res.status, status, "{what}: {}", res.body);
    assert_eq!(res.body["success"], false, "{what}: {}", res.body);
    assert_eq!(res.body["error"], error, "{what}: {}", res.body);
    assert!(res.body["message"].is_string(), "{what}: {}", res.body);
}

fn not_found(what: &str, res: &Reply) {
    handler_error(what, res, StatusCode::NOT_FOUND, "Not Found");
}

fn bad_request(what: &str, res: &Reply) {
    handler_error(what, res, StatusCode::BAD_REQUEST, "Bad Request");
}

fn ids(body: &Value) -> Vec<String> {
    body["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {body}"))
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect()
}

fn titles(body: &Value) -> Vec<String> {
    body["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {body}"))
        .iter()
        .map(|d| d["draftData"]["title"].as_str().unwrap_or("").to_string())
        .collect()
}

impl Fx {
    async fn query(&self, s: &Session, body: Value) -> Reply {
        self.app.post(QUERY, body).cookie(s).send().await
    }

    async fn total(&self, s: &Session, where_: Value) -> Value {
        let res = self
            .query(s, json!({"type": "note", "where": where_}))
            .await;
        assert_eq!(res.status, StatusCode::OK, "{where_}: {}", res.body);
        res.body["pagination"]["total"].clone()
    }

    async fn get(&self, s: &Session, path: &str) -> Reply {
        self.app.get(path).cookie(s).send().await
    }

    async fn gql(&self, s: &Session, query: &str) -> Reply {
        let res = self
            .app
            .post(GQL, json!({"query": query}))
            .cookie(s)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{query}: {}", res.body);
        res
    }

    /// A GraphQL query that must succeed: its `data`.
    async fn gql_ok(&self, s: &Session, query: &str) -> Value {
        let res = self.gql(s, query).await;
        assert!(res.body.get("errors").is_none(), "{query}: {}", res.body);
        res.body["data"].clone()
    }

    /// The draft of a note as the instance super admin sees it.
    async fn stored(&self, id: &str) -> Value {
        let res = self.get(&self.ada, &format!("{DOCS}/{id}")).await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        res.body["data"].clone()
    }
}

// ---------------------------------------------------------------------------------------------
// 1. `where` and `sort` on a field the caller may not read
// ---------------------------------------------------------------------------------------------

async fn where_on_hidden_field_matches_nothing(fx: Arc<Fx>) {
    // The control: the admin's filter works, so the editor's zeros are the rule.
    let right = json!({"secret": {"equals": "S-ALPHA"}});
    assert_eq!(fx.total(&fx.admin, right.clone()).await, 1);
    for clause in [
        right,
        json!({"secret": {"equals": "wrong"}}),
        json!({"secret": {"not_equals": "wrong"}}),
        json!({"secret": {"exists": true}}),
        json!({"secret": {"exists": false}}),
        json!({"secret": {"like": "S-ALP"}}),
        json!({"secret": {"starts_with": "S"}}),
        json!({"secret": {"in": ["S-ALPHA", "S-BETA"]}}),
        json!({"and": [{"title": {"equals": "Alpha"}}, {"secret": {"equals": "S-ALPHA"}}]}),
    ] {
        assert_eq!(fx.total(&fx.editor, clause.clone()).await, 0, "{clause}");
        assert_eq!(fx.total(&fx.viewer, clause.clone()).await, 0, "{clause}");
    }
}

async fn hidden_clause_in_or_is_value_blind(fx: Arc<Fx>) {
    for value in ["S-ALPHA", "wrong"] {
        let clause = json!({"or": [{"secret": {"equals": value}}, {"title": {"equals": "Beta"}}]});
        let res = fx
            .query(&fx.editor, json!({"type": "note", "where": clause}))
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        assert_eq!(titles(&res.body), ["Beta"], "{value}");
    }
}

async fn sort_on_hidden_field_is_ignored(fx: Arc<Fx>) {
    let two = json!({"title": {"in": ["Alpha", "Beta"]}});
    let sorted = |s: &Session, sort: &str| {
        let body = json!({"type": "note", "where": two, "sort": sort});
        let fx = fx.clone();
        let s = s.clone();
        async move {
            let res = fx.query(&s, body).await;
            assert_eq!(res.status, StatusCode::OK, "{}", res.body);
            titles(&res.body)
        }
    };
    // Default order: newest first. The admin's sort by the hidden field reorders.
    assert_eq!(sorted(&fx.admin, "secret").await, ["Alpha", "Beta"]);
    assert_eq!(sorted(&fx.admin, "-secret").await, ["Beta", "Alpha"]);
    for sort in ["secret", "-secret"] {
        assert_eq!(sorted(&fx.editor, sort).await, ["Beta", "Alpha"], "{sort}");
    }
    // The REST list: the whole first page in default order, whatever the sort says.
    let default = fx.get(&fx.editor, &format!("{DOCS}?type=note")).await;
    assert_eq!(default.status, StatusCode::OK, "{}", default.body);
    for sort in ["secret", "-secret"] {
        let res = fx
            .get(&fx.editor, &format!("{DOCS}?type=note&sort={sort}"))
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        assert_eq!(ids(&res.body), ids(&default.body), "{sort}");
    }
    let admin = fx
        .get(&fx.admin, &format!("{DOCS}?type=note&sort=secret"))
        .await;
    assert_ne!(
        ids(&admin.body),
        ids(&default.body),
        "the admin's sort works"
    );
}

async fn graphql_where_and_sort_on_hidden_field(fx: Arc<Fx>) {
    let by_secret = "{ allNote(where: {secret: {equals: \"S-ALPHA\"}}) { title } }";
    assert_eq!(
        fx.gql_ok(&fx.admin, by_secret).await["allNote"],
        json!([{"title": "Alpha"}])
    );
    assert_eq!(fx.gql_ok(&fx.editor, by_secret).await["allNote"], json!([]));
    let two = "where: {title: {in: [\"Alpha\", \"Beta\"]}}";
    let admin = fx
        .gql_ok(
            &fx.admin,
            &format!("{{ allNote({two}, sort: [\"secret\"]) {{ title }} }}"),
        )
        .await;
    assert_eq!(
        admin["allNote"],
        json!([{"title": "Alpha"}, {"title": "Beta"}])
    );
    for sort in ["secret", "-secret"] {
        let editor = fx
            .gql_ok(
                &fx.editor,
                &format!("{{ allNote({two}, sort: [\"{sort}\"]) {{ title }} }}"),
            )
            .await;
        assert_eq!(
            editor["allNote"],
            json!([{"title": "Beta"}, {"title": "Alpha"}]),
            "{sort}"
        );
    }
}

/// Found by this table and fixed in the service: `publishedHash` (SHA-256 of the canonical
/// published copy, hidden fields included) was served to callers who may not read every field,
/// so hashing the visible copy plus a guess confirmed a guessable hidden value.
async fn published_hash_is_no_oracle(fx: Arc<Fx>) {
    let beta = format!("{DOCS}/{}", fx.beta);
    let admin = fx.get(&fx.admin, &beta).await;
    let published = admin.body["data"]["publishedData"].clone();
    assert_eq!(
        admin.body["data"]["publishedHash"],
        cms::core::canonical::published_hash(&published).as_str(),
        "the admin's digest is the real one: {}",
        admin.body
    );
    for s in [&fx.editor, &fx.viewer, &fx.auditor] {
        let res = fx.get(s, &beta).await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        assert!(res.body["data"]["publishedData"].is_object());
        assert_eq!(res.body["data"].get("publishedHash"), None, "{}", res.body);
        let list = fx
            .get(s, &format!("{DOCS}?type=note&status=published"))
            .await;
        for doc in list.body["data"].as_array().unwrap() {
            assert_eq!(doc.get("publishedHash"), None, "{doc}");
        }
    }
    let q = format!("{{ Note(id: \"{}\") {{ publishedHash }} }}", fx.beta);
    assert_eq!(
        fx.gql_ok(&fx.editor, &q).await["Note"],
        json!({"publishedHash": null})
    );
    assert!(fx.gql_ok(&fx.admin, &q).await["Note"]["publishedHash"].is_string());
    // The event log carries the digest too: only for those who may read every field.
    let beta_id = fx.beta.clone();
    let events = |s: &Session| {
        let req = fx
            .app
            .get("/api/events?type=document.published&pageSize=100")
            .cookie(s);
        let beta_id = beta_id.clone();
        async move {
            let res = req.send().await;
            assert_eq!(res.status, StatusCode::OK, "{}", res.body);
            res.body["data"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["payload"]["documentId"] == beta_id.as_str())
                .cloned()
                .unwrap_or_else(|| panic!("beta's event: {}", res.body))
        }
    };
    let event = events(&fx.editor).await;
    assert_eq!(
        event["payload"],
        json!({"documentId": fx.beta, "documentType": "note"})
    );
    let event = events(&fx.admin).await;
    assert_eq!(
        event["payload"]["publishedHash"],
        cms::core::canonical::published_hash(&published).as_str()
    );
}

// ---------------------------------------------------------------------------------------------
// 2. A filter is never silently dropped
// ---------------------------------------------------------------------------------------------

async fn undeclared_or_malformed_filter_matches_nothing(fx: Arc<Fx>) {
    let all = fx.total(&fx.editor, Value::Null).await;
    assert!(all.as_u64().unwrap() >= 3, "{all}");
    for clause in [
        json!({"nosuch": {"equals": 1}}),
        json!({"nosuch": {"exists": false}}),
        json!({"title": "Alpha"}),
        json!({"title": {"equals": "Alpha", "not_equals": "Beta"}}),
        json!({"title": {"in": "Alpha"}}),
        json!({"secret": {"unknownOperator": 1}}),
        json!({"or": [{"nosuch": {"equals": 1}}]}),
    ] {
        assert_eq!(fx.total(&fx.editor, clause.clone()).await, 0, "{clause}");
    }
}

async fn graphql_undeclared_filter_matches_nothing(fx: Arc<Fx>) {
    let all = fx.gql_ok(&fx.editor, "{ allNote { id } }").await;
    assert!(all["allNote"].as_array().unwrap().len() >= 3);
    for clause in [
        "{nosuch: {equals: 1}}",
        "{title: \"Alpha\"}",
        "{secret: {unknownOperator: 1}}",
    ] {
        let data = fx
            .gql_ok(
                &fx.editor,
                &format!("{{ allNote(where: {clause}) {{ id }} }}"),
            )
            .await;
        assert_eq!(data["allNote"], json!([]), "{clause}");
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Field read and write bypass
// ---------------------------------------------------------------------------------------------

async fn hidden_field_stripped_from_every_rest_read(fx: Arc<Fx>) {
    let alpha = format!("{DOCS}/{}", fx.alpha);
    let res = fx.get(&fx.editor, &alpha).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_no_hidden("get", &res.body);
    assert_eq!(res.body["data"]["draftData"]["locked"], "L-ALPHA");
    assert_eq!(res.body["data"]["publishedData"]["title"], "Alpha");
    for (what, path) in [
        ("published", format!("{alpha}?perspective=published")),
        ("list", format!("{DOCS}?type=note&pageSize=100")),
        ("list depth", format!("{DOCS}?type=note&depth=5")),
        (
            "by-ids",
            format!("{DOCS}/by-ids?ids={},{}&depth=2", fx.alpha, fx.beta),
        ),
        ("back-references", format!("{alpha}/back-references")),
        ("versions", format!("{alpha}/versions")),
        ("version 1", format!("{alpha}/versions/1")),
        ("version 2", format!("{alpha}/versions/2")),
        ("depth", format!("{DOCS}/{}?depth=1", fx.beta)),
        (
            "children",
            format!("{DOCS}?type=note&includeChildOrganizations=true&depth=1"),
        ),
    ] {
        for s in [&fx.editor, &fx.viewer, &fx.auditor] {
            let res = fx.get(s, &path).await;
            assert_eq!(res.status, StatusCode::OK, "{what}: {}", res.body);
            assert_no_hidden(what, &res.body);
        }
    }
    // The reference was resolved, only stripped.
    let res = fx
        .get(&fx.editor, &format!("{DOCS}/{}?depth=1", fx.beta))
        .await;
    assert_eq!(res.body["data"]["draftData"]["ref"]["title"], "Alpha");
    assert_eq!(
        res.body["data"]["draftData"]["ref"]["_id"],
        fx.alpha.as_str()
    );
    let res = fx
        .query(&fx.editor, json!({"type": "note", "depth": 3}))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_no_hidden("query", &res.body);
    // The admin reads it: the stripping is the rule, not missing data.
    let res = fx.get(&fx.admin, &alpha).await;
    assert_eq!(res.body["data"]["draftData"]["secret"], "S-ALPHA");
    let res = fx.get(&fx.admin, &format!("{alpha}/versions/1")).await;
    assert_eq!(
        res.body["data"]["data"]["secret"], "S-ALPHA",
        "{}",
        res.body
    );
}

async fn hidden_field_stripped_from_graphql(fx: Arc<Fx>) {
    let q = format!(
        "{{ Note(id: \"{}\") {{ title secret locked ref {{ title secret }} }} all: allNote(limit: 100) {{ secret ref {{ secret }} }} }}",
        fx.beta
    );
    let editor = fx.gql_ok(&fx.editor, &q).await;
    assert_eq!(
        editor["Note"],
        json!({"title": "Beta", "secret": null, "locked": "L-BETA",
               "ref": {"title": "Alpha", "secret": null}})
    );
    assert_no_hidden_values("graphql", &editor);
    assert_eq!(editor["all"].as_array().unwrap().len(), 3, "{editor}");
    let admin = fx.gql_ok(&fx.admin, &q).await;
    assert_eq!(admin["Note"]["secret"], "S-BETA");
    assert_eq!(admin["Note"]["ref"]["secret"], "S-ALPHA");
}

async fn hidden_field_stripped_from_assistant_tools(fx: Arc<Fx>) {
    let own = new_note(
        &fx.app,
        &fx.admin,
        json!({"title": "Assisted", "secret": "S-ALPHA", "locked": "L-OWN"}),
        false,
    )
    .await;
    let calls = json!([
        ["a1", "get_document", {"collection": "note", "id": fx.beta}],
        ["a2", "query_documents", {"collection": "note", "where": {"secret": {"equals": "S-BETA"}}}],
        ["a3", "query_documents", {"collection": "note", "sort": "-secret", "limit": 100}],
        ["a4", "update_document", {"collection": "note", "id": own, "data": {"secret": "FORGED", "locked": "FORGED"}}],
        ["a5", "get_document", {"collection": "note", "id": fx.stranger_note}],
    ]);
    let res = fx
        .app
        .post(
            "/api/agent/chat",
            json!({"messages": [{"role": "user", "content": calls.to_string()}]}),
        )
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let events = crate::agent::events(&res.bytes);
    let results = crate::agent::of_kind(&events, "toolResult");
    assert_eq!(results.len(), 5, "{events:?}");
    for result in &results {
        assert_no_hidden("assistant tool result", &result["result"]);
    }
    assert_eq!(results[0]["result"]["draftData"]["title"], "Beta");
    assert_eq!(
        results[1]["result"]["pagination"]["total"], 0,
        "a filter on a field the caller cannot read matches nothing"
    );
    // A sort on it is ignored, never a reason to drop rows: alpha, beta, cross and this one
    // at least (other rows add notes of their own).
    assert!(
        results[2]["result"]["pagination"]["total"]
            .as_i64()
            .unwrap()
            >= 4,
        "{}",
        results[2]
    );
    assert_eq!(results[3]["ok"], true, "{}", results[3]);
    let stored = fx.get(&fx.admin, &format!("{DOCS}/{own}")).await;
    assert_eq!(stored.body["data"]["draftData"]["secret"], "S-ALPHA");
    assert_eq!(stored.body["data"]["draftData"]["locked"], "L-OWN");
    assert_eq!(results[4]["ok"], false);
    assert_eq!(results[4]["result"]["error"], "document not found");
}

async fn hidden_field_stripped_from_plugin_route(fx: Arc<Fx>) {
    let path = format!("/api/probe/notes/{}", fx.alpha);
    let res = fx.get(&fx.editor, &path).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["draftData"]["title"], "Alpha");
    assert_no_hidden("plugin route", &res.body);
    let res = fx.app.get(&path).key(&fx.read_key).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"]["draftData"]["secret"], "S-ALPHA",
        "the key acts with its creator's role (admin)"
    );
    let res = fx.get(&fx.admin, &path).await;
    assert_eq!(res.body["data"]["draftData"]["secret"], "S-ALPHA");
    // The route goes through tenancy too.
    let res = fx
        .get(
            &fx.editor,
            &format!("/api/probe/notes/{}", fx.stranger_note),
        )
        .await;
    not_found("plugin route, other organization", &res);
}

async fn hidden_field_stripped_from_write_answers(fx: Arc<Fx>) {
    let id = new_note(
        &fx.app,
        &fx.admin,
        json!({"title": "Answers", "secret": "S-ALPHA"}),
        false,
    )
    .await;
    let path = format!("{DOCS}/{id}");
    let put = fx
        .app
        .req(Method::PUT, &path)
        .json(json!({"data": {"title": "Answers"}}))
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.body);
    assert_no_hidden("put", &put.body);
    let publish = fx
        .app
        .req(Method::POST, &format!("{path}/publish"))
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(publish.status, StatusCode::OK, "{}", publish.body);
    assert_no_hidden("publish", &publish.body);
    let restore = fx
        .app
        .req(Method::POST, &format!("{path}/versions/1/restore"))
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(restore.status, StatusCode::OK, "{}", restore.body);
    assert_no_hidden("restore", &restore.body);
    let q =
        format!("mutation {{ updateNote(id: \"{id}\", data: {{title: \"A2\"}}) {{ secret }} }}");
    let data = fx.gql_ok(&fx.editor, &q).await;
    assert_eq!(data["updateNote"], json!({"secret": null}));
    // Still stored.
    assert_eq!(fx.stored(&id).await["draftData"]["secret"], "S-ALPHA");
}

async fn unwritable_fields_survive_rest_put(fx: Arc<Fx>) {
    let id = new_note(
        &fx.app,
        &fx.admin,
        json!({"title": "Guarded", "secret": "S-BETA", "locked": "L-G"}),
        false,
    )
    .await;
    let res = fx
        .app
        .req(Method::PUT, &format!("{DOCS}/{id}"))
        .json(json!({"data": {"title": "Guarded*", "secret": "FORGED", "locked": "FORGED"}}))
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["draftData"]["locked"], "L-G");
    let stored = fx.stored(&id).await;
    assert_eq!(
        stored["draftData"],
        json!({"title": "Guarded*", "secret": "S-BETA", "locked": "L-G"})
    );
    // Leaving them out is a write too: they stay.
    let res = fx
        .app
        .req(Method::PUT, &format!("{DOCS}/{id}"))
        .json(json!({"data": {"title": "Short"}}))
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        fx.stored(&id).await["draftData"],
        json!({"title": "Short", "secret": "S-BETA", "locked": "L-G"})
    );
    // The admin may write them (the rule, not a broken field).
    let res = fx
        .app
        .req(Method::PUT, &format!("{DOCS}/{id}"))
        .json(json!({"data": {"title": "Short", "secret": "S-ALPHA", "locked": "L-H"}}))
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(fx.stored(&id).await["draftData"]["locked"], "L-H");
}

async fn unwritable_fields_survive_graphql_update(fx: Arc<Fx>) {
    let id = new_note(
        &fx.app,
        &fx.admin,
        json!({"title": "GQL", "secret": "S-BETA", "locked": "L-Q"}),
        false,
    )
    .await;
    let q = format!(
        "mutation {{ updateNote(id: \"{id}\", data: {{title: \"GQL*\", secret: \"FORGED\", locked: \"FORGED\"}}) {{ title locked }} }}"
    );
    let data = fx.gql_ok(&fx.editor, &q).await;
    assert_eq!(
        data["updateNote"],
        json!({"title": "GQL*", "locked": "L-Q"})
    );
    assert_eq!(
        fx.stored(&id).await["draftData"],
        json!({"title": "GQL*", "secret": "S-BETA", "locked": "L-Q"})
    );
    let q = "mutation { createNote(data: {title: \"GQL new\", secret: \"FORGED\", locked: \"FORGED\"}) { id } }";
    let data = fx.gql_ok(&fx.editor, q).await;
    let new = data["createNote"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        fx.stored(&new).await["draftData"],
        json!({"title": "GQL new"})
    );
}

async fn unwritable_fields_absent_on_create(fx: Arc<Fx>) {
    let id = new_note(
        &fx.app,
        &fx.editor,
        json!({"title": "Mine", "secret": "FORGED", "locked": "FORGED"}),
        false,
    )
    .await;
    assert_eq!(fx.stored(&id).await["draftData"], json!({"title": "Mine"}));
    // An API key of a role that may not update them drops them too.
    let res = fx
        .app
        .post(
            DOCS,
            json!({"type": "note", "data": {"title": "Key", "secret": "FORGED"}}),
        )
        .key(&fx.caps_key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    // The caps key is the admin's: the admin may write the field, so it is stored.
    assert_eq!(fx.stored(&id).await["draftData"]["secret"], "FORGED");
}

// ---------------------------------------------------------------------------------------------
// 4. Tenancy escape
// ---------------------------------------------------------------------------------------------

async fn by_ids_omits_other_organizations(fx: Arc<Fx>) {
    let list = format!(
        "{},{},{},{}",
        fx.stranger_note, fx.alpha, fx.child_note, fx.beta
    );
    let res = fx
        .get(&fx.editor, &format!("{DOCS}/by-ids?ids={list}"))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(ids(&res.body), [fx.alpha.clone(), fx.beta.clone()]);
    let res = fx
        .get(
            &fx.editor,
            &format!("{DOCS}/by-ids?ids={list}&includeChildOrganizations=true"),
        )
        .await;
    assert_eq!(
        ids(&res.body),
        [fx.alpha.clone(), fx.child_note.clone(), fx.beta.clone()]
    );
    assert_no_hidden("by-ids with children", &res.body);
    // The outsider's key sees only its own.
    let res = fx
        .app
        .get(&format!(
            "{DOCS}/by-ids?ids={list}&includeChildOrganizations=true"
        ))
        .key(&fx.stranger_key)
        .send()
        .await;
    assert_eq!(ids(&res.body), [fx.stranger_note.as_str()]);
}

async fn back_references_of_foreign_document_are_404(fx: Arc<Fx>) {
    for flag in ["", "?includeChildOrganizations=true"] {
        let res = fx
            .get(
                &fx.editor,
                &format!("{DOCS}/{}/back-references{flag}", fx.stranger_note),
            )
            .await;
        not_found("back-references", &res);
    }
    // The outsider's note is referenced by the parent's `cross`, but the outsider does not
    // learn of it either.
    let res = fx
        .app
        .get(&format!("{DOCS}/{}/back-references", fx.stranger_note))
        .key(&fx.stranger_key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"], json!([]));
}

async fn versions_of_foreign_document_are_404(fx: Arc<Fx>) {
    let base = format!("{DOCS}/{}", fx.stranger_note);
    for (method, path) in [
        (Method::GET, format!("{base}/versions")),
        (Method::GET, format!("{base}/versions/1")),
        (Method::POST, format!("{base}/versions/1/restore")),
        (
            Method::GET,
            format!("{base}/versions?includeChildOrganizations=true"),
        ),
    ] {
        let res = fx
            .app
            .req(method.clone(), &path)
            .json(json!({}))
            .cookie(&fx.editor)
            .send()
            .await;
        not_found(&format!("{method} {path}"), &res);
    }
    // The child's versions: 404 without asking for children, readable when asked, never
    // restorable from the parent.
    let child = format!("{DOCS}/{}", fx.child_note);
    not_found(
        "child versions",
        &fx.get(&fx.editor, &format!("{child}/versions")).await,
    );
    let res = fx
        .get(
            &fx.editor,
            &format!("{child}/versions/1?includeChildOrganizations=true"),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_no_hidden("child version", &res.body);
    let res = fx
        .app
        .req(
            Method::POST,
            &format!("{child}/versions/1/restore?includeChildOrganizations=true"),
        )
        .json(json!({}))
        .cookie(&fx.editor)
        .send()
        .await;
    not_found("restore a child's version", &res);
    let res = fx.app.get(&base).key(&fx.stranger_key).send().await;
    assert_eq!(res.body["data"]["_meta"]["revision"], 1, "{}", res.body);
}

async fn depth_never_resolves_across_organizations(fx: Arc<Fx>) {
    for flag in ["", "&includeChildOrganizations=true"] {
        let res = fx
            .get(&fx.editor, &format!("{DOCS}/{}?depth=2{flag}", fx.cross))
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        assert_eq!(
            res.body["data"]["draftData"]["ref"],
            json!({"_ref": fx.stranger_note}),
            "{}",
            res.body
        );
        let res = fx
            .app
            .get(&format!("{DOCS}/{}?depth=2{flag}", fx.child_note))
            .key(&fx.child_key)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        assert_eq!(
            res.body["data"]["draftData"]["ref"],
            json!({"_ref": fx.alpha}),
            "{}",
            res.body
        );
    }
    // GraphQL: the reference resolves to null.
    let q = format!("{{ Note(id: \"{}\") {{ ref {{ title }} }} }}", fx.cross);
    assert_eq!(
        fx.gql_ok(&fx.editor, &q).await["Note"],
        json!({"ref": null})
    );
}

async fn foreign_asset_references_are_404_and_uncounted(fx: Arc<Fx>) {
    let res = fx
        .get(
            &fx.editor,
            &format!("{ASSETS}/{}/references", fx.stranger_asset),
        )
        .await;
    not_found("asset references", &res);
    let res = fx
        .app
        .post(
            &format!("{ASSETS}/references/counts"),
            json!({"ids": [fx.asset, fx.stranger_asset]}),
        )
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"],
        json!({ fx.asset.as_str(): 1, fx.stranger_asset.as_str(): 0 })
    );
    // The outsider counts its own asset's reference.
    let res = fx
        .app
        .post(
            &format!("{ASSETS}/references/counts"),
            json!({"ids": [fx.asset, fx.stranger_asset]}),
        )
        .key(&fx.stranger_key)
        .send()
        .await;
    assert_eq!(
        res.body["data"],
        json!({ fx.asset.as_str(): 0, fx.stranger_asset.as_str(): 1 })
    );
}

async fn graphql_foreign_document_is_null(fx: Arc<Fx>) {
    for id in [&fx.stranger_note, &fx.child_note] {
        let q = format!("{{ Note(id: \"{id}\") {{ title secret }} }}");
        let res = fx.gql(&fx.editor, &q).await;
        assert_eq!(res.body, json!({"data": {"Note": null}}));
    }
    let q = format!(
        "mutation {{ updateNote(id: \"{}\", data: {{title: \"Mine now\"}}) {{ id }} }}",
        fx.stranger_note
    );
    let res = fx.gql(&fx.editor, &q).await;
    assert_eq!(res.body["errors"][0]["extensions"]["code"], "NOT_FOUND");
    assert_eq!(res.body["data"], Value::Null, "{}", res.body);
    let q = format!("mutation {{ deleteNote(id: \"{}\") }}", fx.stranger_note);
    let res = fx.gql(&fx.editor, &q).await;
    assert_eq!(res.body["errors"][0]["extensions"]["code"], "NOT_FOUND");
    let stored = fx
        .app
        .get(&format!("{DOCS}/{}", fx.stranger_note))
        .key(&fx.stranger_key)
        .send()
        .await;
    assert_eq!(stored.body["data"]["draftData"]["title"], "Outsider");
}

async fn graphql_asset_of_another_organization_stays_out(fx: Arc<Fx>) {
    let id = new_note(
        &fx.app,
        &fx.editor,
        json!({"title": "Borrowed", "cover": {"asset": {"_ref": fx.stranger_asset}}}),
        false,
    )
    .await;
    let q = format!(
        "{{ borrowed: Note(id: \"{id}\") {{ cover {{ assetId asset {{ id title url }} }} }} own: Note(id: \"{}\") {{ cover {{ asset {{ id }} }} }} }}",
        fx.alpha
    );
    let data = fx.gql_ok(&fx.editor, &q).await;
    assert_eq!(
        data["borrowed"],
        json!({"cover": {"assetId": fx.stranger_asset, "asset": null}})
    );
    assert_eq!(data["own"], json!({"cover": {"asset": {"id": fx.asset}}}));
    // Publishing it is refused: the reference names no asset of the organization.
    let res = fx
        .app
        .req(Method::POST, &format!("{DOCS}/{id}/publish"))
        .cookie(&fx.editor)
        .send()
        .await;
    bad_request("publish with a foreign asset", &res);
    assert_eq!(res.body["issues"][0]["path"], "cover", "{}", res.body);
}

async fn child_cannot_read_its_parent(fx: Arc<Fx>) {
    for flag in ["", "?includeChildOrganizations=true"] {
        let res = fx
            .app
            .get(&format!("{DOCS}/{}{flag}", fx.alpha))
            .key(&fx.child_key)
            .send()
            .await;
        not_found("child reads parent", &res);
    }
    let res = fx
        .app
        .get(&format!("{DOCS}?type=note&includeChildOrganizations=true"))
        .key(&fx.child_key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let mut seen = ids(&res.body);
    seen.retain(|id| *id != fx.child_note);
    assert!(seen.is_empty(), "only the child's own: {}", res.body);
    let res = fx
        .get(
            &fx.child_admin,
            &format!("{DOCS}/{}/back-references", fx.alpha),
        )
        .await;
    not_found("child back-references of parent", &res);
}

async fn writes_with_include_children_stay_home(fx: Arc<Fx>) {
    let child = format!("{DOCS}/{}?includeChildOrganizations=true", fx.child_note);
    let res = fx
        .app
        .req(Method::PUT, &child)
        .json(json!({"data": {"title": "From the parent"}}))
        .cookie(&fx.editor)
        .send()
        .await;
    not_found("parent PUT into child", &res);
    let res = fx
        .app
        .req(Method::DELETE, &child)
        .cookie(&fx.editor)
        .send()
        .await;
    not_found("parent DELETE in child", &res);
    let res = fx.get(&fx.editor, &child).await;
    assert_eq!(
        res.status,
        StatusCode::OK,
        "the parent reads it: {}",
        res.body
    );
    assert_eq!(res.body["data"]["draftData"]["title"], "Child");
    assert_eq!(res.body["data"]["organizationId"], fx.child.as_str());
    let res = fx
        .app
        .post(
            &format!("{DOCS}?includeChildOrganizations=true"),
            json!({"type": "note", "data": {"title": "Home"}, "includeChildOrganizations": true}),
        )
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    assert_eq!(res.body["data"]["organizationId"], fx.parent.as_str());
    let q = "mutation { createNote(data: {title: \"Home GQL\"}) { organizationId } }";
    assert_eq!(
        fx.gql_ok(&fx.editor, q).await["createNote"]["organizationId"],
        fx.parent.as_str()
    );
}

// ---------------------------------------------------------------------------------------------
// 5. Lookups by a bare id
// ---------------------------------------------------------------------------------------------

async fn foreign_document_by_bare_id_is_404(fx: Arc<Fx>) {
    let alpha = format!("{DOCS}/{}", fx.alpha);
    let key = &fx.stranger_key;
    let res = fx.app.get(&alpha).key(key).send().await;
    not_found("GET", &res);
    let res = fx
        .app
        .req(Method::PUT, &alpha)
        .json(json!({"data": {"title": "Taken"}}))
        .key(key)
        .send()
        .await;
    not_found("PUT", &res);
    let res = fx.app.req(Method::DELETE, &alpha).key(key).send().await;
    not_found("DELETE", &res);
    let res = fx
        .app
        .req(Method::POST, &format!("{alpha}/publish"))
        .key(key)
        .send()
        .await;
    not_found("publish", &res);
    // An asset id is no document id, even for its owner.
    let res = fx.get(&fx.editor, &format!("{DOCS}/{}", fx.asset)).await;
    not_found("asset id as document", &res);
    // Nothing changed.
    let stored = fx.stored(&fx.alpha).await;
    assert_eq!(stored["draftData"]["title"], "Alpha");
    assert_eq!(stored["organizationId"], fx.parent.as_str());
}

async fn foreign_asset_by_bare_id_is_404(fx: Arc<Fx>) {
    let path = format!("{ASSETS}/{}", fx.stranger_asset);
    not_found("GET", &fx.get(&fx.editor, &path).await);
    let res = fx
        .app
        .req(Method::PATCH, &path)
        .json(json!({"title": "Taken"}))
        .cookie(&fx.editor)
        .send()
        .await;
    not_found("PATCH", &res);
    let res = fx
        .app
        .req(Method::DELETE, &path)
        .cookie(&fx.editor)
        .send()
        .await;
    not_found("DELETE", &res);
    let res = fx
        .app
        .req(Method::DELETE, &format!("{ASSETS}/bulk"))
        .json(json!({"ids": [fx.stranger_asset]}))
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"], json!({"deleted": 0, "failed": 1}));
    // A document id is no asset id.
    not_found(
        "document id as asset",
        &fx.get(&fx.editor, &format!("{ASSETS}/{}", fx.alpha)).await,
    );
    let res = fx.app.get(&path).key(&fx.stranger_key).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["title"], "other.png");
}

// ---------------------------------------------------------------------------------------------
// 6. Mass assignment
// ---------------------------------------------------------------------------------------------

async fn top_level_system_fields_on_create_are_ignored(fx: Arc<Fx>) {
    let forged_id = "0190a000-0000-7000-8000-000000000000";
    let res = fx
        .app
        .post(
            DOCS,
            json!({"type": "note", "data": {"title": "Mass"},
                   "organizationId": fx.outsider, "createdBy": user_id(&fx.ada),
                   "updatedBy": user_id(&fx.ada), "id": forged_id,
                   "_meta": {"revision": 99}, "revision": 99, "singleton": true,
                   "publishedData": {"title": "Forged"}, "publishedHash": "00"}),
        )
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let data = &res.body["data"];
    assert_ne!(data["id"], forged_id);
    assert_eq!(data["organizationId"], fx.parent.as_str());
    assert_eq!(data["createdBy"], user_id(&fx.editor).as_str());
    assert_eq!(data["updatedBy"], user_id(&fx.editor).as_str());
    assert_eq!(data["_meta"]["revision"], 1);
    assert_eq!(data["singleton"], false);
    assert_eq!(data.get("publishedData"), None);
    let stored = fx.stored(data["id"].as_str().unwrap()).await;
    assert_eq!(stored["organizationId"], fx.parent.as_str());
    assert_eq!(stored["createdBy"], user_id(&fx.editor).as_str());
    not_found(
        "the forged id",
        &fx.get(&fx.ada, &format!("{DOCS}/{forged_id}")).await,
    );
}

async fn system_fields_inside_data_are_refused(fx: Arc<Fx>) {
    let before = fx.total(&fx.admin, Value::Null).await;
    for key in [
        "organizationId",
        "createdBy",
        "_meta",
        "id",
        "revision",
        "publishedData",
    ] {
        let mut data = json!({"title": "Mass"});
        data[key] = json!("forged");
        let res = fx
            .app
            .post(DOCS, json!({"type": "note", "data": data.clone()}))
            .cookie(&fx.editor)
            .send()
            .await;
        bad_request(&format!("create data.{key}"), &res);
        assert_eq!(res.body["issues"][0]["path"], key, "{}", res.body);
        assert_eq!(res.body["issues"][0]["code"], "unknown", "{}", res.body);
        let res = fx
            .app
            .req(Method::PUT, &format!("{DOCS}/{}", fx.beta))
            .json(json!({"data": data}))
            .cookie(&fx.admin)
            .send()
            .await;
        bad_request(&format!("update data.{key}"), &res);
    }
    assert_eq!(fx.total(&fx.admin, Value::Null).await, before);
    let beta = fx.stored(&fx.beta).await;
    assert_eq!(beta["_meta"]["revision"], 1);
    assert_eq!(beta["draftData"]["title"], "Beta");
}

async fn top_level_system_fields_on_update_are_ignored(fx: Arc<Fx>) {
    let id = new_note(&fx.app, &fx.admin, json!({"title": "Upd"}), false).await;
    let res = fx
        .app
        .req(Method::PUT, &format!("{DOCS}/{id}"))
        .json(json!({"data": {"title": "Upd*"},
                     "organizationId": fx.outsider, "createdBy": user_id(&fx.ada),
                     "_meta": {"revision": 99}, "revision": 99, "id": fx.alpha}))
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let stored = fx.stored(&id).await;
    assert_eq!(stored["id"], id.as_str());
    assert_eq!(stored["organizationId"], fx.parent.as_str());
    assert_eq!(stored["createdBy"], user_id(&fx.admin).as_str());
    assert_eq!(stored["updatedBy"], user_id(&fx.editor).as_str());
    assert_eq!(stored["_meta"]["revision"], 2);
    assert_eq!(stored["draftData"], json!({"title": "Upd*"}));
    assert_eq!(fx.stored(&fx.alpha).await["draftData"]["title"], "Alpha");
}

async fn asset_owner_cannot_be_assigned(fx: Arc<Fx>) {
    let res = fx
        .app
        .req(Method::POST, ASSETS)
        .cookie(&fx.editor)
        .multipart(
            &[("organizationId", &fx.outsider)],
            Some(("file", "x.png", &png(1, 1, 10))),
        )
        .send()
        .await;
    forbidden("upload into the outsider", &res);
    let path = format!("{ASSETS}/{}", fx.asset);
    for body in [
        json!({"organizationId": fx.outsider}),
        json!({"title": "t", "createdBy": "x"}),
        json!({"sha256": "00"}),
    ] {
        let res = fx
            .app
            .req(Method::PATCH, &path)
            .json(body.clone())
            .cookie(&fx.editor)
            .send()
            .await;
        bad_request(&format!("PATCH {body}"), &res);
    }
    let res = fx.get(&fx.editor, &path).await;
    assert_eq!(res.body["data"]["organizationId"], fx.parent.as_str());
    assert_eq!(res.body["data"]["title"], "pixel.png");
    let res = fx
        .app
        .get(&format!("{ASSETS}?limit=100"))
        .key(&fx.stranger_key)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 1, "{}", res.body);
}

// ---------------------------------------------------------------------------------------------
// 7. Sessions and keys that must die
// ---------------------------------------------------------------------------------------------

async fn sign_out_kills_the_session(fx: Arc<Fx>) {
    let s = &fx.quitter;
    let list = format!("{DOCS}?type=note");
    assert_eq!(fx.get(s, &list).await.status, StatusCode::OK);
    let res = fx
        .app
        .post("/api/auth/sign-out", json!({}))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    unauthorized("cookie after sign-out", &fx.get(s, &list).await);
    unauthorized(
        "bearer after sign-out",
        &fx.app.get(&list).bearer(&s.token).send().await,
    );
    let res = fx.app.get("/api/auth/get-session").cookie(s).send().await;
    assert_eq!(res.body, Value::Null);
}

async fn password_reset_kills_every_session(fx: Arc<Fx>) {
    let email = "forgetful@example.com";
    let second = sign_in(&fx.app, email).await;
    let res = fx
        .app
        .post("/api/user/request-password-reset", json!({"email": email}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let mail = fx.app.mail.last(MailKind::PasswordReset, email).await;
    let res = fx
        .app
        .post(
            "/api/user/reset-password",
            json!({"token": token_of(&mail.link), "newPassword": "a brand new password"}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let list = format!("{DOCS}?type=note");
    for s in [&fx.forgetful, &second] {
        unauthorized("cookie after reset", &fx.get(s, &list).await);
        unauthorized(
            "bearer after reset",
            &fx.app.get(&list).bearer(&s.token).send().await,
        );
    }
    let res = fx
        .app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": email, "password": PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(
        res.status,
        StatusCode::UNAUTHORIZED,
        "the old password is dead"
    );
}

async fn removed_member_and_their_key_lose_access(fx: Arc<Fx>) {
    let list = format!("{DOCS}?type=note");
    assert_eq!(fx.get(&fx.leaver, &list).await.status, StatusCode::OK);
    assert_eq!(
        fx.app.get(&list).key(&fx.leaver_key).send().await.status,
        StatusCode::OK
    );
    let res = fx
        .app
        .req(Method::DELETE, "/api/organizations/members")
        .json(json!({"userId": user_id(&fx.leaver)}))
        .cookie(&fx.ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    forbidden("session after removal", &fx.get(&fx.leaver, &list).await);
    forbidden(
        "session alpha after removal",
        &fx.get(&fx.leaver, &format!("{DOCS}/{}", fx.alpha)).await,
    );
    unauthorized(
        "key after removal",
        &fx.app.get(&list).key(&fx.leaver_key).send().await,
    );
    // Switching back in is refused too.
    let res = fx
        .app
        .post(
            "/api/organizations/switch",
            json!({"organizationId": fx.parent}),
        )
        .cookie(&fx.leaver)
        .send()
        .await;
    forbidden("switch back", &res);
}

async fn role_change_applies_on_the_next_request(fx: Arc<Fx>) {
    let create = |fx: Arc<Fx>, key: bool| async move {
        let call = fx
            .app
            .post(DOCS, json!({"type": "note", "data": {"title": "D"}}));
        match key {
            true => call.key(&fx.demoted_key).send().await,
            false => call.cookie(&fx.demoted).send().await,
        }
    };
    assert_eq!(create(fx.clone(), false).await.status, StatusCode::CREATED);
    assert_eq!(create(fx.clone(), true).await.status, StatusCode::CREATED);
    let res = fx
        .app
        .req(Method::PATCH, "/api/organizations/members")
        .json(json!({"userId": user_id(&fx.demoted), "role": "viewer"}))
        .cookie(&fx.ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    forbidden(
        "session create after demotion",
        &create(fx.clone(), false).await,
    );
    forbidden("key create after demotion", &create(fx.clone(), true).await);
    // The key is clamped to the viewer's grant: reads work, the admin-only field is gone.
    let res = fx
        .app
        .get(&format!("{DOCS}/{}", fx.alpha))
        .key(&fx.demoted_key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_no_hidden("demoted key", &res.body);
    forbidden(
        "demoted key makes keys",
        &fx.app
            .post(
                "/api/settings/api-keys",
                json!({"name": "x", "permissions": ["read"]}),
            )
            .key(&fx.demoted_key)
            .send()
            .await,
    );
}

async fn custom_role_edit_applies_on_the_next_request(fx: Arc<Fx>) {
    let create = || {
        fx.app
            .post(DOCS, json!({"type": "note", "data": {"title": "Shift"}}))
            .cookie(&fx.shifting)
            .send()
    };
    assert_eq!(create().await.status, StatusCode::CREATED);
    let res = fx
        .app
        .req(Method::PATCH, "/api/roles/shifting")
        .json(json!({"capabilities": ["document.read"]}))
        .cookie(&fx.ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    forbidden("create after the role lost it", &create().await);
    let res = fx.get(&fx.shifting, &format!("{DOCS}?type=note")).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
}

async fn cookie_write_without_origin_is_refused(fx: Arc<Fx>) {
    let before = fx.total(&fx.admin, Value::Null).await;
    let res = fx
        .app
        .post(DOCS, json!({"type": "note", "data": {"title": "CSRF"}}))
        .cookie_without_origin(&fx.editor)
        .send()
        .await;
    forbidden("no origin", &res);
    let res = fx
        .app
        .post(DOCS, json!({"type": "note", "data": {"title": "CSRF"}}))
        .cookie_without_origin(&fx.editor)
        .header("origin", "https://evil.example")
        .send()
        .await;
    forbidden("foreign origin", &res);
    assert_eq!(fx.total(&fx.admin, Value::Null).await, before);
}

// ---------------------------------------------------------------------------------------------
// 8. GraphQL amplification
// ---------------------------------------------------------------------------------------------

async fn graphql_alias_flood_is_refused(fx: Arc<Fx>) {
    let aliases = cms::server::GRAPHQL_MAX_COMPLEXITY / 2 + 100;
    let mut q = String::from("{ ");
    for i in 0..aliases {
        q.push_str(&format!("a{i}: allNote(limit: 100) {{ id }} "));
    }
    q.push('}');
    let res = fx.gql(&fx.editor, &q).await;
    assert_eq!(
        res.body["errors"][0]["message"], "Query is too complex.",
        "{}",
        res.body
    );
    assert_eq!(res.body["data"], Value::Null);
    // Within the limit it runs (the refusal is the limit, not the aliases).
    let res = fx
        .gql(
            &fx.editor,
            "{ a: allNote(limit: 1) { id } b: allNote(limit: 1) { id } }",
        )
        .await;
    assert!(res.body.get("errors").is_none(), "{}", res.body);
}

async fn graphql_nesting_beyond_the_depth_limit_is_refused(fx: Arc<Fx>) {
    let levels = cms::server::GRAPHQL_MAX_DEPTH + 1;
    let mut q = format!("{{ Note(id: \"{}\") {{ ", fx.beta);
    for _ in 0..levels {
        q.push_str("ref { ");
    }
    q.push_str("id ");
    q.push_str(&"} ".repeat(levels));
    q.push_str("} }");
    let res = fx.gql(&fx.editor, &q).await;
    assert_eq!(
        res.body["errors"][0]["message"], "Query is nested too deep.",
        "{}",
        res.body
    );
    assert_eq!(res.body["data"], Value::Null);
}

// ---------------------------------------------------------------------------------------------
// 9. Limits
// ---------------------------------------------------------------------------------------------

async fn document_list_bounds_are_400(fx: Arc<Fx>) {
    for params in [
        "pageSize=-1",
        "pageSize=0",
        "pageSize=101",
        "pageSize=100000000",
        "pageSize=99999999999999999999",
        "limit=-1",
        "limit=101",
        "page=0",
        "page=-1",
        "page=9223372036854775807",
        "page=99999999999999999999",
        "page=abc",
        "depth=-1",
        "depth=6",
        "depth=255",
        "depth=256",
    ] {
        let res = fx
            .get(&fx.editor, &format!("{DOCS}?type=note&{params}"))
            .await;
        bad_request(params, &res);
    }
    // The edges are accepted.
    for params in ["pageSize=100", "page=1000000", "depth=5"] {
        let res = fx
            .get(&fx.editor, &format!("{DOCS}?type=note&{params}"))
            .await;
        assert_eq!(res.status, StatusCode::OK, "{params}: {}", res.body);
    }
}

async fn query_and_read_bounds_are_400(fx: Arc<Fx>) {
    for extra in [
        json!({"limit": -1}),
        json!({"limit": 0}),
        json!({"limit": 1000}),
        json!({"page": 0}),
        json!({"page": -3}),
        json!({"page": i64::MAX}),
        json!({"depth": -1}),
        json!({"depth": 99}),
        json!({"limit": 1e300}),
    ] {
        let mut body = json!({"type": "note"});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        bad_request(&format!("query {extra}"), &fx.query(&fx.editor, body).await);
    }
    let alpha = format!("{DOCS}/{}", fx.alpha);
    for path in [
        format!("{alpha}?depth=6"),
        format!("{alpha}?depth=-1"),
        format!("{alpha}/versions?limit=0"),
        format!("{alpha}/versions?limit=-1"),
        format!("{alpha}/versions?limit=101"),
        format!("{alpha}/versions?offset=-1"),
        format!("{DOCS}/by-ids?ids={}&depth=9", fx.alpha),
    ] {
        let res = fx.get(&fx.editor, &path).await;
        bad_request(&path, &res);
    }
}

async fn asset_job_event_bounds_are_400(fx: Arc<Fx>) {
    for path in [
        format!("{ASSETS}?limit=-1"),
        format!("{ASSETS}?limit=0"),
        format!("{ASSETS}?limit=101"),
        format!("{ASSETS}?offset=-1"),
        format!("{ASSETS}?limit=abc"),
        "/api/jobs?page=0".to_string(),
        "/api/jobs?pageSize=-1".to_string(),
        "/api/jobs?pageSize=101".to_string(),
        "/api/jobs?page=9223372036854775807".to_string(),
        "/api/jobs?page=x".to_string(),
        "/api/events?page=0".to_string(),
        "/api/events?pageSize=0".to_string(),
        "/api/events?pageSize=1000".to_string(),
        "/api/events?page=-9223372036854775808".to_string(),
    ] {
        let res = fx.get(&fx.admin, &path).await;
        bad_request(&path, &res);
    }
    let res = fx
        .get(&fx.admin, &format!("{ASSETS}?offset=9223372036854775807"))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"], json!([]));
}

async fn graphql_bounds_are_refused(fx: Arc<Fx>) {
    for args in [
        "limit: -1",
        "limit: 0",
        "limit: 1000",
        "page: 0",
        "page: -1",
        "page: 2147483647, limit: 100",
    ] {
        let res = fx
            .gql(&fx.editor, &format!("{{ allNote({args}) {{ id }} }}"))
            .await;
        if args.starts_with("page: 2147483647") {
            // Far past the end, but in range: an empty page.
            assert_eq!(res.body, json!({"data": {"allNote": []}}), "{args}");
            continue;
        }
        assert_eq!(
            res.body["errors"][0]["extensions"]["code"], "BAD_REQUEST",
            "{args}: {}",
            res.body
        );
        assert_eq!(res.body["data"], Value::Null, "{args}");
    }
}

async fn json_body_over_the_limit_is_413(fx: Arc<Fx>) {
    let big = "x".repeat(MAX_JSON + 1);
    let res = fx
        .query(
            &fx.editor,
            json!({"type": "note", "where": {"title": {"equals": big}}}),
        )
        .await;
    handler_error(
        "oversized query",
        &res,
        StatusCode::PAYLOAD_TOO_LARGE,
        "Payload Too Large",
    );
    let res = fx
        .app
        .post(GQL, json!({"query": format!("{{ allNote(where: {{title: {{equals: \"{big}\"}}}}) {{ id }} }}")}))
        .cookie(&fx.editor)
        .send()
        .await;
    handler_error(
        "oversized graphql",
        &res,
        StatusCode::PAYLOAD_TOO_LARGE,
        "Payload Too Large",
    );
}

// ---------------------------------------------------------------------------------------------
// 10. Active content
// ---------------------------------------------------------------------------------------------

fn assert_inert(what: &str, media: &Reply) {
    assert_eq!(media.status, StatusCode::OK, "{what}");
    assert_eq!(
        media.header("x-content-type-options"),
        Some("nosniff"),
        "{what}"
    );
    let csp = media.header("content-security-policy").unwrap_or("");
    assert!(csp.starts_with("default-src 'none'"), "{what}: {csp}");
    assert!(csp.contains("sandbox"), "{what}: {csp}");
}

async fn svg_and_html_are_served_inert(fx: Arc<Fx>) {
    let svg = b"<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"><script>alert(document.cookie)</script></svg>";
    let html = b"<!DOCTYPE html><html><body><script>fetch('/api/documents')</script></body></html>";
    // Other bytes than cat.png's: the same bytes again would be that asset (a duplicate).
    let page = b"<!DOCTYPE html><html><body><script>fetch('/api/assets')</script></body></html>";
    for (name, bytes, mime) in [
        ("logo.svg", &svg[..], "image/svg+xml"),
        ("cat.png", &html[..], "text/html"),
        ("page.html", &page[..], "text/html"),
    ] {
        let res = fx
            .app
            .req(Method::POST, ASSETS)
            .cookie(&fx.editor)
            .multipart(&[], Some(("file", name, bytes)))
            .send()
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{name}: {}", res.body);
        assert_eq!(res.body["data"]["mimeType"], mime, "{name}");
        let url = res.body["data"]["url"].as_str().unwrap().to_string();
        let media = fx.app.get(&url).send().await;
        assert_inert(name, &media);
        assert_eq!(
            media.header("content-disposition"),
            Some(format!("attachment; filename=\"{name}\"").as_str()),
            "{name}"
        );
        assert_eq!(&media.bytes[..], bytes, "{name}");
    }
    // A raster image is inline, still with nosniff and the policy.
    let res = fx.get(&fx.editor, &format!("{ASSETS}/{}", fx.asset)).await;
    let media = fx
        .app
        .get(res.body["data"]["url"].as_str().unwrap())
        .send()
        .await;
    assert_inert("png", &media);
    assert!(
        media
            .header("content-disposition")
            .unwrap_or("")
            .starts_with("inline"),
        "{:?}",
        media.header("content-disposition")
    );
}

// ---------------------------------------------------------------------------------------------
// 11. Pixel bombs and upload size
// ---------------------------------------------------------------------------------------------

async fn pixel_bomb_is_stored_without_decoding(fx: Arc<Fx>) {
    let bomb = png(100_000, 100_000, 64);
    let res = fx
        .app
        .req(Method::POST, ASSETS)
        .cookie(&fx.editor)
        .multipart(&[], Some(("file", "bomb.png", &bomb)))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let data = &res.body["data"];
    assert_eq!(data["mimeType"], "image/png");
    assert_eq!(data["assetType"], "image");
    assert_eq!(data["width"], 100_000);
    assert_eq!(data["height"], 100_000);
    assert_eq!(data["size"], bomb.len());
    let media = fx.app.get(data["url"].as_str().unwrap()).send().await;
    assert_eq!(media.status, StatusCode::OK);
    assert_eq!(&media.bytes[..], &bomb[..]);
    // Larger than u32 pixels can hold: still just a header.
    let res = fx
        .app
        .req(Method::POST, ASSETS)
        .cookie(&fx.editor)
        .multipart(&[], Some(("file", "max.png", &png(u32::MAX, u32::MAX, 8))))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
}

async fn upload_over_the_limit_is_413(fx: Arc<Fx>) {
    let before = fx.get(&fx.editor, &format!("{ASSETS}?limit=1")).await;
    let total = before.body["pagination"]["total"].clone();
    let res = fx
        .app
        .req(Method::POST, ASSETS)
        .cookie(&fx.editor)
        .multipart(&[], Some(("file", "big.png", &png(10, 10, MAX_UPLOAD))))
        .send()
        .await;
    handler_error(
        "upload past the limit",
        &res,
        StatusCode::PAYLOAD_TOO_LARGE,
        "Payload Too Large",
    );
    let after = fx.get(&fx.editor, &format!("{ASSETS}?limit=1")).await;
    assert_eq!(after.body["pagination"]["total"], total);
    // Exactly the limit is accepted.
    let exact = png(10, 10, MAX_UPLOAD - png(10, 10, 0).len());
    let res = fx
        .app
        .req(Method::POST, ASSETS)
        .cookie(&fx.editor)
        .multipart(&[], Some(("file", "exact.png", &exact)))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
}

// ---------------------------------------------------------------------------------------------
// 12. Unbounded bulk operations
// ---------------------------------------------------------------------------------------------

async fn by_ids_over_100_is_400(fx: Arc<Fx>) {
    let many = |n: usize| {
        let mut list: Vec<String> = (0..n - 1).map(|i| format!("missing-{i}")).collect();
        list.push(fx.alpha.clone());
        list.join(",")
    };
    let res = fx
        .get(&fx.editor, &format!("{DOCS}/by-ids?ids={}", many(101)))
        .await;
    bad_request("101 ids", &res);
    let repeated: String = (0..101).map(|i| format!("ids=x{i}&")).collect();
    let res = fx
        .get(&fx.editor, &format!("{DOCS}/by-ids?{repeated}"))
        .await;
    bad_request("101 repeated ids", &res);
    let res = fx
        .get(&fx.editor, &format!("{DOCS}/by-ids?ids={}", many(100)))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(ids(&res.body), [fx.alpha.as_str()]);
}

async fn asset_bulk_over_the_limit_is_400(fx: Arc<Fx>) {
    let limit = cms::service::assets::MAX_IDS;
    let ids_of = |n: usize| -> Vec<String> { (0..n).map(|i| format!("missing-{i}")).collect() };
    for ids in [ids_of(limit + 1), Vec::new()] {
        let res = fx
            .app
            .req(Method::DELETE, &format!("{ASSETS}/bulk"))
            .json(json!({ "ids": ids }))
            .cookie(&fx.admin)
            .send()
            .await;
        bad_request(&format!("bulk delete of {}", ids.len()), &res);
        let res = fx
            .app
            .post(
                &format!("{ASSETS}/references/counts"),
                json!({ "ids": ids }),
            )
            .cookie(&fx.admin)
            .send()
            .await;
        bad_request(&format!("counts of {}", ids.len()), &res);
    }
    let res = fx
        .app
        .post(
            &format!("{ASSETS}/references/counts"),
            json!({ "ids": ids_of(limit) }),
        )
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = fx
        .app
        .req(Method::DELETE, &format!("{ASSETS}/bulk"))
        .json(json!({ "ids": ids_of(limit) }))
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"],
        json!({"deleted": 0, "failed": limit}),
        "unknown ids count as failed"
    );
}

// ---------------------------------------------------------------------------------------------
// 13. Enumeration
// ---------------------------------------------------------------------------------------------

async fn sign_in_does_not_tell_unknown_from_wrong(fx: Arc<Fx>) {
    let attempt = |email: &'static str, password: &'static str| {
        fx.app
            .post(
                "/api/auth/sign-in/email",
                json!({"email": email, "password": password}),
            )
            .send()
    };
    let unknown = attempt("nobody@example.com", "whatever password").await;
    let wrong = attempt("viewer@example.com", "not the password").await;
    handler_error(
        "unknown",
        &unknown,
        StatusCode::UNAUTHORIZED,
        "Unauthorized",
    );
    assert_eq!((unknown.status, &unknown.body), (wrong.status, &wrong.body));
}

async fn password_reset_request_does_not_tell(fx: Arc<Fx>) {
    let request = |email: &'static str| {
        fx.app
            .post("/api/user/request-password-reset", json!({"email": email}))
            .send()
    };
    let known = request("viewer@example.com").await;
    let unknown = request("nobody@example.com").await;
    assert_eq!(known.status, StatusCode::OK, "{}", known.body);
    assert_eq!((known.status, &known.body), (unknown.status, &unknown.body));
}

async fn invite_only_sign_up_refuses_before_existence(fx: Arc<Fx>) {
    let sign_up = |email: &'static str| {
        fx.app
            .post(
                "/api/auth/sign-up/email",
                json!({"name": "Probe", "email": email, "password": PASSWORD}),
            )
            .send()
    };
    let settings = |invite_only: bool| {
        fx.app
            .req(Method::PATCH, "/api/instance-settings")
            .json(json!({"inviteOnly": invite_only}))
            .cookie(&fx.ada)
            .send()
    };
    // Open sign-up: an existing address is 422 (CONTRACT.md section 3).
    handler_error(
        "open, existing",
        &sign_up("viewer@example.com").await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "Unprocessable Entity",
    );
    let res = settings(true).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let existing = sign_up("viewer@example.com").await;
    let new = sign_up("nobody-yet@example.com").await;
    let restored = settings(false).await;
    assert_eq!(restored.status, StatusCode::OK, "{}", restored.body);
    handler_error(
        "invite only, existing",
        &existing,
        StatusCode::FORBIDDEN,
        "Forbidden",
    );
    assert_eq!((existing.status, &existing.body), (new.status, &new.body));
    // Bad input is still 400 first.
    let res = fx
        .app
        .post(
            "/api/auth/sign-up/email",
            json!({"name": "Probe", "email": "viewer@example.com", "password": "short"}),
        )
        .send()
        .await;
    bad_request("short password", &res);
}

// ---------------------------------------------------------------------------------------------
// 14. API key scope
// ---------------------------------------------------------------------------------------------

async fn read_only_key_cannot_write(fx: Arc<Fx>) {
    let key = &fx.read_key;
    let alpha = format!("{DOCS}/{}", fx.alpha);
    assert_eq!(
        fx.app.get(&alpha).key(key).send().await.status,
        StatusCode::OK
    );
    let res = fx
        .app
        .post(QUERY, json!({"type": "note"}))
        .key(key)
        .send()
        .await;
    assert_eq!(
        res.status,
        StatusCode::OK,
        "a query is a read: {}",
        res.body
    );
    for (method, path, body) in [
        (
            Method::POST,
            DOCS.to_string(),
            json!({"type": "note", "data": {"title": "K"}}),
        ),
        (Method::PUT, alpha.clone(), json!({"data": {"title": "K"}})),
        (Method::DELETE, alpha.clone(), json!({})),
        (Method::POST, format!("{alpha}/publish"), json!({})),
        (Method::DELETE, format!("{alpha}/publish"), json!({})),
        (
            Method::POST,
            format!("{alpha}/versions/1/restore"),
            json!({}),
        ),
        (
            Method::POST,
            format!("{alpha}/schedule"),
            json!({"action": "publish", "runAt": "2999-01-01T00:00:00Z"}),
        ),
        (
            Method::PATCH,
            format!("{ASSETS}/{}", fx.asset),
            json!({"title": "K"}),
        ),
        (Method::DELETE, format!("{ASSETS}/{}", fx.asset), json!({})),
        (
            Method::DELETE,
            format!("{ASSETS}/bulk"),
            json!({"ids": [fx.asset]}),
        ),
    ] {
        let res = fx
            .app
            .req(method.clone(), &path)
            .json(body)
            .key(key)
            .send()
            .await;
        forbidden(&format!("{method} {path}"), &res);
    }
    let res = fx
        .app
        .req(Method::POST, ASSETS)
        .key(key)
        .multipart(&[], Some(("file", "k.png", &png(1, 1, 10))))
        .send()
        .await;
    forbidden("upload", &res);
    let res = fx
        .app
        .post(
            GQL,
            json!({"query": format!("mutation {{ updateNote(id: \"{}\", data: {{title: \"K\"}}) {{ id }} }}", fx.alpha)}),
        )
        .key(key)
        .send()
        .await;
    // SPEC.md "Authentication" point 4: a mutation by a read-only key is refused at the HTTP
    // layer, before it runs.
    forbidden("GraphQL mutation", &res);
    assert_eq!(fx.stored(&fx.alpha).await["draftData"]["title"], "Alpha");
}

async fn capability_key_does_exactly_what_is_listed(fx: Arc<Fx>) {
    let key = &fx.caps_key;
    let res = fx
        .app
        .post(DOCS, json!({"type": "note", "data": {"title": "Caps"}}))
        .key(key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let own = format!("{DOCS}/{}", res.body["data"]["id"].as_str().unwrap());
    assert_eq!(
        fx.app.get(&own).key(key).send().await.status,
        StatusCode::OK
    );
    // `permissions: [write]` is overridden by the capability list.
    for (method, path, body) in [
        (
            Method::PUT,
            own.clone(),
            json!({"data": {"title": "Caps*"}}),
        ),
        (Method::POST, format!("{own}/publish"), json!({})),
        (Method::DELETE, own.clone(), json!({})),
        (
            Method::POST,
            DOCS.to_string(),
            json!({"type": "note", "data": {"title": "P"}, "publish": true}),
        ),
        (Method::GET, ASSETS.to_string(), json!({})),
        (
            Method::GET,
            "/api/organizations/invitations".to_string(),
            json!({}),
        ),
    ] {
        let call = fx.app.req(method.clone(), &path).key(key);
        let call = match method {
            Method::GET => call,
            _ => call.json(body),
        };
        forbidden(&format!("{method} {path}"), &call.send().await);
    }
    let res = fx
        .app
        .req(Method::POST, ASSETS)
        .key(key)
        .multipart(&[], Some(("file", "k.png", &png(1, 1, 10))))
        .send()
        .await;
    forbidden("upload", &res);
}

async fn key_cannot_reach_another_organization(fx: Arc<Fx>) {
    let key = &fx.stranger_key;
    let res = fx
        .app
        .get(&format!(
            "{DOCS}?type=note&includeChildOrganizations=true&pageSize=100"
        ))
        .key(key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(ids(&res.body), [fx.stranger_note.as_str()]);
    let res = fx
        .app
        .post(
            QUERY,
            json!({"type": "note", "where": {"title": {"equals": "Alpha"}}, "includeChildOrganizations": true}),
        )
        .key(key)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 0, "{}", res.body);
    let res = fx
        .app
        .post(
            GQL,
            json!({"query": format!("{{ Note(id: \"{}\", includeChildOrganizations: true) {{ title }} }}", fx.alpha)}),
        )
        .key(key)
        .send()
        .await;
    assert_eq!(res.body, json!({"data": {"Note": null}}));
    let res = fx
        .app
        .get(&format!("{ASSETS}/{}", fx.asset))
        .key(key)
        .send()
        .await;
    not_found("asset of the parent", &res);
    // A write key holds no people capabilities; the outsider's admin, who does, cannot reach
    // a member of another organization: 404, like a user who does not exist.
    let res = fx
        .app
        .req(Method::DELETE, "/api/organizations/members")
        .json(json!({"userId": user_id(&fx.editor)}))
        .key(key)
        .send()
        .await;
    forbidden("write key removing a member", &res);
    for user in [user_id(&fx.editor), "no-such-user".to_string()] {
        let res = fx
            .app
            .req(Method::DELETE, "/api/organizations/members")
            .json(json!({"userId": user}))
            .cookie(&fx.stranger)
            .send()
            .await;
        not_found("admin removing another organization's member", &res);
        let res = fx
            .app
            .req(Method::PATCH, "/api/organizations/members")
            .json(json!({"userId": user, "role": "viewer"}))
            .cookie(&fx.stranger)
            .send()
            .await;
        not_found("admin demoting another organization's member", &res);
    }
    assert_eq!(
        fx.get(&fx.editor, &format!("{DOCS}?type=note"))
            .await
            .status,
        StatusCode::OK,
        "the editor is still a member"
    );
}

async fn bad_or_expired_key_is_401_even_with_a_cookie(fx: Arc<Fx>) {
    let list = format!("{DOCS}?type=note");
    let res = fx
        .app
        .get(&list)
        .key("cms_not-a-real-key-at-all-0000000000000000000000")
        .cookie(&fx.admin)
        .send()
        .await;
    unauthorized("unknown key beside a cookie", &res);
    let expiring = fx
        .app
        .create_key(
            &fx.admin,
            json!({"name": "short", "permissions": ["read"], "expiresInDays": 1}),
        )
        .await;
    assert_eq!(
        fx.app.get(&list).key(&expiring).send().await.status,
        StatusCode::OK
    );
    fx.app.clock.advance_millis(86_400_000 + 1_000);
    unauthorized(
        "expired key",
        &fx.app.get(&list).key(&expiring).send().await,
    );
    let res = fx
        .app
        .post(GQL, json!({"query": "{ allNote { id } }"}))
        .key(&expiring)
        .send()
        .await;
    unauthorized("expired key on graphql", &res);
}

async fn plugin_route_gate_holds(fx: Arc<Fx>) {
    let path = format!("/api/probe/notes/{}", fx.alpha);
    unauthorized("no credential", &fx.app.get(&path).send().await);
    not_found(
        "key of another organization",
        &fx.app.get(&path).key(&fx.stranger_key).send().await,
    );
    let res = fx
        .app
        .get("/api/probe/whoami")
        .key(&fx.read_key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"], "admin@example.com");
    unauthorized(
        "members route, no credential",
        &fx.app.get("/api/probe/whoami").send().await,
    );
    // A member without document.read (none in the parent lacks it): the outsider's admin
    // reads only the outsider's notes.
    let res = fx
        .get(
            &fx.stranger,
            &format!("/api/probe/notes/{}", fx.stranger_note),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["draftData"]["secret"], "S-OUT");
}
