//! The `cms` binary: `serve`, `worker`, `migrate`, `migrate-content`, `backup`, `export`, `import`, `user create`, `events tail`, `mcp`,
//! `openapi`, `version`.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use cms::Config;

#[derive(Parser)]
#[command(name = "cms", version, about = "A headless content management service")]
struct Cli {
    /// Configuration file (default: ./cms.toml when present). Also CMS_CONFIG.
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP service.
    Serve {
        /// Address to listen on (also CMS_HOST; default 127.0.0.1).
        #[arg(long)]
        host: Option<String>,
        /// Port to listen on (also CMS_PORT; default 3000).
        #[arg(long)]
        port: Option<u16>,
    },
    /// Drive the job queue (relay, due jobs, schedules) until stopped; any number may run
    /// beside any number of `serve` instances.
    Worker,
    /// Apply the database migrations, then exit.
    Migrate,
    /// Rewrite stored documents to the current schemas: renamed fields (`renamedFrom`) moved
    /// to their new names, removed fields dropped into each document's history. In chunks; run
    /// again after an interruption to finish.
    MigrateContent {
        /// Only list what would change.
        #[arg(long)]
        dry_run: bool,
    },
    /// Copy the SQLite database to PATH (a new file) while the service keeps running: a
    /// consistent snapshot (VACUUM INTO). On PostgreSQL, use pg_dump.
    Backup {
        /// Where to write the copy; must not exist.
        path: PathBuf,
    },
    /// Write everything the instance holds (or some organizations), assets' files included,
    /// to one archive (tar, zstd-compressed): to move it to another database of either engine
    /// with `cms import`.
    Export {
        /// Only this organization and its child organizations (repeatable); without it, the
        /// whole instance.
        #[arg(long = "org", value_name = "SLUG")]
        organizations: Vec<String>,
        /// Where to write the archive (a new file); standard output when absent.
        #[arg(long)]
        output: Option<PathBuf>,
        /// Also carry password hashes, API keys, two-factor secrets and invitation tokens.
        /// The importing instance needs the same auth.secret for them to work.
        #[arg(long)]
        with_credentials: bool,
    },
    /// Load an archive written by `cms export` into the configured database, which must hold
    /// no people and no organizations, and its files into the configured asset storage.
    Import {
        /// The archive; `-` for standard input.
        file: PathBuf,
        /// Confirms that the target is a new, empty database (merging into one with data is
        /// not supported).
        #[arg(long)]
        into_empty: bool,
    },
    /// Manage users out of band.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Read the event log.
    Events {
        #[command(subcommand)]
        command: EventsCommand,
    },
    /// Serve the MCP server over standard input and output, for a desktop AI client that starts
    /// it (CONTRACT.md section 21): every tool and resource acts with the API key in
    /// CMS_MCP_API_KEY, with that key's rights. Logs go to standard error.
    Mcp,
    /// Print this instance's OpenAPI 3.1 document (what `/api/openapi.json` serves).
    Openapi,
    /// Print the version.
    Version,
}

#[derive(Subcommand)]
enum UserCommand {
    /// Create the instance's first administrator (instance super_admin, owner of "Default"),
    /// as the first sign-up would; the way in under `auth.firstAdmin = "none"`. The password is
    /// read from standard input, never from the command line.
    Create {
        #[arg(long)]
        email: String,
        #[arg(long)]
        name: String,
        /// Read the password from standard input (required; a trailing newline is dropped).
        #[arg(long)]
        password_stdin: bool,
        /// Add a further user when the instance already has its administrator.
        #[arg(long)]
        additional: bool,
        /// The instance role of a further user: super_admin, admin, editor (default) or viewer.
        #[arg(long, requires = "additional")]
        role: Option<String>,
    },
}

#[derive(Subcommand)]
enum EventsCommand {
    /// Print the organization's new events as they commit, on any instance, one JSON line each
    /// (as GET /api/events shows them), until interrupted (Ctrl-C). Reads as an operator of
    /// the organization: every event, whole.
    Tail {
        /// The organization, by id or slug (default: the `default` organization).
        #[arg(long)]
        organization: Option<String>,
        /// Only these event types, comma-separated (each built in or declared).
        #[arg(long, value_delimiter = ',')]
        types: Vec<String>,
        /// Print the events after this event id first.
        #[arg(long)]
        after: Option<String>,
    },
}

