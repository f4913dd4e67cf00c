//! One run: resolve the source, walk the folder, then either mirror it inside a sync or, with
//! `--dry-run`, only say what mirroring would do.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, anyhow, bail};
use futures_util::{StreamExt, stream};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use reqwest::StatusCode;

pub use crate::summary::{Closed, Summary};
use crate::{
    api::{ApiError, BATCH, Credentials, FolderDeleted, Inlet, Touched, Upload, tag_header_value},
    cli::Args,
    local::{self, LocalFile, LocalTree},
    plan::{self, Action, FolderPlan, Layout},
};

/// Terminal output: lines go around the progress bar, nothing but errors and the summary with
/// `--quiet`.
struct Out {
    bar: ProgressBar,
    quiet: bool,
    verbose: bool,
}

impl Out {
    fn new(args: &Args) -> Self {
        let bar = ProgressBar::hidden();
        if !args.quiet {
            // Drawn on stderr, and only when it is a terminal.
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        Self {
            bar,
            quiet: args.quiet,
            verbose: args.verbose,
        }
    }

    fn info(&self, line: impl AsRef<str>) {
        if !self.quiet {
            self.bar.suspend(|| println!("{}", line.as_ref()));
        }
    }

    fn detail(&self, line: impl AsRef<str>) {
        if self.verbose {
            self.info(line);
        }
    }

    fn error(&self, line: impl AsRef<str>) {
        self.bar.suspend(|| eprintln!("error: {}", line.as_ref()));
    }

    fn warn(&self, line: impl AsRef<str>) {
        self.bar.suspend(|| eprintln!("warning: {}", line.as_ref()));
    }

    fn start(&self, files: usize) {
        self.bar.set_length(files as u64);
        self.bar.set_position(0);
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] [{bar:30}] {pos}/{len} files {msg}",
        ) {
            self.bar.set_style(style.progress_chars("=> "));
        }
        self.bar.enable_steady_tick(Duration::from_millis(120));
    }
}

/// Runs the tool. An `Err` means nothing was mirrored (bad arguments, an unusable source, a sync
/// that could not be opened); every failure after the sync opened is in the [`Summary`].
pub async fn run(args: &Args) -> anyhow::Result<Summary> {
    let started = Instant::now();
    let out = Out::new(args);
    let credentials = match &args.user {
        Some(user) => Credentials::Basic {
            user: user.clone(),
            token: args.token.clone(),
        },
        None => Credentials::Bearer(args.token.clone()),
    };
    let inlet = Inlet::new(&args.url, credentials)?;
    let root = args
        .folder
        .canonicalize()
        .with_context(|| format!("cannot read folder {}", args.folder.display()))?;
    let tree = local::walk(&root)?;
    for skipped in &tree.skipped {
        out.detail(format!(
            "skipped {} (not a regular file or folder)",
            skipped.display()
        ));
    }
    if !tree.errors.is_empty() && !args.dry_run {
        bail!(
            "{} entr{} cannot be mirrored, nothing was changed:\n  {}",
            tree.errors.len(),
            if tree.errors.len() == 1 { "y" } else { "ies" },
            tree.errors.join("\n  ")
        );
    }
    let layout = resolve(&inlet, args, &root, &out)
        .await
        .map_err(|e| hint(&inlet, e))?;
    let mut summary = if args.dry_run {
        dry_run(&inlet, args, &tree, layout.as_ref(), &out).await
    } else {
        let layout = layout.ok_or_else(|| anyhow!("no source to mirror into"))?;
        mirror(&inlet, args, &root, &tree, &layout, &out)
            .await
            .map_err(|e| hint(&inlet, e))?
    };
    out.bar.finish_and_clear();
    summary.elapsed = started.elapsed();
    Ok(summary)
}

