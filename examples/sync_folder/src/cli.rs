//! Command-line arguments.

use std::path::PathBuf;

use clap::{ArgGroup, Parser};

/// Parallel uploads when `--jobs` is not given.
pub const DEFAULT_JOBS: u16 = 4;
/// Most parallel uploads `--jobs` accepts.
pub const MAX_JOBS: u16 = 64;

/// Mirrors a local folder into an Inlet custom source: one record per file (externalId = the
/// file's path relative to FOLDER), one HIERARCHICAL folder per sub-folder, and files that are
/// gone locally are removed by the sync's COMPLETE close.
#[derive(Debug, Clone, Parser)]
#[command(name = "sync-folder", version)]
#[command(group(ArgGroup::new("target").required(true).args(["source", "create_source"])))]
pub struct Args {
    /// The local folder to mirror.
    pub folder: PathBuf,

    /// Inlet's address, e.g. `http://127.0.0.1:8080` (a trailing `/api/v1` is accepted).
    #[arg(long, env = "INLET_URL")]
    pub url: String,

    /// The credential: an OAuth2 access token (sent as `Authorization: Bearer`), or with
    /// `--user` an API token (sent as HTTP Basic).
    #[arg(long, env = "INLET_TOKEN", hide_env_values = true)]
    pub token: String,

    /// E-mail of the user whose API token `--token` is; switches to HTTP Basic authentication.
    #[arg(long, env = "INLET_USER", value_name = "EMAIL")]
    pub user: Option<String>,

    /// Id of an existing source to mirror into. It needs a RECORD object type with a
    /// HIERARCHICAL tag config.
    #[arg(long, value_name = "SOURCE_ID")]
    pub source: Option<String>,

    /// Mirror into the workspace's source with this externalId, creating it (with a RECORD
    /// object type `files` and a HIERARCHICAL tag `folder`) when there is none yet.
    #[arg(long, value_name = "EXTERNAL_ID")]
    pub create_source: Option<String>,

    /// Display name of a source made by `--create-source` (default: the folder's name).
    #[arg(long, value_name = "NAME", requires = "create_source")]
    pub source_name: Option<String>,

    /// The object type to fill (id or externalId), when the source has several that fit.
    #[arg(long, value_name = "ID_OR_EXTERNAL_ID")]
    pub object_type: Option<String>,

    /// The HIERARCHICAL tag config holding the folders (id or externalId), when the object type
    /// has several.
    #[arg(long, value_name = "ID_OR_EXTERNAL_ID")]
    pub folder_tag: Option<String>,

    /// Each record's url is this prefix (an http:// or https:// URL) followed by the file's
    /// percent-encoded relative path (default: no url).
    #[arg(long, value_name = "URL")]
    pub link_prefix: Option<String>,

    /// Files processed at once.
    #[arg(long, short = 'j', default_value_t = DEFAULT_JOBS, value_parser = clap::value_parser!(u16).range(1..=MAX_JOBS as i64))]
    pub jobs: u16,

    /// Print what would be done and change nothing: no source, sync, folder or record is
    /// created, touched or removed (only reads are sent: GET requests and metadata batches).
    #[arg(long)]
    pub dry_run: bool,

    /// If a sync of the object type is still open (an interrupted run), close it with FAIL
    /// and go on instead of stopping.
    #[arg(long)]
    pub abandon_open_sync: bool,

    /// Run the skip procedure one file at a time (a metadata read and a touch per unchanged
    /// file), as spec 4.4 describes it, instead of in batches of 1,000; for servers without
    /// the batch endpoints.
    #[arg(long)]
    pub per_file: bool,

    /// No progress bar and no per-file lines; errors and the summary line are still printed.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// One line per uploaded or touched file and per folder put or removed.
    #[arg(long, short = 'v', conflicts_with = "quiet")]
    pub verbose: bool,
}
