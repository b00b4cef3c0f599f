//! The `cms` binary: `serve`, `worker`, `migrate`, `version`.

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
    /// Print the version.
    Version,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Command::Version = cli.command {
        println!("cms {}", env!("CARGO_PKG_VERSION"));
        return Ok(());
    }
    let loaded = Config::load(cli.config.as_deref(), std::env::vars())?;
    init_logging(&loaded.config);
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
    tracing::info!(address = %local, "listening; API at {base}/api, health at {base}/healthz");
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
    cms_server::serve(listener, app.router, shutdown_signal()).await?;
    if let Some((stop, task)) = embedded {
        let _ = stop.send(());
        let _ = task.await;
    }
    app.cms.close().await;
    tracing::info!("stopped");
    Ok(())
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

fn init_logging(config: &Config) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    if config.log.format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}