/// Adds what to do about a refused credential.
fn hint(inlet: &Inlet, e: anyhow::Error) -> anyhow::Error {
    let status = e.downcast_ref::<ApiError>().and_then(ApiError::status);
    match (status, inlet.credentials()) {
        (Some(StatusCode::UNAUTHORIZED), Credentials::Bearer(_)) => e.context(
            "the token was refused as an OAuth2 access token (Authorization: Bearer); for an \
             API token also pass --user EMAIL (HTTP Basic)",
        ),
        (Some(StatusCode::UNAUTHORIZED), Credentials::Basic { .. }) => {
            e.context("the e-mail and API token were refused")
        }
        (Some(StatusCode::FORBIDDEN), _) => {
            e.context("these credentials may not write (a read-only token?)")
        }
        _ => e,
    }
}

/// The source, object type and folder tag to use; `None` only in a dry run whose source would
/// be created.
async fn resolve(
    inlet: &Inlet,
    args: &Args,
    root: &Path,
    out: &Out,
) -> anyhow::Result<Option<Layout>> {
    let pick = |source: &crate::api::Source| {
        plan::layout(
            source,
            args.object_type.as_deref(),
            args.folder_tag.as_deref(),
        )
        .map_err(|m| anyhow!(m))
    };
    if let Some(id) = &args.source {
        let source = inlet.source(id).await.map_err(|e| match e.status() {
            Some(StatusCode::NOT_FOUND | StatusCode::BAD_REQUEST) => {
                anyhow!(e).context(format!("source '{id}' does not exist"))
            }
            _ => anyhow!(e),
        })?;
        return pick(&source).map(Some);
    }
    let Some(external_id) = &args.create_source else {
        bail!("pass --source SOURCE_ID or --create-source EXTERNAL_ID");
    };
    let existing = inlet
        .sources()
        .await?
        .into_iter()
        .find(|s| &s.external_id == external_id);
    if let Some(source) = existing {
        out.info(format!(
            "source '{}' already exists (id {}, {}): mirroring into it; to start over instead, \
             delete it (DELETE /api/v1/sources/{}) or pass another --create-source id",
            source.external_id, source.id, source.config.name, source.id
        ));
        return pick(&source).map(Some);
    }
    let name = args.source_name.clone().unwrap_or_else(|| {
        root.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| external_id.clone())
    });
    if args.dry_run {
        out.info(format!(
            "would create source '{external_id}' ({name}) with a RECORD object type '{}' and a \
             HIERARCHICAL tag '{}'",
            plan::OBJECT_TYPE_ID,
            plan::FOLDER_TAG_ID
        ));
        return Ok(None);
    }
    let source = inlet
        .create_source(&plan::source_body(external_id, &name))
        .await
        .map_err(|e| match e.status() {
            // Created by someone else since the listing: a second run finds it.
            Some(StatusCode::CONFLICT) => anyhow!(e).context(format!(
                "source '{external_id}' was created by another client meanwhile; run again to \
                 mirror into it, or pass another --create-source id"
            )),
            _ => anyhow!(e),
        })?;
    out.info(format!(
        "created source {} ('{external_id}', {name}); later runs find it by --create-source \
         {external_id} or --source {}",
        source.id, source.id
    ));
    pick(&source).map(Some)
}

/// Batches of files whose skip procedure runs at once.
const CHUNKS_AHEAD: usize = 4;

/// How many unreadable files the summary names.
const UNREADABLE_EXAMPLES: usize = 5;

/// What one file came to.
enum Done {
    /// `unreadable` carries the server's reason when it could not extract the file's text.
    Uploaded {
        how: &'static str,
        unreadable: Option<String>,
    },
    Touched,
    NotAttempted,
}

/// Everything a file task needs, shared by the tasks.
struct Job<'a> {
    inlet: &'a Inlet,
    layout: &'a Layout,
    sync_number: i64,
    link_prefix: Option<&'a str>,
    sent: Arc<AtomicU64>,
    stop: AtomicBool,
}

