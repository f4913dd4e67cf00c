//! The `inlet` command: `serve`, `openapi`, `extract` and `admin create-user` (DESIGN 2).

use std::{io::IsTerminal, path::PathBuf, time::Duration};

use anyhow::Context;
use clap::{Parser, Subcommand};
use inlet_backends::moving::End;
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
    Serve(Box<ServeArgs>),
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
    /// OCR languages, `+`- or comma-separated Tesseract codes (`eng+deu`); default: every
    /// language installed for Tesseract.
    #[arg(long, env = "INLET_OCR_LANGUAGES", default_value = "")]
    ocr_languages: String,
    /// Tesseract processes at once (their own pool, shared fairly between workspaces: an
    /// extraction waiting for OCR lends its extraction slot back, so OCR never holds up other
    /// extractions).
    #[arg(long, env = "INLET_OCR_CONCURRENCY", default_value_t = inlet_extractors::ocr::DEFAULT_CONCURRENCY)]
    ocr_concurrency: usize,
    /// Time budget of one OCR document, in seconds.
    #[arg(long, env = "INLET_OCR_TIMEOUT_SECS", default_value_t = inlet_extractors::ocr::DEFAULT_TIME_BUDGET.as_secs())]
    ocr_timeout_secs: u64,
    /// Pages of a multi-page image (TIFF) read at most.
    #[arg(long, env = "INLET_OCR_MAX_PAGES", default_value_t = inlet_extractors::ocr::DEFAULT_MAX_PAGES)]
    ocr_max_pages: usize,
    /// Largest image read by OCR, in pixels (width × height); larger images are stored with
    /// the reason and no OCR text (their documents keep their other text).
    #[arg(long, env = "INLET_OCR_MAX_PIXELS", default_value_t = inlet_extractors::ocr::DEFAULT_MAX_PIXELS)]
    ocr_max_pixels: u64,
    /// Megabytes of address space one Tesseract process may take (0: no limit).
    #[arg(long, env = "INLET_OCR_MEMORY_LIMIT_MB", default_value_t = inlet_extractors::ocr::DEFAULT_MEMORY_LIMIT_BYTES >> 20)]
    ocr_memory_limit_mb: u64,
    /// Whether pictures in documents (slides' screenshots, logos, pasted scans) are read by OCR
    /// too, not only images and scans uploaded as files (`--ocr-document-pictures=false`: no).
    #[arg(long, env = "INLET_OCR_DOCUMENT_PICTURES", default_value_t = true, action = clap::ArgAction::Set)]
    ocr_document_pictures: bool,
    /// The Tesseract command.
    #[arg(long, env = "INLET_OCR_COMMAND", default_value = "tesseract")]
    ocr_command: String,
    /// Log format: `plain` (colours only when standard error is a terminal) or `json` (one
    /// object per line; each request's lines carry its request id).
    #[arg(long, env = "INLET_LOG_FORMAT", value_enum, default_value_t = LogFormat::Plain)]
    log_format: LogFormat,
    /// Same as `--log-format json` (kept for existing deployments).
    #[arg(
        long,
        env = "INLET_LOG_JSON",
        hide = true,
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    log_json: bool,
    /// On SIGTERM or Ctrl-C, how long to wait for requests in flight to finish, in seconds.
    #[arg(long, env = "INLET_SHUTDOWN_GRACE_SECS", default_value_t = config::DEFAULT_SHUTDOWN_GRACE.as_secs())]
    shutdown_grace_secs: u64,
    /// Seconds a client has to send a whole request head (from connecting, or from the first
    /// byte of a kept-alive connection's next request).
    #[arg(long, env = "INLET_HEADER_TIMEOUT_SECS", default_value_t = config::DEFAULT_HEADER_TIMEOUT.as_secs())]
    header_timeout_secs: u64,
    /// Seconds a request body may pause before the request is answered 408 and the connection
    /// closed (also: a client that reads none of a response for this long is disconnected).
    #[arg(long, env = "INLET_BODY_IDLE_TIMEOUT_SECS", default_value_t = config::DEFAULT_BODY_IDLE_TIMEOUT.as_secs())]
    body_idle_timeout_secs: u64,
    /// Seconds an idle kept-alive connection stays open between requests.
    #[arg(long, env = "INLET_KEEP_ALIVE_TIMEOUT_SECS", default_value_t = config::DEFAULT_KEEP_ALIVE_TIMEOUT.as_secs())]
    keep_alive_timeout_secs: u64,
    /// Connections open at once; further connections wait in the listen backlog until one closes.
    #[arg(long, env = "INLET_MAX_CONNECTIONS", default_value_t = config::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
    /// This replica's search index directory (default: `<db name>-index/` beside a SQLite file,
    /// `inlet-index/` in the working directory for PostgreSQL, memory for `memory:`). Rebuilt
    /// from the database when missing, corrupt or of an older format.
    #[arg(long, env = "INLET_INDEX_DIR")]
    index_dir: Option<std::path::PathBuf>,
    /// Answer `/readyz` with 200 while the search index is still being built (search then
    /// returns what has been indexed so far).
    #[arg(long, env = "INLET_SERVE_WHILE_INDEXING")]
    serve_while_indexing: bool,
    /// Typo tolerance of searches that do not say (`typos=`): a word that looks misspelt also
    /// matches the indexed words within an edit or two of it, ranked below it.
    #[arg(long, env = "INLET_TYPO_TOLERANCE", default_value = "on", value_parser = config::parse_switch)]
    typo_tolerance: bool,
    /// A reverse proxy (address or CIDR block; repeatable, or comma-separated in the
    /// environment) whose `X-Forwarded-For` header names the client for the per-address
    /// limits. From any other peer the header is ignored.
    #[arg(
        long = "trusted-proxy",
        env = "INLET_TRUSTED_PROXIES",
        value_name = "CIDR",
        value_delimiter = ',',
        value_parser = config::parse_proxy
    )]
    trusted_proxy: Vec<ipnet::IpNet>,
    /// The mass-removal guard: a COMPLETE close that would remove more than this share (in
    /// percent) of an object type's live records answers 409 and leaves the sync open, unless
    /// its body says `"allowMassRemoval": true`. Off when absent (the spec's behaviour).
    #[arg(long, env = "INLET_COMPLETE_MAX_REMOVAL", value_name = "PERCENT", value_parser = config::parse_percent)]
    complete_max_removal: Option<f64>,
    /// How long the change feed (`GET /api/v1/changes`) keeps COMPLETE closes and source
    /// deletions: `7d`, `36h`, `90m`, `30s`. A consumer whose cursor is older than a purged
    /// entry gets 410 and starts again with a snapshot.
    #[arg(long, env = "INLET_CHANGE_RETENTION", value_name = "DURATION", default_value = "7d", value_parser = config::parse_retention)]
    change_retention: std::time::Duration,
    /// Where uploaded files' originals are kept: `file://DIR`, `memory:` or `s3://BUCKET/PREFIX`
    /// (S3-compatible storage, configured by the `AWS_*` variables). Default: a folder beside
    /// the SQLite file (`inlet-blobs` for `inlet.db`), `memory:` with the memory store,
    /// `inlet-blobs` in the working folder with PostgreSQL (replicas share an `s3://` store).
    #[arg(long, env = "INLET_BLOB_STORE", value_name = "URL")]
    blob_store: Option<String>,
    /// Keep every uploaded file's original (for downloads and re-extraction); `false` keeps
    /// none, and downloads and re-extraction answer that originals are not kept.
    #[arg(long, env = "INLET_KEEP_ORIGINALS", value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    keep_originals: bool,
    /// How long an original no record names is kept before the sweep removes it: `1h`, `30m`.
    #[arg(long, env = "INLET_ORIGINALS_GRACE", value_name = "DURATION", default_value = "1h", value_parser = config::parse_retention)]
    originals_grace: std::time::Duration,
    /// How often the blob store is swept for originals no record names.
    #[arg(long, env = "INLET_BLOB_SWEEP_INTERVAL", value_name = "DURATION", default_value = "10m", value_parser = config::parse_retention)]
    blob_sweep_interval: std::time::Duration,
    /// At start, queue a re-extraction of every workspace's records when this binary's
    /// extractors are newer than those the last such run read with (off: re-extraction is
    /// asked for through the API or `inlet admin reextract`).
    #[arg(long, env = "INLET_REEXTRACT_AFTER_UPGRADE")]
    reextract_after_upgrade: bool,
    /// Let webhook deliveries go to loopback and private-range addresses (refused otherwise,
    /// checked on the resolved address at each delivery).
    #[arg(long, env = "INLET_WEBHOOK_ALLOW_PRIVATE")]
    webhook_allow_private: bool,
    /// The wait before a failed webhook delivery's second attempt (`30s`, `2m`); it doubles
    /// per attempt, at most an hour apart, for 24 hours after the event.
    #[arg(long, env = "INLET_WEBHOOK_RETRY_BASE", value_name = "DURATION", default_value = "30s", value_parser = config::parse_retention)]
    webhook_retry_base: std::time::Duration,
    /// How long delivered and given-up webhook deliveries are kept (`7d`, `36h`); pending
    /// ones are never purged.
    #[arg(long, env = "INLET_WEBHOOK_RETENTION", value_name = "DURATION", default_value = "7d", value_parser = config::parse_retention)]
    webhook_retention: std::time::Duration,
}

