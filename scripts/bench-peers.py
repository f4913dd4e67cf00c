#!/usr/bin/env python3
"""Runs Inlet's extraction peers over a corpus and records what `extract-bench --peers` reads.

usage: bench-peers.py CORPUS [CORPUS ...] OUT
       bench-peers.py --ocr OUT FILE [FILE ...]

For every document of every format folder of each CORPUS (`bad/` and `reference/` left out, Tika
oracles `*.expected.*` and `*.ocr_reference.txt` skipped, as extract-bench does) and every peer:
one warm-up call, then calls until a 200 ms budget is spent (3 to 50), keeping the median. Writes
`OUT/<peer>/timings.tsv` (folder, file, median ms, status) and the peer's text of each file to
`OUT/<peer>/<folder>/<file>.txt`, plus `OUT/versions.txt`. Recall is not computed here: the Rust
benchmark computes it for every extractor with the same code.

Peers: Apache Tika through `extractous` (in-process, string cap 1,000,000 characters as Inlet's,
PDF OCR off),
`kreuzberg` (in-process, `extract_file_sync`: it picks its parser by file extension) and
`pdftotext` from poppler-utils (a process per call; PDF only). A format folder name may appear in
one CORPUS only (the outputs are keyed by folder and file).

`--ocr` times kreuzberg's OCR (its Tesseract backend, `OcrConfig(backend="tesseract")`, OCR forced,
kreuzberg's cache off) on each FILE: one warm-up call, then 3 calls, keeping the median, and writes
`OUT/kreuzberg.tsv` (file, median seconds per page, pages, characters, peak memory in KiB,
status). Peak memory is `/usr/bin/time`'s maximum RSS of a fresh Python process that imports
kreuzberg and OCRs the file once (`--ocr-probe FILE`). The languages are
every one installed for Tesseract but `osd`, as Inlet's default. `OMP_THREAD_LIMIT` is left to the
caller (the bench runs it twice: as installed and with 1).
"""

import importlib.metadata
import os
import statistics
import subprocess
import sys
import time

BUDGET_S = 0.2
MIN_RUNS = 3
MAX_RUNS = 50
MAX_CHARS = 1_000_000


def documents(corpus):
    for folder in sorted(os.listdir(corpus)):
        if folder.startswith("."):
            continue
        path = os.path.join(corpus, folder)
        if folder in ("bad", "reference") or not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if ".expected." in name or name.endswith(".ocr_reference.txt"):
                continue
            if os.path.isfile(os.path.join(path, name)):
                yield folder, name, os.path.join(path, name)


def measure(call, path):
    """The text of one call, the median ms of the timed calls, and 'ok' or the error."""
    try:
        text = call(path)
    # A peer failing on a file is a result, not a crash of the bench (kreuzberg's Rust panics
    # arrive as pyo3's PanicException, a BaseException).
    except BaseException as e:
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        start = time.perf_counter()
        try:
            call(path)
        except BaseException as again:
            if isinstance(again, (KeyboardInterrupt, SystemExit)):
                raise
        ms = (time.perf_counter() - start) * 1000
        return "", ms, "error: " + " ".join(str(e).split())[:200]
    times = []
    start = time.perf_counter()
    while len(times) < MIN_RUNS or (len(times) < MAX_RUNS and time.perf_counter() - start < BUDGET_S):
        t = time.perf_counter()
        call(path)
        times.append((time.perf_counter() - t) * 1000)
    return text or "", statistics.median(times), "ok"


def peers():
    from extractous import Extractor, PdfOcrStrategy, PdfParserConfig
    import kreuzberg

    # Tika runs tesseract on PDF pages when the command is installed (the OCR bench needs it):
    # off, so its PDF time is text extraction as before.
    tika = (
        Extractor()
        .set_extract_string_max_length(MAX_CHARS)
        .set_pdf_config(PdfParserConfig().set_ocr_strategy(PdfOcrStrategy.NO_OCR))
    )

    def extractous_text(path):
        result = tika.extract_file_to_string(path)
        return result[0] if isinstance(result, tuple) else result

    def kreuzberg_text(path):
        return kreuzberg.extract_file_sync(path).content

    def pdftotext_text(path):
        done = subprocess.run(
            ["pdftotext", "-enc", "UTF-8", path, "-"], capture_output=True, check=True
        )
        return done.stdout.decode("utf-8", "replace")

    return [
        ("extractous", extractous_text, None),
        ("kreuzberg", kreuzberg_text, None),
        ("pdftotext", pdftotext_text, {"pdf"}),
    ]