impl Job<'_> {
    /// The per-file skip procedure (`--per-file`): checksum, metadata, then touch or upload.
    async fn file(&self, file: &LocalFile) -> anyhow::Result<Done> {
        if self.stop.load(Ordering::Relaxed) {
            return Ok(Done::NotAttempted);
        }
        let (checksum, len) = checksum(&file.path).await?;
        let stored = self
            .inlet
            .metadata(&self.layout.target, &file.external_id)
            .await?;
        let action = plan::decide(stored.as_ref(), &checksum);
        if action == Action::Touch {
            let touched = self
                .inlet
                .touch(
                    &self.layout.target,
                    self.sync_number,
                    &file.external_id,
                    &checksum,
                )
                .await?;
            if touched == Touched::Yes {
                return Ok(Done::Touched);
            }
            // Changed or removed since the metadata was read: upload instead.
        }
        self.upload(file, &checksum, len, stored.as_ref()).await
    }

    /// The skip procedure for up to [`BATCH`] files: their checksums, one metadata request
    /// and one touch request for the unchanged ones. Returns what is settled (touched, or
    /// failed) and what is left to upload.
    async fn batch<'f>(&self, files: &[&'f LocalFile], jobs: usize) -> Batch<'f> {
        let mut settled = Vec::new();
        let mut sums = Vec::with_capacity(files.len());
        let mut computed = stream::iter(files)
            .map(|file| async move { (*file, checksum(&file.path).await) })
            .buffered(jobs);
        while let Some((file, sum)) = computed.next().await {
            match sum {
                Ok((checksum, len)) => sums.push((file, checksum, len)),
                Err(e) => settled.push((file, Err(e))),
            }
        }
        let ids: Vec<&str> = sums.iter().map(|(f, ..)| f.external_id.as_str()).collect();
        let mut stored = match self.inlet.metadata_batch(&self.layout.target, &ids).await {
            Ok(found) => found,
            Err(e) => {
                let e = anyhow!(e);
                settled.extend(sums.into_iter().map(|(f, ..)| (f, Err(anyhow!("{e:#}")))));
                return Batch {
                    settled,
                    uploads: Vec::new(),
                };
            }
        };
        let (unchanged, changed): (Vec<_>, Vec<_>) = sums.into_iter().partition(|(f, sum, _)| {
            plan::decide(stored.get(&f.external_id), sum) == Action::Touch
        });
        let mut uploads: Vec<Pending<'f>> = changed
            .into_iter()
            .map(|(file, checksum, len)| Pending {
                stored: stored.remove(&file.external_id),
                file,
                checksum,
                len,
            })
            .collect();
        if unchanged.is_empty() {
            return Batch { settled, uploads };
        }
        let items: Vec<(&str, &str)> = unchanged
            .iter()
            .map(|(f, sum, _)| (f.external_id.as_str(), sum.as_str()))
            .collect();
        match self
            .inlet
            .touch_batch(&self.layout.target, self.sync_number, &items)
            .await
        {
            Ok(touched) => {
                for ((file, checksum, len), t) in unchanged.into_iter().zip(touched) {
                    if t == Touched::Yes {
                        settled.push((file, Ok(Done::Touched)));
                    } else {
                        // Changed or removed since the metadata was read: upload instead.
                        uploads.push(Pending {
                            stored: stored.remove(&file.external_id),
                            file,
                            checksum,
                            len,
                        });
                    }
                }
            }
            Err(e) => {
                let e = anyhow!(e);
                settled.extend(
                    unchanged
                        .into_iter()
                        .map(|(f, ..)| (f, Err(anyhow!("{e:#}")))),
                );
            }
        }
        Batch { settled, uploads }
    }

    /// Uploads one file whose checksum is `checksum`.
    async fn upload(
        &self,
        file: &LocalFile,
        checksum: &str,
        len: u64,
        stored: Option<&crate::api::Metadata>,
    ) -> anyhow::Result<Done> {
        if self.stop.load(Ordering::Relaxed) {
            return Ok(Done::NotAttempted);
        }
        let tags: Vec<String> = file
            .folder
            .iter()
            .map(|f| tag_header_value(&self.layout.tag.external_id, f))
            .collect();
        let url = plan::external_url(self.link_prefix, &file.external_id);
        let stored_now = self
            .inlet
            .upload(
                &self.layout.target,
                self.sync_number,
                &Upload {
                    external_id: &file.external_id,
                    path: file.path.clone(),
                    file_name: &file.name,
                    len,
                    checksum,
                    external_url: url.as_deref(),
                    tags: &tags,
                },
                &self.sent,
            )
            .await?;
        Ok(Done::Uploaded {
            how: upload_reason(stored),
            unreadable: stored_now.extraction.and_then(|e| e.failure),
        })
    }
}