/// `cms migrate-content`: what changed (or would), one line per document, then the count.
/// The count of documents read goes to standard error as it grows, on a terminal only.
async fn migrate_content(config: Config, dry_run: bool) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    let app = cms::Builder::new(config).build().await?;
    let terminal = std::io::stderr().is_terminal();
    let run = app
        .cms
        .documents()
        .migrate_content(dry_run, |read| {
            if terminal {
                eprint!("\r{read} documents read");
            }
        })
        .await?;
    if terminal {
        eprintln!();
    }
    for doc in &run.changed {
        let mut parts = Vec::new();
        if !doc.renamed.is_empty() {
            parts.push(format!("renamed {}", doc.renamed.join(", ")));
        }
        if !doc.dropped.is_empty() {
            parts.push(format!("dropped {}", doc.dropped.join(", ")));
        }
        println!("{} {}: {}", doc.doc_type, doc.id, parts.join("; "));
    }
    let outcome = match dry_run {
        true => "would change (a dry run: nothing was written)",
        false => "changed",
    };
    println!(
        "{} documents read, {} {outcome}",
        run.scanned,
        run.changed.len()
    );
    Ok(())
}

/// A progress bar on standard error when it is a terminal; nothing otherwise.
fn progress_bar(verb: &'static str) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix} {bar:40} {pos}/{len} rows and files ({msg}), {elapsed}",
        )
        .expect("a valid template"),
    );
    bar.set_prefix(verb);
    bar
}

fn show(bar: &indicatif::ProgressBar) -> impl Fn(cms::service::TransferProgress) + Send + Sync {
    let bar = bar.clone();
    move |at| {
        bar.set_length(at.total);
        bar.set_position(at.done);
        bar.set_message(at.stage);
    }
}

/// What a transfer moved, one line per table, on standard error (standard output may be the
/// archive).
fn report(summary: &cms::TransferSummary) {
    for (table, rows) in &summary.rows {
        eprintln!("{table}: {rows}");
    }
    eprintln!("files: {} ({} bytes)", summary.files, summary.file_bytes);
    if !summary.missing_files.is_empty() {
        eprintln!(
            "assets whose file storage did not have ({}): {}",
            summary.missing_files.len(),
            summary.missing_files.join(", ")
        );
    }
}

/// `cms export`: to the file, or to standard output.
async fn export(
    config: Config,
    options: cms::ExportOptions,
    output: Option<PathBuf>,
) -> anyhow::Result<()> {
    let bar = progress_bar("export");
    let progress = show(&bar);
    let exported = match &output {
        Some(path) => cms::transfer::export_file(&config, &options, path, &progress).await,
        None => {
            let stdout = Box::new(std::io::stdout());
            cms::transfer::export_to(&config, &options, stdout, &progress).await
        }
    };
    bar.finish_and_clear();
    report(&exported?);
    Ok(())
}

/// `cms import FILE`.
async fn import(config: Config, file: PathBuf) -> anyhow::Result<()> {
    let bar = progress_bar("import");
    let source: Box<dyn std::io::Read + Send> = if file.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        let opened = std::fs::File::open(&file)
            .with_context(|| format!("cannot open {}", file.display()))?;
        Box::new(std::io::BufReader::new(opened))
    };
    let imported = cms::transfer::import_from(&config, source, &show(&bar)).await;
    bar.finish_and_clear();
    report(&imported?);
    eprintln!("the search index is rebuilt when the service next starts");
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Command::Version = cli.command {
        println!("cms {}", env!("CARGO_PKG_VERSION"));
        return Ok(());
    }
    let loaded = Config::load(cli.config.as_deref(), std::env::vars())?;
    // `user create` prints the user on standard output; its log goes beside errors.
    init_logging(
        &loaded.config,
        matches!(
            cli.command,
            Command::User { .. }
                | Command::Openapi
                | Command::Events { .. }
                | Command::Mcp
                | Command::Backup { .. }
                | Command::MigrateContent { .. }
                | Command::Export { .. }
                | Command::Import { .. }
        ),
    );
    for warning in &loaded.warnings {
        tracing::warn!("{warning}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match cli.command {
            Command::Serve { host, port } => serve(loaded.config, host, port).await,
            Command::Worker => worker(loaded.config).await,
            Command::Migrate => {
                cms::migrate(&loaded.config).await?;
                tracing::info!("migrations applied");
                Ok(())
            }
            Command::MigrateContent { dry_run } => migrate_content(loaded.config, dry_run).await,
            Command::Backup { path } => {
                cms::backup(&loaded.config, &path).await?;
                let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                println!("backup written to {} ({bytes} bytes)", path.display());
                Ok(())
            }
            Command::Export {
                organizations,
                output,
                with_credentials,
            } => {
                let options = cms::ExportOptions {
                    organizations,
                    with_credentials,
                };
                export(loaded.config, options, output).await
            }
            Command::Import { file, into_empty } => {
                anyhow::ensure!(
                    into_empty,
                    "`cms import` writes into an empty database only: pass --into-empty to \
                     confirm that the configured database is the new one (merging into a \
                     database with data is not supported)"
                );
                import(loaded.config, file).await
            }
            Command::User {
                command:
                    UserCommand::Create {
                        email,
                        name,
                        password_stdin,
                        additional,
                        role,
                    },
            } => {
                let additional = additional_role(additional, role.as_deref())?;
                let password = read_password(password_stdin)?;
                create_user(loaded.config, name, email, password, additional).await
            }
            Command::Events {
                command:
                    EventsCommand::Tail {
                        organization,
                        types,
                        after,
                    },
            } => tail_events(loaded.config, organization, types, after).await,
            Command::Mcp => mcp(loaded.config).await,
            Command::Openapi => {
                let app = cms::Builder::new(loaded.config).build().await?;
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                out.write_all(&app.openapi_document())?;
                out.write_all(b"\n")?;
                Ok(())
            }
            Command::Version => unreachable!("handled before start-up"),
        }
    })
}