/// How `inlet serve` writes its log.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// Human-readable lines.
    Plain,
    /// One JSON object per line.
    Json,
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
    /// Set a user's browser-login password (a lost administrator password) and print
    /// `{"email","password"}`; API tokens are kept.
    ResetPassword {
        /// The user's e-mail address.
        #[arg(long)]
        email: String,
        /// The new password (generated when absent).
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
    /// Read records again from their originals: those an older version of their format's
    /// extractor read (or, with --failed-only, those whose extraction failed). A record keeps
    /// its version, checksum, title, tags and sync membership; a newer upload meanwhile wins.
    /// A stopped run is resumed by running it again. Prints the counts as JSON.
    Reextract {
        /// Only records of this format (`pdf`, `docx`, …).
        #[arg(long)]
        format: Option<String>,
        /// Only records of this source (its id).
        #[arg(long)]
        source: Option<uuid::Uuid>,
        /// Only records whose extraction failed, whatever version read them.
        #[arg(long)]
        failed_only: bool,
        /// Every selected record, whatever version read it.
        #[arg(long)]
        all: bool,
        /// Count what would be read again, reading nothing.
        #[arg(long)]
        dry_run: bool,
        /// Database URL.
        #[arg(long, env = "INLET_DATABASE_URL", default_value = config::DEFAULT_DATABASE)]
        database: String,
        /// The blob store of originals (default: the database's, as `serve` picks it).
        #[arg(long, env = "INLET_BLOB_STORE", value_name = "URL")]
        blob_store: Option<String>,
    },
    /// Copy a whole deployment (every workspace, user, token, client, grant, source, record,
    /// sync, webhook and job, and the originals) into an empty SQLite or PostgreSQL database,
    /// then compare every table. Until it succeeds the target is marked unfinished and
    /// `serve` refuses it; run the same command again to start it over. Prints a JSON summary.
    Copy {
        /// The database copied from (it may serve meanwhile: one consistent snapshot is read).
        #[arg(long, value_name = "URL")]
        from: String,
        /// The database copied into: new, empty, or left by an interrupted copy.
        #[arg(long, value_name = "URL")]
        to: String,
        /// The source's blob store (default: the one `serve` picks for --from).
        #[arg(long, value_name = "URL")]
        from_blobs: Option<String>,
        /// The target's blob store (default: the one `serve` picks for --to).
        #[arg(long, value_name = "URL")]
        to_blobs: Option<String>,
    },
    /// Compare two databases table by table (row counts and digests); prints every table that
    /// differs and fails if any does.
    Verify {
        /// One database.
        #[arg(long, env = "INLET_DATABASE_URL", default_value = config::DEFAULT_DATABASE)]
        database: String,
        /// The other.
        #[arg(long, value_name = "URL")]
        against: String,
    },
    /// Write a consistent snapshot of a SQLite deployment to a new file while it serves, with
    /// its originals in a folder beside it (`<stem>-blobs`).
    Backup {
        /// The SQLite database.
        #[arg(long, env = "INLET_DATABASE_URL", default_value = config::DEFAULT_DATABASE)]
        database: String,
        /// Its blob store (default: the one `serve` picks).
        #[arg(long, env = "INLET_BLOB_STORE", value_name = "URL")]
        blob_store: Option<String>,
        /// The new backup file.
        #[arg(long, value_name = "FILE")]
        to: std::path::PathBuf,
    },
    /// Restore a backup (and the originals beside it) into an empty database: a copy.
    Restore {
        /// The backup file.
        #[arg(long, value_name = "FILE")]
        from: std::path::PathBuf,
        /// The database restored into.
        #[arg(long, value_name = "URL")]
        to: String,
        /// Its blob store (default: the one `serve` picks for --to).
        #[arg(long, value_name = "URL")]
        to_blobs: Option<String>,
    },
}