/// A file of a batch left to upload.
struct Pending<'f> {
    file: &'f LocalFile,
    checksum: String,
    len: u64,
    stored: Option<crate::api::Metadata>,
}

/// What [`Job::batch`] settled and what it left to upload.
struct Batch<'f> {
    settled: Vec<(&'f LocalFile, anyhow::Result<Done>)>,
    uploads: Vec<Pending<'f>>,
}

/// Why a file is uploaded, for `--verbose` and dry-run lines.
fn upload_reason(stored: Option<&crate::api::Metadata>) -> &'static str {
    match stored {
        None => "new",
        Some(m) if m.external_checksum.is_none() => "removed earlier",
        Some(_) => "changed",
    }
}

async fn checksum(path: &Path) -> anyhow::Result<(String, u64)> {
    let owned: PathBuf = path.to_path_buf();
    tokio::task::spawn_blocking(move || local::checksum(&owned))
        .await?
        .with_context(|| format!("cannot read {}", path.display()))
}

fn is_fatal(e: &anyhow::Error) -> bool {
    e.downcast_ref::<ApiError>().is_some_and(ApiError::is_fatal)
}

/// Opens a sync, puts the folders, runs the skip procedure over every file, closes the sync
/// (COMPLETE when everything worked, FAIL otherwise) and deletes folders whose directory is gone.
async fn mirror(
    inlet: &Inlet,
    args: &Args,
    root: &Path,
    tree: &LocalTree,
    layout: &Layout,
    out: &Out,
) -> anyhow::Result<Summary> {
    let target = &layout.target;
    let syncs = inlet.syncs(target).await?;
    if let Some(open) = syncs.first().filter(|s| s.state == "OPEN") {
        if !args.abandon_open_sync {
            bail!(
                "sync {} of object type '{}' is still open (an interrupted run, or another \
                 one running now); pass --abandon-open-sync to close it with FAIL and go on",
                open.sync_number,
                layout.object_type_name
            );
        }
        inlet.close_sync(target, open.sync_number, false).await?;
        out.info(format!(
            "closed the abandoned sync {} with FAIL",
            open.sync_number
        ));
    }
    let sync = inlet.open_sync(target, syncs.is_empty()).await?;
    let n = sync.sync_number;
    out.info(format!(
        "mirroring {} into source {}, object type '{}', folder tag '{}': sync {n}, files: {}, \
         folders: {}",
        root.display(),
        target.source_id,
        layout.object_type_name,
        layout.tag.external_id,
        tree.files.len(),
        tree.folders.len()
    ));
    let mut summary = Summary::default();
    let work = mirror_in_sync(inlet, args, tree, layout, n, out, &mut summary);
    // Ctrl-C drops the work (in-flight requests are cancelled) and the sync is closed with FAIL.
    let stale = tokio::select! {
        stale = work => Some(stale),
        Ok(()) = tokio::signal::ctrl_c() => None,
    };
    let stale = stale.unwrap_or_else(|| {
        summary.interrupted = true;
        Vec::new()
    });
    let complete = summary.failed == 0 && !summary.interrupted;
    match inlet.close_sync(target, n, complete).await {
        Ok(closed) if complete => {
            summary.removed = Some(closed.removed);
            summary.sync = Some((n, Closed::Complete));
        }
        Ok(_) => summary.sync = Some((n, Closed::Fail)),
        Err(e) => {
            out.error(format!("{:#}", anyhow!(e)));
            summary.failed += 1;
            summary.sync = Some((n, Closed::NotClosed));
            return Ok(summary);
        }
    }
    if !complete {
        out.error(format!(
            "sync {n} closed with FAIL: nothing was removed; records uploaded in it stay"
        ));
        return Ok(summary);
    }
    // The COMPLETE close removed the records of gone directories, so their folders are empty.
    for id in stale {
        match inlet
            .delete_folder(&target.source_id, &layout.tag.id, &id)
            .await
        {
            Ok(FolderDeleted::Yes) => {
                summary.folders_removed += 1;
                out.detail(format!("removed folder {id}"));
            }
            Ok(FolderDeleted::InUse) => out.warn(format!(
                "folder {id} has no local directory but still holds records or folders of \
                 another object type; kept"
            )),
            Err(e) => {
                summary.failed += 1;
                out.error(format!("{:#}", anyhow!(e)));
            }
        }
    }
    Ok(summary)
}

