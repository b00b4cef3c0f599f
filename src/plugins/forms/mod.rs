//! The `forms` plugin (CONTRACT.md section 11): a `form` document type whose published copy
//! defines the fields, a public submission route, and a member route listing a form's
//! submissions.
//!
//! A submission is a `formSubmission` document of the form's organization, written by the
//! plugin's own actor: members can read and delete submissions like any document, but nobody
//! creates, edits or publishes them through the document API (the schema's role lists are
//! empty). The submission, the `forms.submission.created` event and its outbox row commit in
//! one transaction (`DocumentService::create_emitting`).

pub mod submission;

use axum::Json;
use axum::extract::Path;
use axum::http::{Method, StatusCode};
use cms_core::RequiredCapabilities;
use cms_core::Timestamp;
use cms_server::plugins::Service;
use cms_server::{
    ApiError, ApiJson, ApiQuery, ApiResult, Authed, Client, Data, Paged, PluginRoute,
};
use cms_service::documents::{ListRequest, NewDocument, Perspective, ReadOptions};
use cms_service::{Error, EventDeclaration, NewEvent};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::{IntoParams, OpenApi, ToSchema};

use crate::config::PluginsConfig;
use crate::plugin::{Plugin, PluginParts};

/// The plugin's id.
pub const PLUGIN: &str = "forms";
/// The document type of forms.
pub const FORM: &str = "form";
/// The document type of submissions.
pub const SUBMISSION: &str = "formSubmission";
/// The event of a stored submission.
pub const SUBMITTED: &str = "forms.submission.created";

/// The `forms` plugin.
pub struct Forms {
    /// Submissions one client address may send per minute (`plugins.formsSubmissionsPerMinute`;
    /// 0: no limit).
    submissions_per_minute: u32,
}

impl Forms {
    pub fn new(config: &PluginsConfig) -> Self {
        Forms {
            submissions_per_minute: config.forms_submissions_per_minute,
        }
    }
}

/// The name the submission limit counts under.
const SUBMIT_LIMIT: &str = "forms.submit";

impl Plugin for Forms {
    fn id(&self) -> &str {
        PLUGIN
    }

    fn register(&self, parts: &mut PluginParts) {
        parts.schema_json(form_schema());
        parts.schema_json(submission_schema());
        match EventDeclaration::from_json(
            SUBMITTED,
            &json!([
                { "name": "submissionId", "type": "string", "required": true },
                { "name": "formId", "type": "string", "required": true },
            ]),
        ) {
            Ok(declaration) => {
                parts.event_type(declaration);
            }
            Err(e) => unreachable!("the forms event declaration is fixed and valid: {e}"),
        }
        let per_minute = self.submissions_per_minute;
        parts.route(PluginRoute::new(
            "submit",
            Method::POST,
            "/forms/{formId}/submissions",
            RequiredCapabilities::Public,
            move |cms: Service, client: Client, form_id: Path<String>, body: ApiJson<Value>| {
                submit(cms, client, form_id, body, per_minute)
            },
        ));
        let readers = parts.required(&["document.read"]);
        parts.route(PluginRoute::new(
            "list",
            Method::GET,
            "/forms/{formId}/submissions",
            readers,
            list,
        ));
        parts.openapi(FormsApi::openapi());
    }
}

fn form_schema() -> Value {
    json!({
        "type": "document",
        "name": FORM,
        "title": "Form",
        "fields": [
            { "name": "title", "type": "string", "required": true },
            { "name": "fields", "type": "array", "title": "Fields", "of": [{
                "name": "field",
                "type": "object",
                "fields": [
                    { "name": "name", "type": "string", "required": true,
                      "pattern": "^[A-Za-z_][A-Za-z0-9_]*$" },
                    { "name": "label", "type": "string" },
                    { "name": "type", "type": "string", "required": true,
                      "options": submission::FieldKind::NAMES },
                    { "name": "required", "type": "boolean" }
                ]
            }]}
        ]
    })
}

fn submission_schema() -> Value {
    json!({
        "type": "document",
        "name": SUBMISSION,
        "title": "Form submission",
        // Written only by the plugin: members read and delete, nobody edits.
        "access": { "create": [], "update": [], "publish": [], "unpublish": [] },
        "fields": [
            { "name": "form", "type": "reference", "to": [FORM], "required": true },
            { "name": "data", "type": "json", "required": true }
        ]
    })
}

#[derive(OpenApi)]
#[openapi(paths(submit, list))]
struct FormsApi;

/// A stored submission, as the submission route answers.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FormSubmissionCreated {
    pub id: String,
    pub form_id: String,
    pub created_at: Timestamp,
}