/// Log filter when `RUST_LOG` is unset: `info`, without sea-orm-migration's line per migration
/// (start-up logs one summary line instead).
const DEFAULT_LOG_FILTER: &str = "info,sea_orm_migration=warn";

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init(),
        LogFormat::Plain => {
            let colours = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            builder.with_ansi(colours).init();
        }
    }
}

/// `url` with its password replaced, for messages: database URLs may carry credentials.
fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Serve(args) => serve(*args).await,
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
                AdminCommand::ResetPassword {
                    email,
                    password,
                    database,
                },
        } => {
            let stores = open_stores(&database).await?;
            let password = auth::reset_password(stores.tokens.as_ref(), &email, password).await?;
            println!(
                "{}",
                serde_json::json!({"email": email, "password": password})
            );
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
        Command::Admin {
            command:
                AdminCommand::Copy {
                    from,
                    to,
                    from_blobs,
                    to_blobs,
                },
        } => {
            inlet_server::moving::copy(
                End {
                    database: from,
                    blobs: from_blobs,
                },
                End {
                    database: to,
                    blobs: to_blobs,
                },
            )
            .await
        }
        Command::Admin {
            command: AdminCommand::Verify { database, against },
        } => inlet_server::moving::verify(&database, &against).await,
        Command::Admin {
            command:
                AdminCommand::Backup {
                    database,
                    blob_store,
                    to,
                },
        } => {
            inlet_server::moving::backup(
                End {
                    database,
                    blobs: blob_store,
                },
                &to,
            )
            .await
        }
        Command::Admin {
            command: AdminCommand::Restore { from, to, to_blobs },
        } => {
            inlet_server::moving::restore(
                &from,
                End {
                    database: to,
                    blobs: to_blobs,
                },
            )
            .await
        }
        Command::Admin {
            command:
                AdminCommand::Reextract {
                    format,
                    source,
                    failed_only,
                    all,
                    dry_run,
                    database,
                    blob_store,
                },
        } => {
            let opened = inlet_server::open_database(&database)
                .await
                .with_context(|| format!("opening database {}", redacted(&database)))?;
            let url = blob_store.unwrap_or(opened.default_blobs);
            let blobs = inlet_core::blob::open(&url)
                .await
                .with_context(|| format!("opening the blob store {url}"))?;
            let plan = inlet_core::ingest::reextract::Plan {
                selection: inlet_core::ingest::reextract::Selection {
                    workspace_id: None,
                    format,
                    source_id: source,
                    failed_only,
                    all,
                },
                dry_run,
                after: None,
            };
            let done =
                inlet_server::reextract::run(opened.stores.records.as_ref(), blobs.as_ref(), &plan)
                    .await?;
            println!(
                "{}",
                serde_json::json!({
                    "seen": done.seen,
                    "due": done.due,
                    "reread": done.reread,
                    "noOriginal": done.no_original,
                    "changedMeanwhile": done.changed_meanwhile,
                    "missing": done.missing,
                    "dryRun": dry_run,
                })
            );
            Ok(())
        }
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    init_logging(if args.log_json {
        LogFormat::Json
    } else {
        args.log_format
    });
    check_extractors()?;
    let opened = inlet_server::open_database(&args.database)
        .await
        .with_context(|| format!("opening database {}", redacted(&args.database)))?;
    let stores = opened.stores;
    let env = AdminEnv {
        email: std::env::var("INLET_ADMIN_EMAIL").ok(),
        password: std::env::var("INLET_ADMIN_PASSWORD").ok(),
        api_token: std::env::var("INLET_ADMIN_API_TOKEN").ok(),
    };
    // Secrets given in the environment are never printed or logged; generated ones are printed
    // once on standard output (not the log).
    let (password_given, token_given) = (env.password.is_some(), env.api_token.is_some());
    let named_admin = env.email.is_some();
    match auth::bootstrap(&stores.tokens, env).await? {
        Some(creds) => {
            tracing::info!(email = %creds.email, workspace = %creds.workspace, "admin user created");
            let password = if password_given {
                "(from INLET_ADMIN_PASSWORD)"
            } else {
                creds.password.as_str()
            };
            let token = if token_given {
                "(from INLET_ADMIN_API_TOKEN)"
            } else {
                creds.api_token.as_str()
            };
            println!(
                "First start: created workspace '{}' with administrator\n  e-mail:    {}\n  password:  {password}\n  API token: {token}\n(shown once; keep them)",
                creds.workspace, creds.email
            );
        }
        None if named_admin => tracing::info!("admin user present"),
        None => {}
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
        header_timeout: Duration::from_secs(args.header_timeout_secs.max(1)),
        body_idle_timeout: Duration::from_secs(args.body_idle_timeout_secs.max(1)),
        keep_alive_timeout: Duration::from_secs(args.keep_alive_timeout_secs.max(1)),
        max_connections: args.max_connections.max(1),
        serve_while_indexing: args.serve_while_indexing,
        typo_tolerance: args.typo_tolerance,
        trusted_proxies: args.trusted_proxy.clone(),
        complete_max_removal: args.complete_max_removal,
        change_retention: args.change_retention,
        originals_grace: args.originals_grace,
        blob_sweep_interval: args.blob_sweep_interval,
        reextract_after_upgrade: args.reextract_after_upgrade,
        webhook_allow_private: args.webhook_allow_private,
        webhook_retry_base: args.webhook_retry_base,
        webhook_retention: args.webhook_retention,
        ocr: inlet_extractors::ocr::Settings {
            command: args.ocr_command.clone(),
            languages: args
                .ocr_languages
                .split(['+', ','])
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect(),
            concurrency: args.ocr_concurrency.max(1),
            time_budget: Duration::from_secs(args.ocr_timeout_secs.max(1)),
            max_pages: args.ocr_max_pages.max(1),
            document_pictures: args.ocr_document_pictures,
            max_pixels: args.ocr_max_pixels.max(1),
            memory_limit_bytes: args.ocr_memory_limit_mb << 20,
        },
        ..defaults
    };
    inlet_extractors::ocr::configure(settings.ocr.clone());
    let ocr = inlet_extractors::ocr::status();
    match (&ocr.version, &ocr.reason) {
        (Some(version), _) => tracing::info!(
            version = %version,
            languages = %ocr.languages.join("+"),
            "OCR on: images and scanned pages are read with Tesseract"
        ),
        (None, reason) => tracing::warn!(
            reason = reason.as_deref().unwrap_or("unknown"),
            "OCR is off: images and scanned pages are stored without text (install Debian's \
             tesseract-ocr to turn it on)"
        ),
    }
    let default_blobs = opened.default_blobs;
    let index_dir = args.index_dir.clone().or(opened.default_index_dir);
    let opened =
        inlet_server::indexer::open_index(index_dir.as_deref()).with_context(
            || match &index_dir {
                Some(d) => format!("opening the search index in {}", d.display()),
                None => "creating the search index in memory".to_string(),
            },
        )?;
    match (&opened.dir, &opened.discarded) {
        (Some(dir), Some(why)) => {
            tracing::warn!(dir = %dir.display(), reason = %why, "search index discarded; rebuilding")
        }
        (Some(dir), None) => tracing::info!(dir = %dir.display(), "search index opened"),
        (None, _) => tracing::info!("search index in memory (built from the store at start)"),
    }
    let blobs = if args.keep_originals {
        let url = args.blob_store.clone().unwrap_or(default_blobs);
        let blobs = inlet_core::blob::open(&url)
            .await
            .with_context(|| format!("opening the blob store {url}"))?;
        tracing::info!(store = %url, "originals are kept");
        Some(blobs)
    } else {
        tracing::info!("originals are not kept (--keep-originals=false)");
        None
    };
    let state = AppState::new(stores, settings)
        .with_index(opened.index)
        .with_blobs(blobs);
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

/// Refuses to start when two linked extractors register one format id.
fn check_extractors() -> anyhow::Result<()> {
    inlet_extractors::try_registry()
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("extractor registry: {e}"))
}