/// The part of [`mirror`] inside the open sync; returns the stale folders to delete after a
/// COMPLETE close. Failures are counted in `summary`.
async fn mirror_in_sync(
    inlet: &Inlet,
    args: &Args,
    tree: &LocalTree,
    layout: &Layout,
    sync_number: i64,
    out: &Out,
    summary: &mut Summary,
) -> Vec<String> {
    let target = &layout.target;
    let remote = match &layout.facet_id {
        Some(facet) => match inlet.folders(&target.source_id, facet).await {
            Ok(f) => Some(f),
            Err(e) => {
                summary.failed += 1;
                out.error(format!("{:#}", anyhow!(e)));
                return Vec::new();
            }
        },
        None => {
            out.detail(format!(
                "no facet over tag '{}': folders are put without listing, and folders of gone \
                 directories are not deleted",
                layout.tag.external_id
            ));
            None
        }
    };
    let FolderPlan { put, stale } = plan::folders(&tree.folders, remote.as_deref());
    for folder in &put {
        if let Err(e) = inlet
            .put_folder(&target.source_id, &layout.tag.id, folder)
            .await
        {
            summary.failed += 1;
            out.error(format!("{:#}", anyhow!(e)));
            return Vec::new();
        }
        summary.folders_put += 1;
        out.detail(format!("put folder {}", folder.external_id));
    }

    let job = Job {
        inlet,
        layout,
        sync_number,
        link_prefix: args.link_prefix.as_deref(),
        sent: Arc::new(AtomicU64::new(0)),
        stop: AtomicBool::new(false),
    };
    out.start(tree.files.len());
    let job = &job;
    let jobs = usize::from(args.jobs);
    if args.per_file {
        let mut results = stream::iter(&tree.files)
            .map(|file| async move { (file, job.file(file).await) })
            .buffer_unordered(jobs);
        while let Some((file, result)) = results.next().await {
            tally(summary, out, job, file, result);
        }
        return stale;
    }
    // Up to CHUNKS_AHEAD chunks read their checksums, metadata and touches at once (a
    // second sync of unchanged files is nothing but that); uploads run chunk by chunk.
    let files: Vec<&LocalFile> = tree.files.iter().collect();
    let mut batches = stream::iter(files.chunks(BATCH))
        .map(|chunk| async move {
            if job.stop.load(Ordering::Relaxed) {
                let settled = chunk.iter().map(|f| (*f, Ok(Done::NotAttempted))).collect();
                return Batch {
                    settled,
                    uploads: Vec::new(),
                };
            }
            job.batch(chunk, jobs).await
        })
        .buffered(CHUNKS_AHEAD);
    while let Some(Batch { settled, uploads }) = batches.next().await {
        for (file, result) in settled {
            tally(summary, out, job, file, result);
        }
        let mut results = stream::iter(&uploads)
            .map(|p| async move {
                (
                    p.file,
                    job.upload(p.file, &p.checksum, p.len, p.stored.as_ref())
                        .await,
                )
            })
            .buffer_unordered(jobs);
        while let Some((file, result)) = results.next().await {
            tally(summary, out, job, file, result);
        }
    }
    stale
}