/// A submission as listed.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FormSubmission {
    pub id: String,
    pub form_id: String,
    /// The submitted values, by form field name.
    pub data: Value,
    pub created_at: Timestamp,
}

/// Stores a submission of a published form (public). The body is a JSON object of values by
/// form field name; each is checked against the published form (400 with `issues`, the field
/// name as `path`). An unknown or unpublished form is 404. Each client address may submit
/// `plugins.formsSubmissionsPerMinute` times a minute (30 by default), every attempt counted;
/// past it, 429 with `Retry-After`.
#[utoipa::path(post, path = "/api/forms/{formId}/submissions", tag = PLUGIN, security(()),
    params(("formId" = String, Path, description = "The form's document id")),
    request_body(content = Object, description = "Values by form field name"),
    responses(
        (status = 201, description = "Stored", body = Data<FormSubmissionCreated>),
        (status = 429, description = "Too many submissions from this address in the minute",
            headers(("retry-after" = u64, description = "Seconds until the window ends"))),
    ))]
async fn submit(
    Service(cms): Service,
    Client(client): Client,
    Path(form_id): Path<String>,
    ApiJson(body): ApiJson<Value>,
    per_minute: u32,
) -> ApiResult<(StatusCode, Json<Data<FormSubmissionCreated>>)> {
    // Counted first, so a flood of bad or unknown-form submissions is limited too.
    cms.rate_limits()
        .hit_public_route(SUBMIT_LIMIT, client.ip_address.as_deref(), per_minute)
        .await?;
    let no_form = || ApiError::from(Error::not_found("form"));
    let location = cms.documents().locate(&form_id).await?;
    let Some(location) = location.filter(|l| l.doc_type == FORM) else {
        return Err(no_form());
    };
    let actor = cms.plugin_actor(PLUGIN, &location.organization_id).await?;
    let published = ReadOptions {
        perspective: Perspective::Published,
        ..ReadOptions::default()
    };
    let form = cms.documents().get(&actor, &form_id, published).await?;
    let fields = submission::form_fields(form.published_data.as_ref().ok_or_else(no_form)?);
    let Value::Object(values) = body else {
        return Err(
            Error::bad_request("the body must be a JSON object of values by field name").into(),
        );
    };
    let issues = submission::check(&fields, &values);
    if !issues.is_empty() {
        return Err(Error::invalid(issues).into());
    }
    let input = NewDocument {
        doc_type: SUBMISSION.into(),
        data: json!({ "form": { "_ref": form_id }, "data": values }),
        publish: false,
        locale: None,
    };
    let (stored, _) = cms
        .documents()
        .create_emitting(&actor, input, |id| {
            vec![NewEvent::new(
                SUBMITTED,
                json!({ "submissionId": id, "formId": form_id }),
            )]
        })
        .await?;
    Ok(cms_server::created(FormSubmissionCreated {
        id: stored.id,
        form_id,
        created_at: stored.created_at,
    }))
}

/// Which page of submissions.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct PageQuery {
    /// From 1 (default 1).
    page: Option<i64>,
    /// 1 to 100 (default 20).
    page_size: Option<i64>,
}

/// The submissions of a form of the active organization, newest first (document.read).
#[utoipa::path(get, path = "/api/forms/{formId}/submissions", tag = PLUGIN,
    params(("formId" = String, Path, description = "The form's document id"), PageQuery),
    responses((status = 200, description = "A page of submissions", body = Paged<FormSubmission>)))]
async fn list(
    Service(cms): Service,
    Authed(actor): Authed,
    Path(form_id): Path<String>,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> ApiResult<Json<Paged<FormSubmission>>> {
    let form = cms
        .documents()
        .get(&actor, &form_id, ReadOptions::default())
        .await?;
    if form.doc_type != FORM {
        return Err(Error::not_found("form").into());
    }
    let page = cms
        .documents()
        .list(
            &actor,
            ListRequest {
                doc_type: SUBMISSION.into(),
                where_: json!({ "form": { "equals": form_id } }),
                sort: vec!["-createdAt".into()],
                published: None,
                page: query.page,
                page_size: query.page_size,
                read: ReadOptions::default(),
                search: None,
            },
        )
        .await?;
    let data = page
        .data
        .into_iter()
        .map(|doc| FormSubmission {
            id: doc.id,
            form_id: form_id.clone(),
            data: doc.draft_data.get("data").cloned().unwrap_or(Value::Null),
            created_at: doc.created_at,
        })
        .collect();
    Ok(cms_server::paged(data, page.pagination))
}
