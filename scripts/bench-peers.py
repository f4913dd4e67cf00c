#!/usr/bin/env python3
"""Runs Inlet's extraction peers over a corpus and records what `extract-bench --peers` reads.

usage: bench-peers.py CORPUS OUT

For every document of every format folder of CORPUS (`bad/` and `reference/` left out, Tika
oracles `*.expected.*` and `*.ocr_reference.txt` skipped, as extract-bench does) and every peer:
one warm-up call, then calls until a 200 ms budget is spent (3 to 50), keeping the median. Writes
`OUT/<peer>/timings.tsv` (folder, file, median ms, status) and the peer's text of each file to
`OUT/<peer>/<folder>/<file>.txt`, plus `OUT/versions.txt`. Recall is not computed here: the Rust
benchmark computes it for every extractor with the same code.

Peers: Apache Tika through `extractous` (in-process, string cap 1,000,000 characters as Inlet's),
`kreuzberg` (in-process, `extract_file_sync`: it picks its parser by file extension) and
`pdftotext` from poppler-utils (a process per call; PDF only).
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
    except Exception as e:  # a peer failing on a file is a result, not a crash of the bench
        start = time.perf_counter()
        try:
            call(path)
        except Exception:
            pass
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
    from extractous import Extractor
    import kreuzberg

    tika = Extractor().set_extract_string_max_length(MAX_CHARS)

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


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    corpus, out = sys.argv[1], sys.argv[2]
    docs = list(documents(corpus))
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