fn extract(files: Vec<PathBuf>) -> anyhow::Result<()> {
    check_extractors()?;
    let mut out = std::io::stdout().lock();
    for path in files {
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let outcome = inlet_extractors::extract(&bytes, &Limits::default());
        match write_outcome(&mut out, &path, &outcome) {
            // A reader that stopped early (`inlet extract f | head`) is not an error.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            other => other?,
        }
    }
    Ok(())
}

/// Writes one file's extraction as `inlet extract` prints it.
fn write_outcome(
    out: &mut impl std::io::Write,
    path: &std::path::Path,
    outcome: &inlet_extractors::Outcome,
) -> std::io::Result<()> {
    writeln!(out, "== {}", path.display())?;
    writeln!(out, "format: {}", outcome.format.unwrap_or("unrecognized"))?;
    writeln!(out, "characters: {}", outcome.text.chars().count())?;
    if outcome.truncated {
        writeln!(out, "truncated: yes")?;
    }
    if let Some(reason) = &outcome.failure {
        writeln!(out, "failure: {reason}")?;
    }
    if !outcome.metadata.is_empty() {
        writeln!(
            out,
            "metadata: {}",
            serde_json::to_string(&outcome.metadata)?
        )?;
    }
    writeln!(out)?;
    writeln!(out, "{}", outcome.text)?;
    out.flush()
}
