//! `sync-folder`: mirrors a local folder into an Inlet custom source (see the crate README).

use std::process::ExitCode;

use clap::Parser;
use inlet_example_sync_folder::{cli::Args, run};

/// Exit status after Ctrl-C, as shells report a SIGINT.
const INTERRUPTED: u8 = 130;

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run::run(&args).await {
        Ok(summary) => {
            println!("{summary}");
            if summary.succeeded() {
                ExitCode::SUCCESS
            } else if summary.interrupted {
                ExitCode::from(INTERRUPTED)
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