async fn serve(mut config: Config, host: Option<String>, port: Option<u16>) -> anyhow::Result<()> {
    if let Some(host) = host {
        config.server.host = host;
    }
    if let Some(port) = port {
        config.server.port = port;
    }
    let address = format!("{}:{}", config.server.host, config.server.port);
    let app = cms::Builder::new(config.clone()).build().await?;
    let listener = tokio::net::TcpListener::bind(&address)
        .await
        .with_context(|| format!("cannot listen on {address}"))?;
    let local = listener.local_addr()?;
    let base = config
        .server
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{local}"));
    tracing::info!(address = %local, "listening; admin at {base}/admin, API at {base}/api, health at {base}/healthz");
    // After binding, so the code is usable as soon as it is read.
    if let Some(code) = app.cms.auth().issue_claim_code().await? {
        // The only time the code is shown: the database keeps its hash alone.
        tracing::warn!(
            "no administrator yet: the first sign-up must send this claim code in the x-cms-bootstrap-code header (it replaces any code printed before): {code}"
        );
    }
    let embedded = config.jobs.embedded_worker.then(|| {
        tracing::info!("embedded worker on: this instance drives the job queue");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let worker = app.cms.worker();
        let interval = std::time::Duration::from_millis(config.jobs.tick_ms.max(1));
        let task = tokio::spawn(async move {
            worker
                .run_until(interval, async {
                    let _ = stopped.await;
                })
                .await
        });
        (stop, task)
    });
    // Event streams and MCP sessions' streams never end by themselves: the drain ends them, or
    // it would wait forever.
    let streams = app.cms.clone();
    let sessions = app.mcp_sessions.clone();
    let shutdown = async move {
        shutdown_signal().await;
        streams.end_event_streams();
        sessions.end_all();
    };
    cms_server::serve(listener, app.router, shutdown).await?;
    if let Some((stop, task)) = embedded {
        let _ = stop.send(());
        let _ = task.await;
    }
    app.cms.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// `cms mcp`: one MCP client on standard input and output, until it closes them.
async fn mcp(config: Config) -> anyhow::Result<()> {
    let key = std::env::var("CMS_MCP_API_KEY")
        .ok()
        .filter(|key| !key.trim().is_empty())
        .context("set CMS_MCP_API_KEY to an API key of the organization to work in")?;
    let app = cms::Builder::new(config).build().await?;
    let served = cms_mcp::serve_stdio(app.cms.clone(), app.agent.clone(), key).await;
    app.cms.close().await;
    Ok(served?)
}

async fn worker(config: Config) -> anyhow::Result<()> {
    let interval = std::time::Duration::from_millis(config.jobs.tick_ms.max(1));
    let app = cms::Builder::new(config).build().await?;
    tracing::info!("worker started");
    app.cms
        .worker()
        .run_until(interval, shutdown_signal())
        .await;
    app.cms.close().await;
    tracing::info!("worker stopped");
    Ok(())
}

/// `cms events tail`: the organization's event stream, through the service as an operator
/// actor, one JSON line per event on standard output (logs go to standard error), until
/// interrupted.
async fn tail_events(
    config: Config,
    organization: Option<String>,
    types: Vec<String>,
    after: Option<String>,
) -> anyhow::Result<()> {
    let app = cms::Builder::new(config).build().await?;
    let outcome = tokio::select! {
        outcome = tail(&app.cms, organization, types, after) => outcome,
        () = shutdown_signal() => Ok(()),
    };
    app.cms.close().await;
    outcome
}

/// Prints the stream; one that falls behind (a slow terminal) is opened again after the last
/// event printed. Returns only on an error.
async fn tail(
    cms: &cms::Cms,
    organization: Option<String>,
    types: Vec<String>,
    mut after: Option<String>,
) -> anyhow::Result<()> {
    use cms::service::jobs::EventStreamRequest;
    use std::io::Write;
    let actor = cms
        .operator_actor("cli", organization.as_deref())
        .await
        .with_context(|| match &organization {
            Some(named) => format!("organization `{named}`"),
            None => "the `default` organization (name one with --organization)".into(),
        })?;
    loop {
        let request = EventStreamRequest {
            after: after.clone(),
            types: types.clone(),
        };
        let mut stream = cms.jobs().event_stream(&actor, request).await?;
        tracing::info!(
            organization = actor.organization_id.as_deref().unwrap_or_default(),
            "tailing the event stream"
        );
        while let Some(event) = stream.next().await? {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", serde_json::to_string(&event)?)?;
            out.flush()?;
            after = Some(event.id);
        }
        tracing::info!("the stream fell behind; reading on from the last event printed");
    }
}

/// `None` for the first administrator; the instance role of a further user with
/// `--additional` (editor unless `--role` says otherwise).
fn additional_role(
    additional: bool,
    role: Option<&str>,
) -> anyhow::Result<Option<cms::core::InstanceRole>> {
    if !additional {
        return Ok(None);
    }
    let role = role.unwrap_or("editor");
    cms::core::InstanceRole::parse(role)
        .map(Some)
        .with_context(|| format!("--role {role}: expected super_admin, admin, editor or viewer"))
}

/// The password from standard input, without its trailing newline. A terminal would echo it,
/// so it must be piped or redirected.
fn read_password(password_stdin: bool) -> anyhow::Result<String> {
    use std::io::{IsTerminal, Read};
    anyhow::ensure!(
        password_stdin,
        "pass --password-stdin and pipe the password in; it is never taken from the command line"
    );
    let mut stdin = std::io::stdin();
    anyhow::ensure!(
        !stdin.is_terminal(),
        "--password-stdin reads a pipe or a file (`cms user create ... --password-stdin < file`), so the password is never echoed"
    );
    let mut password = String::new();
    stdin
        .read_to_string(&mut password)
        .context("reading the password from standard input")?;
    let trimmed = password.strip_suffix('\n').unwrap_or(&password);
    let trimmed = trimmed.strip_suffix('\r').unwrap_or(trimmed);
    Ok(trimmed.to_string())
}

async fn create_user(
    config: Config,
    name: String,
    email: String,
    password: String,
    additional: Option<cms::core::InstanceRole>,
) -> anyhow::Result<()> {
    let app = cms::Builder::new(config).build().await?;
    let created = app
        .cms
        .auth()
        .create_user(cms::service::NewUser {
            name: Some(name),
            email: Some(email),
            password: Some(password),
            additional,
        })
        .await;
    app.cms.close().await;
    let user = created.map_err(|e| anyhow::anyhow!("cannot create the user: {e}"))?;
    println!("{}", serde_json::to_string(&user)?);
    tracing::info!(user = %user.email, role = %user.role.as_str(), "user created");
    Ok(())
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down: finishing the work in flight");
}

fn init_logging(config: &Config, to_stderr: bool) {
    use tracing_subscriber::EnvFilter;
    use tracing_subscriber::fmt::writer::BoxMakeWriter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    use std::io::IsTerminal;
    let (writer, terminal) = if to_stderr {
        (
            BoxMakeWriter::new(std::io::stderr),
            std::io::stderr().is_terminal(),
        )
    } else {
        (
            BoxMakeWriter::new(std::io::stdout),
            std::io::stdout().is_terminal(),
        )
    };
    // Colours for a person at a terminal; a file or a log collector gets plain text.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(terminal)
        .with_writer(writer);
    if config.log.format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}
