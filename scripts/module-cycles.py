#!/usr/bin/env python3
"""Fails when two top-level modules of one crate import each other (directly).

Reads every crate's `src/` (workspace crates, not patches/ or target/): a module is a file
`src/NAME.rs` or folder `src/NAME/`; it imports module B when its text names `crate::B` (also
inside `use crate::{...}` groups). Test-only modules (`tests.rs`, `*_tests.rs`) are skipped: a
test module reads the modules it tests. Run by .ci/run; prints each cycle found.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SKIP = {"target", "patches", ".git"}


def crate_roots():
    for toml in ROOT.rglob("Cargo.toml"):
        if SKIP & set(toml.relative_to(ROOT).parts):
            continue
        src = toml.parent / "src"
        if src.is_dir():
            yield src


def modules(src):
    mods = {}
    for path in src.iterdir():
        if path.suffix == ".rs" and path.stem not in ("lib", "main"):
            mods[path.stem] = [path]
        elif path.is_dir() and path.name != "bin":
            mods.setdefault(path.name, []).extend(path.rglob("*.rs"))
    return {
        name: files
        for name, files in mods.items()
        if name != "tests" and not name.endswith("_tests")
    }


def uses_group(text):
    """Names at the top of `use crate::{a, b::{..}, c}` groups."""
    names = set()
    for m in re.finditer(r"crate::\{", text):
        depth, i, start, top = 1, m.end(), m.end(), []
        while i < len(text) and depth:
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            elif c == "," and depth == 1:
                top.append(text[start:i])
                start = i + 1
            i += 1
        top.append(text[start : i - 1])
        for item in top:
            word = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)", item)
            if word:
                names.add(word.group(1))
    return names


def strip_tests(text):
    """The text before a `#[cfg(test)]` module (tests may read anything)."""
    cut = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    return text[: cut.start()] if cut else text


def main():
    found = []
    for src in sorted(crate_roots()):
        mods = modules(src)
        edges = {}
        for name, files in mods.items():
            text = "\n".join(strip_tests(f.read_text(errors="replace")) for f in files)
            # Line comments and doc links name modules without importing them.
            text = re.sub(r"//[^\n]*", "", text)
            named = set(re.findall(r"crate::([a-z_][a-z0-9_]*)", text)) | uses_group(text)
            edges[name] = {m for m in named if m in mods and m != name}
        for a in sorted(edges):
            for b in sorted(edges[a]):
                if a < b and a in edges.get(b, set()):
                    found.append(f"{src.relative_to(ROOT)}: {a} <-> {b}")
    for line in found:
        print("module cycle:", line)
    if found:
        sys.exit(1)
    print("no two modules of one crate import each other")


if __name__ == "__main__":
    main()
