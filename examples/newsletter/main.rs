//! An example host application: the content service, extended by a plugin of its own,
//! without forking it.
//!
//! ```sh
//! CMS_SECRET_ENCRYPTION_KEY=an-encryption-key-of-32-characters-or-more \
//!   cargo run --example newsletter
//! ```
//!
//! Everything `cms serve` offers is there (configuration from `cms.toml` and `CMS_*`, the demo
//! schemas, the admin URL), plus the `newsletter` plugin of `plugin.rs`: a capability, a
//! settings page, a custom event, a consumer and a route. The test suite exercises the same
//! plugin (`tests/api/example_host.rs`).

mod plugin;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt::init();
    let config = cms::Config::load(None, std::env::vars())?.config;
    let address = format!("{}:{}", config.server.host, config.server.port);
    let app = cms::Builder::new(config)
        .plugin(plugin::Newsletter)
        .build()
        .await?;
    let listener = tokio::net::TcpListener::bind(&address).await?;
    tracing::info!("serving on http://{address} with the newsletter plugin");
    // The queue runs in this process: published posts reach the plugin's consumer.
    let worker = app.cms.worker();
    tokio::spawn(async move {
        worker
            .run_until(std::time::Duration::from_secs(1), std::future::pending())
            .await
    });
    // Open event streams never end by themselves: end them when the drain starts.
    let streams = app.cms.clone();
    cms::server::serve(listener, app.router, async move {
        let _ = tokio::signal::ctrl_c().await;
        streams.end_event_streams();
    })
    .await?;
    Ok(())
}
