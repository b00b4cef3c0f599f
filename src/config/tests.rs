use std::path::Path;

use super::keys::env_name;
use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn env_names_are_upper_snake_case_of_the_dotted_key() {
    assert_eq!(env_name("jobs.workerSecret"), "CMS_JOBS_WORKER_SECRET");
    assert_eq!(env_name("health.timeoutMs"), "CMS_HEALTH_TIMEOUT_MS");
    assert_eq!(env_name("database.url"), "CMS_DATABASE_URL");
    assert_eq!(
        env_name("database.migrationUrl"),
        "CMS_DATABASE_MIGRATION_URL"
    );
}

#[test]
fn the_migration_login_is_configurable_apart_from_the_serving_one() {
    let loaded = Config::load(
        None,
        env(&[
            ("CMS_DATABASE_URL", "postgres://cms_serve@db/cms"),
            ("CMS_DATABASE_MIGRATION_URL", "postgres://cms_owner@db/cms"),
        ]),
    )
    .unwrap()
    .config;
    assert_eq!(loaded.database_url(), "postgres://cms_serve@db/cms");
    assert_eq!(
        loaded.database_migration_url().as_deref(),
        Some("postgres://cms_owner@db/cms")
    );
}

#[test]
fn defaults_need_no_configuration() {
    let loaded = Config::load(None, env(&[])).unwrap();
    let c = loaded.config;
    assert_eq!((c.server.host.as_str(), c.server.port), ("127.0.0.1", 3000));
    assert_eq!(c.database_url(), "sqlite://./cms-data/cms.db");
    assert_eq!(c.database_migration_url(), None);
    assert_eq!(c.storage_path(), PathBuf::from("./cms-data/media"));
    assert!(c.auth.invite_only);
    assert_eq!(c.health.timeout_ms, 5000);
}

