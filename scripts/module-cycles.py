#!/usr/bin/env python3
"""Fails when the project's own source files import each other in a circle, of any length.

Reads every workspace crate's `src/` (not patches/ or target/). Each `.rs` file is a module
(`src/lib.rs` and `src/main.rs` the crate root, `src/a.rs` or `src/a/mod.rs` module `a`,
`src/a/b.rs` module `a::b`). A file imports another when it names it by a path, in a `use`
tree or inline: `crate::a::b::Item` imports the deepest module of that path that exists
(`a/b.rs`, else `a.rs`); `super::` and `self::` paths resolve from the file's module. Declaring
a child (`mod b;`) is not an import. Test code is skipped (`tests.rs`, `*_tests.rs`, and what
follows a `#[cfg(test)] mod`): tests read the modules they test.

The circles are the strongly connected components of that graph with more than one file
(Tarjan's algorithm). Each is printed with the imports that close it. A circle listed in
`scripts/known-cycles.txt` (one circle per line: its files, space-separated, sorted) is
reported but allowed; any other circle, or a listed one that changed or is gone, fails, so the
list only shrinks. Run by .ci/run.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SKIP = {"target", "patches", ".git", "fuzz"}
KNOWN = ROOT / "scripts" / "known-cycles.txt"
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def crate_sources():
    for toml in sorted(ROOT.rglob("Cargo.toml")):
        if SKIP & set(toml.relative_to(ROOT).parts):
            continue
        src = toml.parent / "src"
        if src.is_dir():
            yield src


def module_path(src, path):
    """The module path of a file (`()` for the crate root)."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts and parts[-1] in ("lib", "main", "mod"):
        parts.pop()
    return tuple(parts)


def is_test_file(path):
    return path.stem == "tests" or path.stem.endswith("_tests") or "tests" in path.parts[:-1]


def code_of(path):
    text = path.read_text(errors="replace")
    cut = re.search(r"#\[cfg\(test\)\]\s*(pub\s+)?mod\s+\w+\s*\{", text)
    if cut:
        text = text[: cut.start()]
    # Comments name modules without importing them; strings are not paths.
    return without_comments_and_literals(text)


def without_comments_and_literals(text):
    """`text` with comments dropped and string and char literals emptied."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:]) and not re.match(r"\w", text[i - 1 : i] or " "):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + len(hashes) + 2)
            i = n if end < 0 else end + 1 + len(hashes)
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.[^']*|[^\\'])'", text[i:]):
            i += re.match(r"'(\\.[^']*|[^\\'])'", text[i:]).end()
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def use_paths(tree, prefix=()):
    """The full paths of one `use` tree (`a::{b, c::{d, e}}`)."""
    tree = tree.strip()
    if not tree:
        return []
    brace = tree.find("{")
    if brace < 0:
        segs = [s.strip() for s in tree.split(" as ")[0].split("::") if s.strip()]
        return [prefix + tuple(segs)]
    head = [s.strip() for s in tree[:brace].split("::") if s.strip()]
    inner = tree[brace + 1 : tree.rfind("}")]
    items, depth, start = [], 0, 0
    for i, c in enumerate(inner):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(inner[start:i])
            start = i + 1
    items.append(inner[start:])
    out = []
    for item in items:
        out.extend(use_paths(item, prefix + tuple(head)))
    return out


def paths_in(text):
    """Every path the code names that starts at `crate`, `super` or `self`."""
    found = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        found.extend(use_paths(m.group(1)))
    for m in re.finditer(rf"\b(?:crate|super|self)(?:::{IDENT})+", text):
        found.append(tuple(m.group(0).split("::")))
    return [p for p in found if p and p[0] in ("crate", "super", "self")]


def resolve(path, here, modules):
    """The module file a path imports from, seen from module `here`."""
    if path[0] == "crate":
        base, rest = (), path[1:]
    else:
        # In `a/b.rs` (module a::b), `super` is `a` and `self` is `a::b`; in `a/mod.rs`
        # (module a) likewise `super` is the root.
        base, rest = here, path
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    for n in range(len(rest), -1, -1):
        if base + tuple(rest[:n]) in modules:
            return base + tuple(rest[:n])
    return None


def circles(src):
    files = [p for p in src.rglob("*.rs") if "bin" not in p.relative_to(src).parts[:1]]
    files = [p for p in files if not is_test_file(p.relative_to(src))]
    modules = {module_path(src, f): f for f in files}
    edges = {f: {} for f in files}
    for path in files:
        here = module_path(src, path)
        for p in paths_in(code_of(path)):
            target = resolve(p, here, modules)
            if target is None:
                continue
            other = modules[target]
            # The crate root declares every module; reading it is reading the crate.
            if other != path and target != ():
                edges[path].setdefault(other, "::".join(p))
    # Tarjan's strongly connected components.
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for f in files:
        if f not in index:
            visit(f)
    return [(sorted(c), edges) for c in out]


def main():
    known = set()
    if KNOWN.exists():
        for line in KNOWN.read_text().splitlines():
            line = line.split("#")[0].strip()
            if line:
                known.add(" ".join(sorted(line.split())))
    seen, failed = set(), False
    for src in crate_sources():
        for comp, edges in circles(src):
            names = [str(f.relative_to(ROOT)) for f in comp]
            key = " ".join(sorted(names))
            seen.add(key)
            allowed = key in known
            print(f"{'known' if allowed else 'NEW'} import circle of {len(comp)} files:")
            members = set(comp)
            for f in comp:
                for g, via in sorted(edges[f].items()):
                    if g in members:
                        print(f"  {f.relative_to(ROOT)} -> {g.relative_to(ROOT)} ({via})")
            failed |= not allowed
    for gone in sorted(known - seen):
        print(f"listed in {KNOWN.relative_to(ROOT)} but no longer a circle (remove it): {gone}")
        failed = True
    if failed:
        sys.exit(1)
    print(f"no import circle among the project's files but the {len(seen)} listed as known")


if __name__ == "__main__":
    main()