def pdf_pages(path):
    if not path.lower().endswith(".pdf"):
        return 1
    info = subprocess.run(["pdfinfo", path], capture_output=True, text=True, check=True).stdout
    return int(next(l.split()[-1] for l in info.splitlines() if l.startswith("Pages:")))


def ocr_config():
    from kreuzberg import ExtractionConfig, OcrConfig

    listed = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True).stdout
    langs = [l.strip() for l in listed.splitlines()[1:] if l.strip() and l.strip() != "osd"]
    return ExtractionConfig(
        use_cache=False,
        force_ocr=True,
        ocr=OcrConfig(backend="tesseract", language="+".join(langs) or "eng"),
    )


def peak_kib(path, out):
    """Maximum RSS of a fresh process OCRing `path` once with kreuzberg."""
    report = os.path.join(out, "probe.rss")
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%M", "-o", report, sys.executable, __file__, "--ocr-probe", path],
        capture_output=True,
    )
    if done.returncode != 0:
        return "nan"
    with open(report) as f:
        return f.read().strip().splitlines()[-1]


def ocr(out, files):
    import kreuzberg

    config = ocr_config()
    os.makedirs(out, exist_ok=True)
    rows = []
    for path in files:
        name = os.path.basename(path)
        pages = pdf_pages(path)
        try:
            text = kreuzberg.extract_file_sync(path, config=config).content
            times = []
            for _ in range(3):
                t = time.perf_counter()
                kreuzberg.extract_file_sync(path, config=config)
                times.append(time.perf_counter() - t)
            per_page = statistics.median(times) / pages
            rows.append(f"{name}\t{per_page:.4f}\t{pages}\t{len(text)}\t{peak_kib(path, out)}\tok")
        except Exception as e:
            error = "error: " + " ".join(str(e).split())[:200]
            rows.append(f"{name}\tnan\t{pages}\t0\tnan\t{error}")
        print("kreuzberg ocr:", rows[-1], flush=True)
    with open(os.path.join(out, "kreuzberg.tsv"), "w") as f:
        f.write("\n".join(rows) + "\n")
    with open(os.path.join(out, "kreuzberg.version"), "w") as f:
        f.write(f"kreuzberg {importlib.metadata.version('kreuzberg')}\n")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--ocr-probe":
        import kreuzberg

        kreuzberg.extract_file_sync(sys.argv[2], config=ocr_config())
        return None
    if len(sys.argv) >= 4 and sys.argv[1] == "--ocr":
        return ocr(sys.argv[2], sys.argv[3:])
    if len(sys.argv) < 3 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    corpora, out = sys.argv[1:-1], sys.argv[-1]
    docs = [d for corpus in corpora for d in documents(corpus)]
    folders = [f for corpus in corpora for f in {d[0] for d in documents(corpus)}]
    if len(folders) != len(set(folders)):
        sys.exit("bench-peers.py: a format folder appears in two corpora")
    versions = []
    for dist in ("extractous", "kreuzberg"):
        versions.append(f"{dist} {importlib.metadata.version(dist)}")
    poppler = subprocess.run(["pdftotext", "-v"], capture_output=True, text=True)
    versions.append("pdftotext " + (poppler.stderr or poppler.stdout).split("\n")[0].split()[-1])
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "versions.txt"), "w") as f:
        f.write("\n".join(versions) + "\n")
    print("peers:", ", ".join(versions), flush=True)

    for peer, call, only in peers():
        rows = []
        for folder, name, path in docs:
            if only is not None and folder not in only:
                continue
            text, ms, status = measure(call, path)
            target = os.path.join(out, peer, folder)
            os.makedirs(target, exist_ok=True)
            with open(os.path.join(target, name + ".txt"), "w", encoding="utf-8") as f:
                f.write(text)
            rows.append(f"{folder}\t{name}\t{ms:.4f}\t{status}")
            if status != "ok":
                print(f"{peer}: {folder}/{name}: {status}", flush=True)
        with open(os.path.join(out, peer, "timings.tsv"), "w") as f:
            f.write("\n".join(rows) + "\n")
        print(f"{peer}: {len(rows)} files", flush=True)


if __name__ == "__main__":
    main()
