#![doc = include_str!("../README.md")]

use std::{
    io::{Read, Write},
    process::{Child, Command, Stdio},
    sync::{Condvar, Mutex, OnceLock, RwLock, mpsc},
    time::{Duration, Instant},
};

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};

#[cfg(test)]
mod tests;

/// Tesseract processes running at once when nothing else is configured.
pub const DEFAULT_CONCURRENCY: usize = 1;
/// Time one document may take.
pub const DEFAULT_TIME_BUDGET: Duration = Duration::from_secs(120);
/// Pages of a multi-page image read at most.
pub const DEFAULT_MAX_PAGES: usize = 50;
/// Largest image read by OCR, in pixels (width × height): 50 megapixels, more than an A4 page
/// scanned at 600 dpi (35 MP). Tesseract's memory grows with the pixels (a 900-megapixel PNG
/// of under 1 MB took 3.3 GB).
pub const DEFAULT_MAX_PIXELS: u64 = 50_000_000;
/// Address space one Tesseract process may take (its `ulimit -v`): 2 GiB.
pub const DEFAULT_MEMORY_LIMIT_BYTES: u64 = 2 << 30;
/// The failure reason when the `tesseract` command cannot be run.
pub const UNAVAILABLE: &str = "OCR is not available";
/// The format ids this crate registers (each image format, read by OCR).
pub const FORMATS: &[&str] = &["png", "jpeg", "tiff", "webp", "gif", "bmp", "pnm", "jp2"];
/// Tesseract's page separator on standard output.
const PAGE_BREAK: char = '\u{c}';

/// How OCR runs; set once at start-up with [`configure`].
#[derive(Debug, Clone)]
pub struct Settings {
    /// The command (default `tesseract`, found on `PATH`).
    pub command: String,
    /// Languages to recognise (`eng`, `deu`, …); empty: every installed language but `osd`.
    pub languages: Vec<String>,
    /// Tesseract processes at once.
    pub concurrency: usize,
    /// Time one document may take.
    pub time_budget: Duration,
    /// Pages of a multi-page image read at most.
    pub max_pages: usize,
    /// Whether pictures in documents (a slide's screenshot, a logo in a memo) are read too, and
    /// not only images and scans uploaded as files: they cost a document OCR time.
    pub document_pictures: bool,
    /// Largest image read, in pixels; larger ones are refused before Tesseract runs.
    pub max_pixels: u64,
    /// Address space one Tesseract process may take, in bytes (0: no limit).
    pub memory_limit_bytes: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            command: "tesseract".into(),
            languages: Vec::new(),
            concurrency: DEFAULT_CONCURRENCY,
            time_budget: DEFAULT_TIME_BUDGET,
            max_pages: DEFAULT_MAX_PAGES,
            document_pictures: true,
            max_pixels: DEFAULT_MAX_PIXELS,
            memory_limit_bytes: DEFAULT_MEMORY_LIMIT_BYTES,
        }
    }
}

/// Whether OCR can run, and with what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The command ran.
    pub available: bool,
    /// Its version line (`tesseract 5.3.0`).
    pub version: Option<String>,
    /// The languages used (`-l`).
    pub languages: Vec<String>,
    /// Why OCR is off, when it is.
    pub reason: Option<String>,
}

static SETTINGS: RwLock<Option<Settings>> = RwLock::new(None);
static STATUS: OnceLock<Status> = OnceLock::new();

/// Sets how OCR runs (before the first document; later calls change the pool size and budgets
/// but not the languages already checked).
pub fn configure(settings: Settings) {
    POOL.resize(settings.concurrency.max(1));
    if let Ok(mut s) = SETTINGS.write() {
        *s = Some(settings);
    }
}

fn settings() -> Settings {
    SETTINGS
        .read()
        .ok()
        .and_then(|s| s.clone())
        .unwrap_or_default()
}

/// Whether pictures in documents are read: OCR runs and `Settings::document_pictures` is on.
pub fn reads_document_pictures() -> bool {
    settings().document_pictures && status().available
}

/// Whether OCR is available (checked once, by running the command).
pub fn status() -> &'static Status {
    STATUS.get_or_init(|| probe(&settings()))
}

fn probe(settings: &Settings) -> Status {
    let off = |reason: String| Status {
        available: false,
        version: None,
        languages: Vec::new(),
        reason: Some(reason),
    };
    let version = match Command::new(&settings.command)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
    {
        Ok(out) if out.status.success() => {
            let all = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            all.lines().next().unwrap_or_default().trim().to_string()
        }
        Ok(out) => {
            return off(format!(
                "'{} --version' exited with {}",
                settings.command, out.status
            ));
        }
        Err(e) => return off(format!("'{}' cannot be run: {e}", settings.command)),
    };
    let installed: Vec<String> = Command::new(&settings.command)
        .arg("--list-langs")
        .stdin(Stdio::null())
        .output()
        .map(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .skip(1)
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty() && l != "osd")
                .collect()
        })
        .unwrap_or_default();
    let languages = choose_languages(&settings.languages, &installed);
    if languages.is_empty() {
        return off(format!(
            "no language data installed for {version} (install tesseract-ocr-eng)"
        ));
    }
    Status {
        available: true,
        version: Some(version),
        languages,
        reason: None,
    }
}

