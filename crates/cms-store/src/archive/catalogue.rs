//! The catalogue: every carried table's parts, columns and kinds, in load order, and the
//! tables left out.

use super::Kind::{Boolean as B, Integer as I, Integer32 as I32, Json as J, Real as R, Text as T};
use super::{Carried, Column, Kind, Load, Part, Rows};

const fn col(name: &'static str, kind: Kind) -> Column {
    Column {
        name,
        kind,
        credential: false,
    }
}

const fn secret(name: &'static str, kind: Kind) -> Column {
    Column {
        name,
        kind,
        credential: true,
    }
}

const ORGANIZATION_COLUMNS: &[Column] = &[
    col("id", T),
    col("name", T),
    col("slug", T),
    col("metadata", J),
    col("parent_id", T),
    col("created_at", I),
    col("updated_at", I),
    col("locales", J),
    col("require_two_factor", B),
];

const ASSET_COLUMNS: &[Column] = &[
    col("id", T),
    col("organization_id", T),
    col("filename", T),
    col("asset_type", T),
    col("mime_type", T),
    col("size", I),
    col("width", I),
    col("height", I),
    col("sha256", T),
    col("title", T),
    col("description", T),
    col("alt", T),
    col("credit_line", T),
    col("poster_id", T),
    col("created_by", T),
    col("updated_by", T),
    col("created_at", I),
    col("updated_at", I),
    col("hotspot_x", R),
    col("hotspot_y", R),
    col("lqip", T),
    col("dominant_color", T),
    col("has_alpha", B),
    col("summarized", B),
];

const fn part(
    name: &'static str,
    table: &'static str,
    columns: &'static [Column],
    key: &'static [&'static str],
    rows: Rows,
) -> Part {
    Part {
        name,
        table,
        columns,
        key,
        only: None,
        of_document: None,
        rows,
        carried: Carried::Always,
        load: Load::Insert,
    }
}

const ID: &[&str] = &["id"];
const ORG: Rows = Rows::Organization("organization_id");

