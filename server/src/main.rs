//! The `inlet` command: `serve`, `openapi`, `extract` and `admin create-user` (DESIGN 2).

use std::{path::PathBuf, time::Duration};

use anyhow::Context;
use clap::{Parser, Subcommand};
use inlet_core::extract::Limits;
use inlet_server::{
    AppState, Settings,
    auth::{self, AdminEnv, NewUserOptions},
    config, open_stores,
};
use poem::listener::{Listener, TcpListener};

#[derive(Parser)]
#[command(
    name = "inlet",
    version,
    about = "Push files and records into a searchable store"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP service.
    Serve(ServeArgs),
    /// Print the OpenAPI document.
    Openapi,
    /// Print the detected format, character count and extracted text of files.
    Extract {
        /// Files to extract.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Administration.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "INLET_BIND", default_value = config::DEFAULT_BIND)]
    bind: String,
    /// Database URL: `sqlite://FILE?mode=rwc`, `postgres://...` or `memory:`.
    #[arg(long, env = "INLET_DATABASE_URL", default_value = config::DEFAULT_DATABASE)]
    database: String,
    /// Public base URL of the service (used in links it generates).
    #[arg(long, env = "INLET_PUBLIC_URL")]
    public_url: Option<String>,
    /// Largest accepted upload, in bytes.
    #[arg(long, env = "INLET_MAX_UPLOAD_BYTES", default_value_t = config::DEFAULT_MAX_UPLOAD_BYTES)]
    max_upload_bytes: u64,
    /// Time budget of one extraction, in seconds.
    #[arg(long, env = "INLET_EXTRACTION_TIMEOUT_SECS", default_value_t = config::DEFAULT_EXTRACTION_TIMEOUT.as_secs())]
    extraction_timeout_secs: u64,
    /// Extractions running at once (default: the number of CPUs).
    #[arg(long, env = "INLET_EXTRACTION_CONCURRENCY")]
    extraction_concurrency: Option<usize>,
    /// Log as JSON lines (each line carries the request id of the request it belongs to).
    #[arg(
        long,
        env = "INLET_LOG_JSON",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    log_json: bool,
    /// On SIGTERM or Ctrl-C, how long to wait for requests in flight to finish, in seconds.
    #[arg(long, env = "INLET_SHUTDOWN_GRACE_SECS", default_value_t = config::DEFAULT_SHUTDOWN_GRACE.as_secs())]
    shutdown_grace_secs: u64,
}

#[derive(Subcommand)]
enum AdminCommand {
    /// Create a user and print `{"workspace","email","password","apiToken"}`.
    CreateUser {
        /// E-mail address.
        #[arg(long)]
        email: String,
        /// Make the user an ADMIN.
        #[arg(long)]
        admin: bool,
        /// Workspace (made when missing).
        #[arg(long, default_value = inlet_core::token::DEFAULT_WORKSPACE)]
        workspace: String,
        /// Password (generated when absent).
        #[arg(long)]
        password: Option<String>,
        /// Database URL.
        #[arg(long, env = "INLET_DATABASE_URL", default_value = config::DEFAULT_DATABASE)]
        database: String,
    },
    /// Enable or disable OAuth2 clients for a workspace.
    Oauth {
        /// Workspace name.
        #[arg(long)]
        workspace: String,
        /// Enable OAuth.
        #[arg(long, conflicts_with = "disable", required_unless_present = "disable")]
        enable: bool,
        /// Disable OAuth (client endpoints answer 403; existing tokens keep working until
        /// they expire or are revoked).
        #[arg(long)]
        disable: bool,
        /// Database URL.
        #[arg(long, env = "INLET_DATABASE_URL", default_value = config::DEFAULT_DATABASE)]
        database: String,
    },
}

fn init_logging(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        builder
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init();
    } else {
        builder.init();
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Serve(args) => serve(args).await,
        Command::Openapi => {
            println!("{}", inlet_server::openapi_json());
            Ok(())
        }
        Command::Extract { files } => extract(files),
        Command::Admin {
            command:
                AdminCommand::CreateUser {
                    email,
                    admin,
                    workspace,
                    password,
                    database,
                },
        } => {
            let stores = open_stores(&database).await?;
            let creds = auth::create_user(
                stores.tokens.as_ref(),
                NewUserOptions {
                    email,
                    admin,
                    workspace,
                    password,
                    api_token: None,
                },
            )
            .await?;
            println!("{}", serde_json::to_string(&creds)?);
            Ok(())
        }
        Command::Admin {
            command:
                AdminCommand::Oauth {
                    workspace,
                    enable,
                    disable: _,
                    database,
                },
        } => {
            let stores = open_stores(&database).await?;
            if !stores.tokens.set_oauth_enabled(&workspace, enable).await? {
                anyhow::bail!("no workspace named '{workspace}'");
            }
            println!(
                "OAuth {} for workspace '{workspace}'",
                if enable { "enabled" } else { "disabled" }
            );
            Ok(())
        }
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    init_logging(args.log_json);
    let stores = open_stores(&args.database)
        .await
        .with_context(|| format!("opening database {}", args.database))?;
    let env = AdminEnv {
        email: std::env::var("INLET_ADMIN_EMAIL").ok(),
        password: std::env::var("INLET_ADMIN_PASSWORD").ok(),
        api_token: std::env::var("INLET_ADMIN_API_TOKEN").ok(),
    };
    if let Some(creds) = auth::bootstrap(&stores.tokens, env).await? {
        println!(
            "First start: created workspace '{}' with administrator\n  e-mail:    {}\n  password:  {}\n  API token: {}\n(shown once; keep them)",
            creds.workspace, creds.email, creds.password, creds.api_token
        );
    }
    let defaults = Settings::default();
    let settings = Settings {
        max_upload_bytes: args.max_upload_bytes,
        extraction_timeout: Duration::from_secs(args.extraction_timeout_secs.max(1)),
        extraction_concurrency: args
            .extraction_concurrency
            .unwrap_or(defaults.extraction_concurrency),
        public_url: args.public_url.clone(),
        shutdown_grace: Duration::from_secs(args.shutdown_grace_secs),
        ..defaults
    };
    let state = AppState::new(stores.records, stores.tokens, settings);
    let acceptor = TcpListener::bind(args.bind.as_str())
        .into_acceptor()
        .await
        .with_context(|| format!("binding {}", args.bind))?;
    inlet_server::serve(acceptor, state, shutdown_signal()).await?;
    tracing::info!("inlet stopped");
    Ok(())
}

/// Resolves on SIGTERM (what container runtimes and systemd send) or Ctrl-C.
async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
    tracing::info!("shutting down: no new connections; finishing requests in flight");
}

fn extract(files: Vec<PathBuf>) -> anyhow::Result<()> {
    for path in files {
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let outcome = inlet_extractors::extract(&bytes, &Limits::default());
        println!("== {}", path.display());
        println!("format: {}", outcome.format.unwrap_or("unrecognized"));
        println!("characters: {}", outcome.text.chars().count());
        if outcome.truncated {
            println!("truncated: yes");
        }
        if let Some(reason) = &outcome.failure {
            println!("failure: {reason}");
        }
        println!();
        println!("{}", outcome.text);
    }
    Ok(())
}