#[test]
fn the_graphql_path_is_configurable_and_checked() {
    let default = Config::load(None, env(&[])).unwrap().config;
    assert_eq!(default.graphql.path, "/api/graphql");
    let moved = Config::load(None, env(&[("CMS_GRAPHQL_PATH", "/graph/ql")])).unwrap();
    assert_eq!(moved.config.graphql.path, "/graph/ql");
    for bad in ["graphql", "/", "/api/{x}", "/a b"] {
        assert!(
            Config::load(None, env(&[("CMS_GRAPHQL_PATH", bad)])).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn the_docs_ui_is_on_unless_turned_off() {
    let default = Config::load(None, env(&[])).unwrap().config;
    assert!(default.openapi.docs_ui);
    let off = Config::load(None, env(&[("CMS_OPENAPI_DOCS_UI", "false")])).unwrap();
    assert!(!off.config.openapi.docs_ui);
}

#[test]
fn the_file_then_the_environment_decide() {
    let dir = std::env::temp_dir().join(format!("cms-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cms.toml");
    std::fs::write(
        &file,
        "[server]\nport = 4000\nhost = \"0.0.0.0\"\n[health]\ntimeoutMs = 100\n[surprise]\nkey = 1\n",
    )
    .unwrap();
    let loaded = Config::load(
        Some(&file),
        env(&[
            ("CMS_PORT", "5000"),
            ("CMS_AUTH_INVITE_ONLY", "false"),
            ("CMS_AUTH_FIRST_ADMIN_EMAILS", "a@x.io, b@x.io"),
        ]),
    )
    .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let c = loaded.config;
    assert_eq!((c.server.host.as_str(), c.server.port), ("0.0.0.0", 5000));
    assert_eq!(c.health.timeout_ms, 100);
    assert!(!c.auth.invite_only);
    assert_eq!(c.auth.first_admin_emails, vec!["a@x.io", "b@x.io"]);
    assert_eq!(
        loaded.warnings,
        vec!["unknown configuration key `surprise.key` is ignored"]
    );
}

#[test]
fn first_admin_policies_and_limits_load() {
    let loaded = Config::load(
        None,
        env(&[
            ("CMS_AUTH_FIRST_ADMIN", "allowlist"),
            ("CMS_AUTH_FIRST_ADMIN_EMAILS", "Boss@Example.com"),
            ("CMS_AUTH_RATE_LIMIT_PER_EMAIL", "3"),
            ("CMS_SERVER_TRUSTED_PROXIES", "10.0.0.0/8, ::1"),
        ]),
    )
    .unwrap();
    let policy = loaded.config.sign_up_policy().unwrap();
    assert_eq!(policy.first_admin, cms_core::FirstAdmin::Allowlist);
    assert_eq!(policy.first_admin_emails[0].as_str(), "boss@example.com");
    let limits = loaded.config.rate_limit().unwrap();
    assert_eq!((limits.per_email, limits.per_address), (3, 30));
    assert_eq!(loaded.config.trusted_proxies().unwrap().len(), 2);
    for policy in ["open", "claimCode", "none"] {
        let c = Config::load(None, env(&[("CMS_AUTH_FIRST_ADMIN", policy)])).unwrap();
        assert_eq!(
            c.config.sign_up_policy().unwrap().first_admin.as_str(),
            policy
        );
    }
}

#[test]
fn bad_values_are_refused_with_the_key_named() {
    let err = Config::load(None, env(&[("CMS_PORT", "lots")]))
        .err()
        .unwrap();
    assert!(err.to_string().contains("CMS_PORT"), "{err}");
    let err = Config::load(None, env(&[("CMS_AUTH_FIRST_ADMIN", "claimcode")]))
        .err()
        .unwrap();
    assert!(err.to_string().contains("auth.firstAdmin"), "{err}");
    let err = Config::load(None, env(&[("CMS_AUTH_FIRST_ADMIN", "allowlist")]))
        .err()
        .unwrap();
    assert!(err.to_string().contains("firstAdminEmails"), "{err}");
    let err = Config::load(
        None,
        env(&[("CMS_AUTH_FIRST_ADMIN_EMAILS", "not-an-address")]),
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("auth.firstAdminEmails"), "{err}");
    let err = Config::load(None, env(&[("CMS_SERVER_TRUSTED_PROXIES", "10.0.0.0/99")]))
        .err()
        .unwrap();
    assert!(err.to_string().contains("server.trustedProxies"), "{err}");
    let err = Config::load(None, env(&[("CMS_AUTH_RATE_LIMIT_WINDOW_SECONDS", "0")]))
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("auth.rateLimit.windowSeconds"),
        "{err}"
    );
    assert!(Config::load(Some(Path::new("/nonexistent/cms.toml")), env(&[])).is_err());
}

#[test]
fn plugins_are_on_and_secrets_need_a_long_enough_key() {
    let c = Config::load(None, env(&[])).unwrap().config;
    assert!(c.plugins.forms && c.plugins.webhooks);
    assert!(!c.plugins.webhooks_deny_private_targets);
    assert_eq!(c.plugins.webhooks_timeout_ms, 10_000);
    assert_eq!(c.plugins.forms_submissions_per_minute, 30);
    assert_eq!(c.plugins.encryption_key(), None);

    let key = "k".repeat(32);
    let loaded = Config::load(
        None,
        env(&[
            ("CMS_PLUGINS_FORMS", "false"),
            ("CMS_PLUGINS_WEBHOOKS", "off"),
            ("CMS_PLUGINS_WEBHOOKS_DENY_PRIVATE_TARGETS", "true"),
            ("CMS_PLUGINS_WEBHOOKS_TIMEOUT_MS", "300"),
            ("CMS_PLUGINS_FORMS_SUBMISSIONS_PER_MINUTE", "0"),
            ("CMS_SECRET_ENCRYPTION_KEY", &key),
        ]),
    )
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let c = loaded.config;
    assert!(!c.plugins.forms && !c.plugins.webhooks);
    assert!(c.plugins.webhooks_deny_private_targets);
    assert_eq!(c.plugins.webhooks_timeout_ms, 300);
    assert_eq!(c.plugins.forms_submissions_per_minute, 0);
    assert_eq!(c.plugins.encryption_key(), Some(key.as_str()));

    // The file's camelCase keys; the systematic environment name works too.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cms.toml");
    std::fs::write(
        &file,
        "[plugins]\nforms = false\nwebhooksDenyPrivateTargets = true\nwebhooksTimeoutMs = 2500\n",
    )
    .unwrap();
    let loaded = Config::load(
        Some(&file),
        env(&[("CMS_PLUGINS_SECRET_ENCRYPTION_KEY", &key)]),
    )
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let c = loaded.config;
    assert!(!c.plugins.forms && c.plugins.webhooks);
    assert!(c.plugins.webhooks_deny_private_targets);
    assert_eq!(c.plugins.webhooks_timeout_ms, 2500);
    assert_eq!(c.plugins.encryption_key(), Some(key.as_str()));

    // Too short is refused, counted in characters; empty means unset.
    let short = "é".repeat(31);
    let err = Config::load(None, env(&[("CMS_SECRET_ENCRYPTION_KEY", &short)]))
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("CMS_SECRET_ENCRYPTION_KEY"),
        "{err}"
    );
    assert!(err.to_string().contains("32 characters"), "{err}");
    let c = Config::load(None, env(&[("CMS_SECRET_ENCRYPTION_KEY", "")]))
        .unwrap()
        .config;
    assert_eq!(c.plugins.encryption_key(), None);
    let err = Config::load(None, env(&[("CMS_PLUGINS_WEBHOOKS_TIMEOUT_MS", "0")]))
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("plugins.webhooksTimeoutMs"),
        "{err}"
    );
    let err = Config::load(None, env(&[("CMS_PLUGINS_FORMS", "maybe")]))
        .err()
        .unwrap();
    assert!(err.to_string().contains("CMS_PLUGINS_FORMS"), "{err}");
}

#[test]
fn storage_defaults_to_local_disk() {
    let c = Config::load(None, env(&[])).unwrap().config;
    assert_eq!(c.storage.kind, "local");
    assert!(!c.storage.direct_upload);
    assert_eq!(c.storage.region, "us-east-1");
    assert!(!c.storage.force_path_style);
    assert_eq!(c.storage.bucket, None);
}

#[test]
fn s3_storage_from_the_file_and_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cms.toml");
    std::fs::write(
        &file,
        "[storage]\nkind = \"s3\"\nbucket = \"assets\"\nendpoint = \"http://127.0.0.1:9000\"\n\
         accessKeyId = \"AKID\"\nsecretAccessKey = \"SECRET\"\nforcePathStyle = true\n\
         directUpload = true\n",
    )
    .unwrap();
    let loaded = Config::load(Some(&file), env(&[])).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let c = loaded.config;
    assert!(c.storage.direct_upload);
    let s3 = c.s3_settings();
    assert_eq!(s3.bucket, "assets");
    assert_eq!(s3.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
    assert_eq!(s3.region, "us-east-1");
    assert_eq!(
        (s3.access_key_id.as_deref(), s3.secret_access_key.as_deref()),
        (Some("AKID"), Some("SECRET"))
    );
    assert!(s3.force_path_style);

    // Every storage key can come from the environment, over the file.
    let c = Config::load(
        Some(&file),
        env(&[
            ("CMS_STORAGE_BUCKET", "other"),
            ("CMS_STORAGE_ENDPOINT", "https://s3.example.com"),
            ("CMS_STORAGE_REGION", "eu-west-3"),
            ("CMS_STORAGE_ACCESS_KEY_ID", "K2"),
            ("CMS_STORAGE_SECRET_ACCESS_KEY", "S2"),
            ("CMS_STORAGE_FORCE_PATH_STYLE", "false"),
            ("CMS_STORAGE_DIRECT_UPLOAD", "false"),
        ]),
    )
    .unwrap()
    .config;
    let s3 = c.s3_settings();
    assert_eq!(
        (
            s3.bucket.as_str(),
            s3.endpoint.as_deref(),
            s3.region.as_str()
        ),
        ("other", Some("https://s3.example.com"), "eu-west-3")
    );
    assert_eq!(
        (s3.access_key_id.as_deref(), s3.secret_access_key.as_deref()),
        (Some("K2"), Some("S2"))
    );
    assert!(!s3.force_path_style);
    assert!(!c.storage.direct_upload);

    let c = Config::load(
        None,
        env(&[("CMS_STORAGE_KIND", "s3"), ("CMS_STORAGE_BUCKET", "b")]),
    )
    .unwrap()
    .config;
    let s3 = c.s3_settings();
    assert_eq!((s3.endpoint, s3.access_key_id), (None, None));
}

#[test]
fn storage_settings_that_cannot_work_are_refused() {
    for (bad, says) in [
        (vec![("CMS_STORAGE_KIND", "s3")], "storage.bucket"),
        (
            vec![("CMS_STORAGE_KIND", "s3"), ("CMS_STORAGE_BUCKET", " ")],
            "storage.bucket",
        ),
        (
            vec![("CMS_STORAGE_DIRECT_UPLOAD", "true")],
            "storage.kind = \"s3\"",
        ),
        (vec![("CMS_STORAGE_KIND", "azure")], "storage.kind"),
        (
            vec![
                ("CMS_STORAGE_KIND", "s3"),
                ("CMS_STORAGE_BUCKET", "b"),
                ("CMS_STORAGE_ENDPOINT", "127.0.0.1:9000"),
            ],
            "storage.endpoint",
        ),
        (
            vec![
                ("CMS_STORAGE_KIND", "s3"),
                ("CMS_STORAGE_BUCKET", "b"),
                ("CMS_STORAGE_ACCESS_KEY_ID", "k"),
            ],
            "storage.secretAccessKey",
        ),
    ] {
        let err = Config::load(None, env(&bad)).err().unwrap();
        assert!(err.to_string().contains(says), "{bad:?}: {err}");
    }
    let err = Config::load(None, env(&[("CMS_STORAGE_DIRECT_UPLOAD", "true")]))
        .err()
        .unwrap();
    assert!(err.to_string().contains("storage.directUpload"), "{err}");
}

#[test]
fn email_settings_are_checked_and_links_have_a_base() {
    let loaded = Config::load(
        None,
        env(&[
            ("CMS_AUTH_REQUIRE_EMAIL_VERIFICATION", "true"),
            ("CMS_EMAIL_TRANSPORT", "smtp"),
            ("CMS_EMAIL_SMTP_HOST", "mail.example.com"),
            ("CMS_EMAIL_SMTP_PORT", "2525"),
        ]),
    )
    .unwrap();
    let c = loaded.config;
    assert!(c.auth.require_email_verification);
    assert_eq!(c.email.smtp.host.as_deref(), Some("mail.example.com"));
    assert_eq!(
        (c.email.smtp.port, c.email.smtp.security.as_str()),
        (Some(2525), "starttls")
    );
    assert_eq!(c.public_base_url(), "http://127.0.0.1:3000");

    for (bad, key) in [
        (vec![("CMS_EMAIL_TRANSPORT", "smtp")], "email.smtp.host"),
        (vec![("CMS_EMAIL_TRANSPORT", "pigeon")], "email.transport"),
        (
            vec![
                ("CMS_EMAIL_TRANSPORT", "smtp"),
                ("CMS_EMAIL_SMTP_HOST", "h"),
                ("CMS_EMAIL_SMTP_SECURITY", "ssl"),
            ],
            "email.smtp.security",
        ),
    ] {
        let err = Config::load(None, env(&bad)).err().unwrap();
        assert!(err.to_string().contains(key), "{err}");
    }

    let c = Config::load(
        None,
        env(&[("CMS_SERVER_PUBLIC_URL", "https://cms.example.com/")]),
    )
    .unwrap()
    .config;
    assert_eq!(c.public_base_url(), "https://cms.example.com");
}

#[test]
fn locales_load_from_the_file_and_the_environment_and_are_checked() {
    let dir = std::env::temp_dir().join(format!("cms-locales-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cms.toml");
    std::fs::write(
        &file,
        "[locales]\navailable = [\"en\", \"de\", \"de-AT\"]\n[locales.fallbacks]\n\"de-AT\" = \"de\"\n",
    )
    .unwrap();
    let loaded = Config::load(Some(&file), env(&[])).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    // The fallbacks table holds the user's own keys: no unknown-key warning for them.
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let locales = loaded.config.locales().unwrap();
    assert_eq!(locales.default_locale().as_str(), "en");
    let at = locales.find("de-AT").unwrap();
    let chain: Vec<&str> = locales.chain(at).into_iter().map(|t| t.as_str()).collect();
    assert_eq!(chain, ["de-AT", "de", "en"]);

    let from_env = Config::load(
        None,
        env(&[
            ("CMS_LOCALES_AVAILABLE", "en, fr, fr-CA"),
            ("CMS_LOCALES_DEFAULT", "fr"),
            ("CMS_LOCALES_FALLBACKS", "fr-CA=fr"),
        ]),
    )
    .unwrap()
    .config;
    let locales = from_env.locales().unwrap();
    assert_eq!(locales.default_locale().as_str(), "fr");
    assert_eq!(locales.fallbacks().len(), 1);

    for bad in [
        vec![("CMS_LOCALES_AVAILABLE", "en, e n")],
        vec![("CMS_LOCALES_DEFAULT", "de")],
        vec![("CMS_LOCALES_FALLBACKS", "en")],
        vec![
            ("CMS_LOCALES_AVAILABLE", "en,de"),
            ("CMS_LOCALES_FALLBACKS", "de=it"),
        ],
    ] {
        let err = Config::load(None, env(&bad)).err().expect("refused");
        assert!(
            err.to_string().contains("locales") || err.to_string().contains("CMS_LOCALES"),
            "{err}"
        );
    }
}

#[test]
fn cors_and_delivery_load_and_are_checked() {
    let c = Config::load(
        None,
        env(&[
            (
                "CMS_CORS_ORIGINS",
                "https://www.example.com, http://127.0.0.1:5173",
            ),
            ("CMS_DELIVERY_PREVIEW_MINUTES", "30"),
        ]),
    )
    .unwrap()
    .config;
    assert_eq!(
        c.cors_origins().unwrap(),
        ["https://www.example.com", "http://127.0.0.1:5173"]
    );
    assert_eq!(c.cors.max_age_seconds, 600);
    assert_eq!(c.delivery.preview_minutes, 30);
    assert_eq!(c.delivery.public_reads_per_minute, 600);
    assert_eq!(c.delivery.public_max_age_seconds, 60);
    assert_eq!(c.delivery.stale_while_revalidate_seconds, 300);
    assert!(Config::default().cors_origins().unwrap().is_empty());

    for bad in [
        "https://www.example.com/",
        "https://www.example.com/path",
        "www.example.com",
        "ftp://example.com",
        "https://Example.com",
        "https://user@example.com",
        "https://example.com:99999",
        "*, https://example.com",
    ] {
        let result = Config::load(None, env(&[("CMS_CORS_ORIGINS", bad)]));
        let error = result.err().unwrap_or_else(|| panic!("{bad} was taken"));
        assert!(error.0.contains("cors.origins"), "{bad}: {}", error.0);
    }
    let any = Config::load(None, env(&[("CMS_CORS_ORIGINS", "*")]))
        .unwrap()
        .config;
    assert_eq!(any.cors_origins().unwrap(), ["*"]);
    for (key, value) in [
        ("CMS_DELIVERY_PREVIEW_MINUTES", "0"),
        ("CMS_DELIVERY_PREVIEW_MINUTES", "20000"),
        ("CMS_DELIVERY_PUBLIC_READS_PER_MINUTE", "0"),
    ] {
        assert!(
            Config::load(None, env(&[(key, value)])).is_err(),
            "{key}={value}"
        );
    }
}

#[test]
fn the_event_stream_cap_loads_from_the_file_and_the_environment() {
    assert_eq!(Config::default().events.max_streams, 100);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cms.toml");
    std::fs::write(&path, "[events]\nmaxStreams = 7\n").unwrap();
    let loaded = Config::load(Some(&path), env(&[])).unwrap();
    assert_eq!(loaded.config.events.max_streams, 7);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let c = Config::load(Some(&path), env(&[("CMS_EVENTS_MAX_STREAMS", "3")]))
        .unwrap()
        .config;
    assert_eq!(c.events.max_streams, 3, "the environment wins");
    for bad in ["0", "-1", "many"] {
        assert!(
            Config::load(None, env(&[("CMS_EVENTS_MAX_STREAMS", bad)])).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn single_sign_on_providers_come_from_the_file_with_secrets_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cms.toml");
    let table = |extra: &str| {
        format!(
            "[[auth.oidc.providers]]\nid = \"staff-sso\"\nissuer = \"https://sso.example.com/realms/staff/\"\n\
             clientId = \"cms\"\nallowedDomains = [\"@Example.com\"]\n{extra}"
        )
    };
    std::fs::write(&file, table("")).unwrap();
    // Without a secret in the file or the environment, the start is refused by name.
    let err = Config::load(Some(&file), env(&[])).err().unwrap();
    assert!(
        err.to_string().contains("CMS_OIDC_STAFF_SSO_CLIENT_SECRET"),
        "{err}"
    );

    let loaded = Config::load(
        Some(&file),
        env(&[("CMS_OIDC_STAFF_SSO_CLIENT_SECRET", "from the environment")]),
    )
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let providers = loaded.config.oidc_providers().unwrap();
    let p = &providers[0];
    assert_eq!(
        (p.id.as_str(), p.name.as_str(), p.client_secret.as_str()),
        ("staff-sso", "staff-sso", "from the environment")
    );
    assert_eq!(
        p.issuer, "https://sso.example.com/realms/staff/",
        "kept exactly"
    );
    assert_eq!(p.scopes, ["openid", "email", "profile"]);
    assert_eq!(p.allowed_domains, ["example.com"]);
    assert_eq!(
        (p.organization.as_deref(), p.default_role.as_str()),
        (None, "viewer")
    );

    // The environment wins over the file; `openid` is always asked for.
    std::fs::write(
        &file,
        table("clientSecret = \"from the file\"\nscopes = [\"email\"]\ndefaultRole = \"editor\"\n"),
    )
    .unwrap();
    let c = Config::load(Some(&file), env(&[])).unwrap().config;
    let p = &c.oidc_providers().unwrap()[0];
    assert_eq!(p.client_secret, "from the file");
    assert_eq!(p.scopes, ["openid", "email"]);
    assert_eq!(p.default_role, "editor");

    for (bad, why) in [
        ("id = \"Staff\"", "`id`"),
        ("issuer = \"sso.example.com\"", "`issuer`"),
        ("defaultRole = \"Not A Role\"", "`defaultRole`"),
        ("unknown = 1", "unknown"),
    ] {
        let key = bad.split(' ').next().unwrap();
        let text = table("clientSecret = \"s\"\n")
            .lines()
            .filter(|l| !l.starts_with(&format!("{key} ")))
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
            + bad
            + "\n";
        std::fs::write(&file, text).unwrap();
        let err = Config::load(Some(&file), env(&[])).err().unwrap();
        assert!(err.to_string().contains(why), "{bad}: {err}");
    }
}

#[test]
fn audit_retention_is_a_year_unless_set_and_at_least_a_day() {
    let default = Config::load(None, env(&[])).unwrap().config;
    assert_eq!(default.audit.retention_days, 365);
    let set = Config::load(None, env(&[("CMS_AUDIT_RETENTION_DAYS", "30")])).unwrap();
    assert_eq!(set.config.audit.retention_days, 30);
    for bad in ["0", "-1", "a year"] {
        let refused = Config::load(None, env(&[("CMS_AUDIT_RETENTION_DAYS", bad)]));
        let message = refused.err().expect("refused").to_string();
        assert!(
            message.contains("audit.retentionDays") || message.contains("CMS_AUDIT_RETENTION_DAYS"),
            "{bad}: {message}"
        );
    }
}

#[test]
fn metrics_are_on_and_open_unless_configured_and_the_token_comes_from_the_environment() {
    let default = Config::load(None, env(&[])).unwrap().config;
    assert!(default.metrics.enabled);
    assert_eq!(default.metrics.token(), None);
    assert_eq!(env_name("metrics.token"), "CMS_METRICS_TOKEN");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cms.toml");
    std::fs::write(
        &path,
        "[metrics]\nenabled = false\ntoken = \"from the file\"\n",
    )
    .unwrap();
    let loaded = Config::load(Some(&path), env(&[])).unwrap();
    assert!(!loaded.config.metrics.enabled);
    assert_eq!(loaded.config.metrics.token(), Some("from the file"));
    assert_eq!(
        loaded.warnings,
        vec!["metrics.token is shorter than 32 characters: use a longer random value"]
    );

    let token = "a metrics token of at least thirty-two characters";
    let loaded = Config::load(
        Some(&path),
        env(&[("CMS_METRICS_TOKEN", token), ("CMS_METRICS_ENABLED", "on")]),
    )
    .unwrap();
    let c = loaded.config;
    assert!(c.metrics.enabled, "the environment wins");
    assert_eq!(c.metrics.token(), Some(token));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let empty = Config::load(None, env(&[("CMS_METRICS_TOKEN", "")])).unwrap();
    assert_eq!(
        empty.config.metrics.token(),
        None,
        "an empty token sets none"
    );
    let bad = Config::load(None, env(&[("CMS_METRICS_ENABLED", "maybe")]));
    assert!(bad.is_err_and(|e| e.to_string().contains("CMS_METRICS_ENABLED")));
}