/// The configured languages that are installed, or every installed one when none is configured
/// (or none of those configured is installed).
fn choose_languages(configured: &[String], installed: &[String]) -> Vec<String> {
    let chosen: Vec<String> = configured
        .iter()
        .filter(|l| installed.contains(l))
        .cloned()
        .collect();
    if chosen.is_empty() {
        installed.to_vec()
    } else {
        chosen
    }
}

/// The pool of tesseract processes: a counting semaphore whose size [`configure`] sets.
struct Pool {
    state: Mutex<(usize, usize)>,
    freed: Condvar,
}

static POOL: Pool = Pool {
    state: Mutex::new((0, DEFAULT_CONCURRENCY)),
    freed: Condvar::new(),
};

struct Permit;

impl Pool {
    fn resize(&self, size: usize) {
        if let Ok(mut s) = self.state.lock() {
            s.1 = size;
        }
        self.freed.notify_all();
    }

    /// Waits for a free process until `deadline`.
    fn acquire(&'static self, deadline: Instant) -> Result<Permit, ExtractError> {
        let mut state = self.state.lock().map_err(|_| ExtractError::TimedOut)?;
        loop {
            if state.0 < state.1 {
                state.0 += 1;
                return Ok(Permit);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ExtractError::TimedOut);
            }
            state = self
                .freed
                .wait_timeout(state, left)
                .map_err(|_| ExtractError::TimedOut)?
                .0;
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Ok(mut s) = POOL.state.lock() {
            s.0 = s.0.saturating_sub(1);
        }
        POOL.freed.notify_one();
    }
}

fn sniff(probe: &Probe<'_>) -> Option<&'static str> {
    let b = probe.bytes;
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("png")
    } else if b.starts_with(b"\xff\xd8\xff") {
        Some("jpeg")
    } else if b.starts_with(b"II*\0") || b.starts_with(b"MM\0*") {
        Some("tiff")
    } else if b.len() > 12 && b.starts_with(b"RIFF") && &b[8..12] == b"WEBP" {
        Some("webp")
    } else if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        Some("gif")
    } else if b.len() > 18
        && b.starts_with(b"BM")
        && matches!(
            u32::from_le_bytes([b[14], b[15], b[16], b[17]]),
            12 | 40 | 52 | 56 | 108 | 124
        )
    {
        Some("bmp")
    } else if b.starts_with(b"\0\0\0\x0cjP  \r\n\x87\n") || b.starts_with(b"\xff\x4f\xff\x51") {
        Some("jp2")
    } else if b.len() > 3
        && b[0] == b'P'
        && matches!(b[1], b'4' | b'5' | b'6')
        && b[2].is_ascii_whitespace()
    {
        Some("pnm")
    } else {
        None
    }
}

/// Whether `bytes` (or their first 32) start like an image this crate reads by OCR.
pub fn is_image(bytes: &[u8]) -> bool {
    sniff(&Probe {
        bytes,
        entries: &[],
    })
    .is_some()
}

/// How sure the bytes are an image of format `id`.
fn score(probe: &Probe<'_>, id: &str) -> u8 {
    if sniff(probe) == Some(id) { 90 } else { 0 }
}

macro_rules! image_format {
    ($id:literal) => {
        inventory::submit! {
            ExtractorInfo { id: $id, version: 1, media_type: concat!("image/", $id), sniff: |p| score(p, $id), make: || Box::new(Ocr) }
        }
    };
}

image_format!("png");
image_format!("jpeg");
image_format!("tiff");
image_format!("webp");
image_format!("gif");
image_format!("bmp");
image_format!("pnm");
image_format!("jp2");

/// OCR of an image with the tesseract command.
pub struct Ocr;

impl Extractor for Ocr {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        let status = status();
        if !status.available {
            return Err(ExtractError::Unsupported(UNAVAILABLE.into()));
        }
        let settings = settings();
        check_pixels(input, settings.max_pixels)?;
        let mut deadline = Instant::now() + settings.time_budget;
        if let Some(d) = sink.deadline() {
            deadline = deadline.min(d);
        }
        match sink.turns() {
            // The caller's fair pools: its extraction slot is lent back while OCR is waited
            // for and runs (the turn is dropped before the slot is taken again).
            Some(turns) => {
                let _slot = turns.lend_slot(deadline);
                let _turn = turns.ocr_turn(deadline).ok_or(ExtractError::TimedOut)?;
                run(&settings, &status.languages, input, deadline, sink)
            }
            None => {
                let _permit = POOL.acquire(deadline)?;
                run(&settings, &status.languages, input, deadline, sink)
            }
        }
    }
}