/// Counts what one file came to and says so.
fn tally(
    summary: &mut Summary,
    out: &Out,
    job: &Job<'_>,
    file: &LocalFile,
    result: anyhow::Result<Done>,
) {
    out.bar.inc(1);
    out.bar.set_message(file.external_id.clone());
    match result {
        Ok(Done::Uploaded { how, unreadable }) => {
            summary.uploaded += 1;
            out.detail(format!("uploaded {} ({how})", file.external_id));
            if let Some(why) = unreadable {
                out.detail(format!("  the server could not read its text: {why}"));
                summary.unreadable += 1;
                if summary.unreadable_examples.len() < UNREADABLE_EXAMPLES {
                    summary
                        .unreadable_examples
                        .push((file.external_id.clone(), why));
                }
            }
        }
        Ok(Done::Touched) => {
            summary.touched += 1;
            out.detail(format!("touched {}", file.external_id));
        }
        Ok(Done::NotAttempted) => summary.not_attempted += 1,
        Err(e) => {
            summary.failed += 1;
            if is_fatal(&e) && !job.stop.swap(true, Ordering::Relaxed) {
                out.error(format!("{e:#}; not starting further files"));
            } else {
                out.error(format!("{e:#}"));
            }
        }
    }
    summary.bytes = job.sent.load(Ordering::Relaxed);
}

