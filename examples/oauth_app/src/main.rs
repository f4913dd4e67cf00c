//! `oauth-app`: runs the example application (see the crate README for the walkthrough).

use clap::Parser;
use inlet_example_oauth_app::{App, Config};
use poem::{Server, listener::TcpListener};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    let config = Config::parse();
    let app = App::new(&config)?;
    tracing::info!(
        listen = %config.listen,
        public_url = %config.public_base(),
        redirect_uri = app.redirect_uri(),
        inlet = %config.inlet_url,
        "oauth-app listening"
    );
    Server::new(TcpListener::bind(config.listen))
        .run_with_graceful_shutdown(
            app.endpoint(),
            async {
                let _ = tokio::signal::ctrl_c().await;
            },
            None,
        )
        .await?;
    Ok(())
}