/// Refuses an image whose header says it has more than `max` pixels (formats whose size
/// `imagesize` cannot read go on, under Tesseract's memory limit).
fn check_pixels(input: &[u8], max: u64) -> Result<(), ExtractError> {
    let Ok(size) = imagesize::blob_size(input) else {
        return Ok(());
    };
    let (w, h) = (size.width as u64, size.height as u64);
    if w.saturating_mul(h) > max {
        return Err(ExtractError::Unsupported(format!(
            "the image is {w} × {h} pixels; OCR reads images of at most {} megapixels \
             (--ocr-max-pixels)",
            max as f64 / 1e6
        )));
    }
    Ok(())
}

/// Kills the process when dropped (a stop for any reason never leaves it running).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run(
    settings: &Settings,
    languages: &[String],
    input: &[u8],
    deadline: Instant,
    sink: &mut TextSink,
) -> Result<(), ExtractError> {
    let languages = languages.join("+");
    let args = ["stdin", "stdout", "-l", languages.as_str()];
    // The memory limit is the shell's `ulimit -v` (KiB) before it becomes Tesseract: an image
    // that needs more makes Tesseract fail, not the machine swap.
    let mut command = if settings.memory_limit_bytes > 0 {
        let mut c = Command::new("sh");
        c.args(["-c", "ulimit -v \"$1\" && shift && exec \"$@\"", "sh"])
            .arg((settings.memory_limit_bytes / 1024).to_string())
            .arg(&settings.command)
            .args(args);
        c
    } else {
        let mut c = Command::new(&settings.command);
        c.args(args);
        c
    };
    let child = command
        // One thread per process: parallelism comes from the pool. Tesseract's OpenMP threads
        // contend for the cores the service shares (2.1 s instead of 11.7 s for a page here).
        .env("OMP_THREAD_LIMIT", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| ExtractError::Unsupported(format!("{UNAVAILABLE}: {e}")))?;
    let mut child = Running(child);
    let (Some(mut stdin), Some(mut stdout)) = (child.0.stdin.take(), child.0.stdout.take()) else {
        return Err(ExtractError::Unsupported(UNAVAILABLE.into()));
    };
    // The image goes in and the text comes out on threads of their own, so neither pipe can
    // block the other; this thread keeps the clock.
    let image = input.to_vec();
    std::thread::spawn(move || {
        let _ = stdin.write_all(&image);
    });
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let mut pending = Vec::new();
    let mut pages = 0usize;
    let mut wrote_any = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ExtractError::TimedOut);
        }
        match rx.recv_timeout(left) {
            Ok(chunk) => {
                pending.extend_from_slice(&chunk);
                // Whole lines only (a chunk may end inside a UTF-8 sequence).
                let Some(end) = pending.iter().rposition(|&b| b == b'\n' || b == 0x0c) else {
                    continue;
                };
                let complete: Vec<u8> = pending.drain(..=end).collect();
                let text = String::from_utf8_lossy(&complete);
                for (i, page) in text.split(PAGE_BREAK).enumerate() {
                    if i > 0 {
                        pages += 1;
                        if pages >= settings.max_pages {
                            return Err(sink.cut());
                        }
                        sink.line_break()?;
                    }
                    wrote_any |= push_lines(page, sink)?;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => return Err(ExtractError::TimedOut),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let rest = String::from_utf8_lossy(&pending).into_owned();
    wrote_any |= push_lines(&rest.replace(PAGE_BREAK, "\n"), sink)?;
    let status = child.0.wait().map_err(ExtractError::malformed)?;
    if !status.success() && !wrote_any {
        return Err(ExtractError::Malformed(format!(
            "tesseract could not read the image ({status})"
        )));
    }
    Ok(())
}

/// Writes the non-blank lines of `text`, one per line, paragraphs kept apart by a blank line.
fn push_lines(text: &str, sink: &mut TextSink) -> Result<bool, ExtractError> {
    let mut wrote = false;
    let mut blank = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            blank = true;
            continue;
        }
        if blank && !sink.as_str().is_empty() && !sink.as_str().ends_with("\n\n") {
            sink.line_break()?;
            sink.push("\n")?;
        }
        blank = false;
        sink.push(line)?;
        sink.push("\n")?;
        wrote = true;
    }
    Ok(wrote)
}