/// Says what [`mirror`] would do, sending only reads (GET requests and metadata batches).
async fn dry_run(
    inlet: &Inlet,
    args: &Args,
    tree: &LocalTree,
    layout: Option<&Layout>,
    out: &Out,
) -> Summary {
    let mut summary = Summary {
        dry_run: true,
        ..Summary::default()
    };
    for e in &tree.errors {
        summary.failed += 1;
        out.error(format!("{e} (a real run would stop here)"));
    }
    let fail = |e: anyhow::Error| {
        out.error(format!("{e:#}"));
        1
    };
    let remote_folders = match layout {
        Some(Layout {
            target,
            facet_id: Some(facet),
            ..
        }) => match inlet.folders(&target.source_id, facet).await {
            Ok(f) => Some(f),
            Err(e) => {
                summary.failed += fail(anyhow!(e));
                None
            }
        },
        _ => None,
    };
    if let Some(layout) = layout {
        match inlet.syncs(&layout.target).await {
            Ok(syncs) => {
                if let Some(open) = syncs.first().filter(|s| s.state == "OPEN") {
                    out.warn(format!(
                        "sync {} is open; a real run would stop unless --abandon-open-sync",
                        open.sync_number
                    ));
                }
            }
            Err(e) => summary.failed += fail(anyhow!(e)),
        }
    }
    let FolderPlan { put, stale } = plan::folders(&tree.folders, remote_folders.as_deref());
    let listed = remote_folders.is_some();
    for folder in &put {
        let known = remote_folders
            .iter()
            .flatten()
            .any(|r| r.external_id == folder.external_id);
        let verb = match (listed, known) {
            (false, _) => "create or update",
            (true, true) => "update",
            (true, false) => "create",
        };
        out.info(format!("would {verb} folder {}", folder.external_id));
    }
    summary.folders_put = put.len() as u64;
    for id in &stale {
        out.info(format!("would remove folder {id}"));
    }
    summary.folders_removed = stale.len() as u64;

    out.start(tree.files.len());
    let jobs = usize::from(args.jobs);
    for chunk in tree.files.chunks(BATCH) {
        let sums: Vec<anyhow::Result<(String, u64)>> = stream::iter(chunk)
            .map(|file| checksum(&file.path))
            .buffered(jobs)
            .collect()
            .await;
        let ids: Vec<&str> = chunk
            .iter()
            .zip(&sums)
            .filter(|(_, sum)| sum.is_ok())
            .map(|(f, _)| f.external_id.as_str())
            .collect();
        let stored = match layout {
            Some(l) => inlet
                .metadata_batch(&l.target, &ids)
                .await
                .map_err(|e| format!("{:#}", anyhow!(e))),
            None => Ok(Default::default()),
        };
        for (file, sum) in chunk.iter().zip(sums) {
            out.bar.inc(1);
            let decided = sum
                .map_err(|e| format!("{e:#}"))
                .and_then(|(checksum, len)| {
                    let stored = stored
                        .as_ref()
                        .map_err(Clone::clone)?
                        .get(&file.external_id);
                    Ok((plan::decide(stored, &checksum), upload_reason(stored), len))
                });
            match decided {
                Ok((Action::Touch, ..)) => {
                    summary.touched += 1;
                    out.detail(format!("would touch {}", file.external_id));
                }
                Ok((Action::Upload { .. }, how, len)) => {
                    summary.uploaded += 1;
                    summary.bytes += len;
                    out.info(format!("would upload {} ({how})", file.external_id));
                }
                Err(e) => {
                    summary.failed += 1;
                    out.error(e);
                }
            }
        }
    }
    if let Some(layout) = layout {
        match inlet.live_external_ids(&layout.target).await {
            Ok(live) => {
                let local: BTreeSet<&str> =
                    tree.files.iter().map(|f| f.external_id.as_str()).collect();
                let mut gone: Vec<&String> = live
                    .iter()
                    .filter(|id| !local.contains(id.as_str()))
                    .collect();
                gone.sort();
                for id in &gone {
                    out.info(format!("would remove {id}"));
                }
                summary.removed = Some(gone.len() as u64);
            }
            Err(e) => summary.failed += fail(anyhow!(e)),
        }
    } else {
        summary.removed = Some(0);
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_line_and_success() {
        let mut s = Summary {
            uploaded: 2,
            touched: 3,
            removed: Some(1),
            bytes: 2048,
            folders_put: 1,
            sync: Some((4, Closed::Complete)),
            elapsed: Duration::from_millis(1500),
            ..Summary::default()
        };
        assert!(s.succeeded());
        assert_eq!(
            s.to_string(),
            "summary: uploaded 2, touched 3, removed 1, failed 0, bytes sent 2048 (2.00 KiB), \
             folders put 1, folders removed 0, elapsed 1.50s"
        );
        s.failed = 1;
        s.removed = None;
        s.sync = Some((4, Closed::Fail));
        assert!(!s.succeeded());
        assert!(
            s.to_string()
                .contains("removed none (sync 4 closed with FAIL), failed 1")
        );
        let dry = Summary {
            dry_run: true,
            uploaded: 1,
            removed: Some(2),
            ..Summary::default()
        };
        assert!(dry.succeeded());
        assert!(dry.to_string().starts_with(
            "summary (dry run, nothing changed): would upload 1, would touch 0, would remove 2,"
        ));
        let unreadable = Summary {
            uploaded: 7,
            unreadable: 7,
            unreadable_examples: (0..5)
                .map(|i| (format!("scan{i}.png"), "unrecognized format".to_string()))
                .collect(),
            sync: Some((5, Closed::Complete)),
            ..Summary::default()
        };
        assert!(
            unreadable.succeeded(),
            "unreadable files are stored, not failed"
        );
        let text = unreadable.to_string();
        assert!(
            text.contains("\nunreadable 7 (stored with empty content, not found by search):\n  scan0.png: unrecognized format\n"),
            "{text}"
        );
        assert!(
            text.ends_with("\n  and 2 more (--verbose lists every one)"),
            "{text}"
        );
        let no_sync = Summary::default();
        assert!(
            !no_sync.succeeded(),
            "a real run succeeds only with a COMPLETE close"
        );
    }
}