/// Every part, in load order: each row's foreign keys point at rows of earlier parts (or of
/// the same part's earlier slice: parents before child organizations, posters before the
/// videos that show them).
pub const PARTS: &[Part] = &[
    part(
        "users",
        "users",
        &[
            col("id", T),
            col("email", T),
            col("name", T),
            secret("password_hash", T),
            col("email_verified", B),
            col("role", T),
            col("image", T),
            col("created_at", I),
            col("updated_at", I),
        ],
        ID,
        Rows::People("id"),
    ),
    Part {
        only: Some("parent_id IS NULL"),
        ..part(
            "organizations",
            "organizations",
            ORGANIZATION_COLUMNS,
            ID,
            Rows::Organizations,
        )
    },
    Part {
        only: Some("parent_id IS NOT NULL"),
        ..part(
            "child-organizations",
            "organizations",
            ORGANIZATION_COLUMNS,
            ID,
            Rows::Organizations,
        )
    },
    part(
        "roles",
        "roles",
        &[
            col("id", T),
            col("organization_id", T),
            col("name", T),
            col("description", T),
            col("capabilities", J),
            col("is_built_in", B),
            col("created_at", I),
            col("updated_at", I),
        ],
        ID,
        ORG,
    ),
    part(
        "members",
        "members",
        &[
            col("organization_id", T),
            col("user_id", T),
            col("role", T),
            col("created_at", I),
        ],
        &["organization_id", "user_id"],
        ORG,
    ),
    Part {
        carried: Carried::WithCredentials,
        ..part(
            "api_keys",
            "api_keys",
            &[
                col("id", T),
                col("organization_id", T),
                col("name", T),
                col("key_hash", T),
                col("start", T),
                col("permissions", J),
                col("capabilities", J),
                col("created_by", T),
                col("created_at", I),
                col("expires_at", I),
            ],
            ID,
            ORG,
        )
    },
    part(
        "invitations",
        "invitations",
        &[
            col("id", T),
            col("organization_id", T),
            col("email", T),
            col("role", T),
            col("status", T),
            col("invited_by", T),
            col("expires_at", I),
            col("created_at", I),
            col("updated_at", I),
            secret("token_hash", T),
        ],
        ID,
        ORG,
    ),
    Part {
        carried: Carried::WithCredentials,
        ..part(
            "two_factor",
            "two_factor",
            &[
                col("user_id", T),
                col("secret", T),
                col("enabled_at", I),
                col("last_step", I),
                col("created_at", I),
            ],
            &["user_id"],
            Rows::People("user_id"),
        )
    },
    Part {
        carried: Carried::WithCredentials,
        ..part(
            "two_factor_recovery_codes",
            "two_factor_recovery_codes",
            &[col("user_id", T), col("code_hash", T)],
            &["user_id", "code_hash"],
            Rows::People("user_id"),
        )
    },
    part(
        "user_identities",
        "user_identities",
        &[
            col("provider", T),
            col("subject", T),
            col("user_id", T),
            col("created_at", I),
        ],
        &["provider", "subject"],
        Rows::People("user_id"),
    ),
    part(
        "user_preferences",
        "user_preferences",
        &[col("user_id", T), col("data", J), col("updated_at", I)],
        &["user_id"],
        Rows::People("user_id"),
    ),
    part(
        "documents",
        "documents",
        &[
            col("id", T),
            col("organization_id", T),
            col("type", T),
            col("singleton", B),
            col("draft_data", J),
            col("published_data", J),
            col("published_hash", T),
            col("revision", I),
            col("created_by", T),
            col("updated_by", T),
            col("created_at", I),
            col("updated_at", I),
            col("published_at", I),
        ],
        ID,
        ORG,
    ),
    Part {
        of_document: Some("document_id"),
        ..part(
            "document_versions",
            "document_versions",
            &[
                col("id", T),
                col("document_id", T),
                col("organization_id", T),
                col("version_number", I),
                col("event_type", T),
                col("data", J),
                col("created_by", T),
                col("created_at", I),
            ],
            ID,
            ORG,
        )
    },
    Part {
        of_document: Some("from_id"),
        ..part(
            "document_references",
            "document_references",
            &[
                col("from_id", T),
                col("organization_id", T),
                col("copy", T),
                col("path", T),
                col("to_id", T),
                col("target", T),
            ],
            &["from_id", "copy", "path"],
            ORG,
        )
    },
    Part {
        only: Some("poster_id IS NULL"),
        ..part("assets", "assets", ASSET_COLUMNS, ID, ORG)
    },
    Part {
        only: Some("poster_id IS NOT NULL"),
        ..part("assets-with-posters", "assets", ASSET_COLUMNS, ID, ORG)
    },
    part(
        "jobs",
        "jobs",
        &[
            col("id", T),
            col("organization_id", T),
            col("type", T),
            col("status", T),
            col("payload", J),
            col("attempts", I),
            col("max_attempts", I),
            col("run_at", I),
            col("locked_until", I),
            col("last_error", T),
            col("idempotency_key", T),
            col("created_at", I),
            col("updated_at", I),
            col("completed_at", I),
        ],
        ID,
        Rows::OrganizationOrInstance("organization_id"),
    ),
    part(
        "schedules",
        "schedules",
        &[
            col("id", T),
            col("document_id", T),
            col("organization_id", T),
            col("action", T),
            col("run_at", I),
            col("status", T),
            col("job_id", T),
            col("created_by", T),
            col("created_at", I),
            col("updated_at", I),
        ],
        ID,
        ORG,
    ),
    Part {
        load: Load::InsertRelayed,
        ..part(
            "events",
            "events",
            &[
                col("id", T),
                col("organization_id", T),
                col("type", T),
                col("payload", J),
                col("created_at", I),
            ],
            ID,
            Rows::OrganizationOrInstance("organization_id"),
        )
    },
    Part {
        only: Some("processed_at IS NULL"),
        load: Load::Upsert(&["event_id"]),
        ..part(
            "outbox",
            "outbox",
            &[
                col("event_id", T),
                col("created_at", I),
                col("processed_at", I),
            ],
            &["event_id"],
            Rows::Instance,
        )
    },
    part(
        "webhook_endpoints",
        "webhook_endpoints",
        &[
            col("id", T),
            col("organization_id", T),
            col("url", T),
            col("events", J),
            col("description", T),
            col("enabled", B),
            col("secret", T),
            col("created_by", T),
            col("created_at", I),
            col("updated_at", I),
        ],
        ID,
        ORG,
    ),
    part(
        "webhook_deliveries",
        "webhook_deliveries",
        &[
            col("job_id", T),
            col("endpoint_id", T),
            col("organization_id", T),
            col("event_id", T),
            col("event_type", T),
            col("response_status", I32),
            col("created_at", I),
        ],
        &["job_id"],
        ORG,
    ),
    part(
        "plugin_settings",
        "plugin_settings",
        &[
            col("organization_id", T),
            col("plugin_id", T),
            col("values", J),
            col("updated_at", I),
            col("updated_by", T),
        ],
        &["organization_id", "plugin_id"],
        ORG,
    ),
    part(
        "agent_change_sets",
        "agent_change_sets",
        &[
            col("id", T),
            col("organization_id", T),
            col("user_id", T),
            col("created_at", I),
            col("operations", J),
            col("undone_at", I),
            col("source", T),
        ],
        ID,
        ORG,
    ),
    part(
        "audit_log",
        "audit_log",
        &[
            col("id", T),
            col("organization_id", T),
            col("action", T),
            col("actor_type", T),
            col("actor_id", T),
            col("target_type", T),
            col("target_id", T),
            col("ip_address", T),
            col("summary", T),
            col("created_at", I),
        ],
        ID,
        Rows::OrganizationOrInstance("organization_id"),
    ),
    Part {
        load: Load::Upsert(&["key"]),
        ..part(
            "instance_state",
            "instance_state",
            &[col("key", T), col("value", T), col("updated_at", I)],
            &["key"],
            Rows::Instance,
        )
    },
];

/// Tables an archive does not carry, and why: what lives only as long as a sign-in or a
/// request, and what the importing instance rebuilds from the carried rows.
pub const LEFT_OUT: &[(&str, &str)] = &[
    ("sessions", "people sign in again on the new instance"),
    (
        "user_tokens",
        "reset and verification links are short-lived",
    ),
    ("rate_limits", "counters of the last minutes"),
    ("preview_tokens", "preview links are short-lived"),
    (
        "document_presence",
        "who has a document open: seconds-old, rebuilt by heartbeats",
    ),
    ("asset_uploads", "direct uploads in flight"),
    (
        "document_search",
        "rebuilt from the documents at the next start",
    ),
    (
        "search_index_state",
        "rebuilt from the documents at the next start",
    ),
];

/// The part named `name`.
pub fn part_named(name: &str) -> Option<&'static Part> {
    PARTS.iter().find(|p| p.name == name)
}
