//! `inlet admin copy`, `verify`, `backup` and `restore` (DESIGN 7c): the moves
//! `inlet_backends::moving` makes, with a progress bar per table on a terminal and a line per
//! table otherwise; each prints a JSON summary on standard output when it succeeds.

use std::{io::IsTerminal, path::Path, time::Instant};

use inlet_backends::moving::{self, Copied, End, Event, Step};

/// Shows a move's progress on standard error.
struct Progress {
    terminal: bool,
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
}

impl Progress {
    fn new() -> Self {
        Self {
            terminal: std::io::stderr().is_terminal(),
            bar: None,
            started: Instant::now(),
        }
    }

    fn bar(&mut self, label: String, done: u64, total: u64) {
        if !self.terminal {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let bar = indicatif::ProgressBar::new(total);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{msg:>24} {wide_bar} {pos}/{len}")
            {
                bar.set_style(style);
            }
            bar
        });
        bar.set_length(total);
        bar.set_message(label);
        bar.set_position(done);
    }

    fn line(&mut self, text: String) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        eprintln!("{text} ({:.1} s)", self.started.elapsed().as_secs_f64());
    }

    fn event(&mut self, e: Event) {
        match e {
            Event::Table(Step::StartingOver) => {
                self.line("the target holds an interrupted copy: starting over".into());
            }
            Event::Table(Step::Copying { table, done, total }) => {
                self.bar(table.to_string(), done, total);
            }
            Event::Table(Step::Copied { table, rows }) => {
                self.line(format!("{table}: {rows} rows copied"))
            }
            Event::Table(Step::Verified { table, rows }) => {
                self.line(format!("{table}: {rows} rows compared"));
            }
            Event::Originals { done, total } => {
                self.bar("originals".into(), done, total);
                if done == total {
                    self.line(format!("originals: {total} checked"));
                }
            }
        }
    }
}

fn summary(copied: Copied, started: Instant) {
    println!(
        "{}",
        serde_json::json!({
            "originalsCopied": copied.blobs,
            "originalBytesCopied": copied.bytes,
            "seconds": (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        })
    );
}

/// `inlet admin copy`.
pub async fn copy(from: End, to: End) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut p = Progress::new();
    let copied = moving::copy(&from, &to, &mut |e| p.event(e)).await?;
    summary(copied, started);
    Ok(())
}

/// `inlet admin verify`: exits with an error naming every table that differs.
pub async fn verify(a: &str, b: &str) -> anyhow::Result<()> {
    let mut p = Progress::new();
    let differences = moving::verify(a, b, &mut |e| p.event(e)).await?;
    if differences.is_empty() {
        println!("{}", serde_json::json!({"differences": []}));
        return Ok(());
    }
    for d in &differences {
        eprintln!("differs: {d}");
    }
    anyhow::bail!("{} tables differ", differences.len())
}

/// `inlet admin backup`.
pub async fn backup(from: End, file: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut p = Progress::new();
    let copied = moving::backup(&from, file, &mut |e| p.event(e)).await?;
    summary(copied, started);
    Ok(())
}

/// `inlet admin restore`.
pub async fn restore(file: &Path, to: End) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut p = Progress::new();
    let copied = moving::restore(file, &to, &mut |e| p.event(e)).await?;
    summary(copied, started);
    Ok(())
}
