#!/usr/bin/env python3
"""Checks that docs/contributors.md's map names every module of the workspace's own crates.

Each crate has a section in the map, opened by a line `- **`path/`**`. A module is a `.rs` file
under the crate's `src/` other than `lib.rs` and `main.rs`; the crate's section names it in
backticks by its path below `src/` (`store/deletion.rs`), by its file name (`copy.rs`), or, for a
folder the section describes as a whole (`testkit/`, `bin/`), by its stem (`blobs`). Vendored
code (patches/) and fuzz targets are not ours to map. Exits 1 listing every crate or module the
map does not name.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MAP = (ROOT / "docs" / "contributors.md").read_text(encoding="utf-8")
HEADER = re.compile(r"^- \*\*`([^`]+)/`\*\*", re.M)


def sections():
    """Each crate path the map heads a section with, and that section's text."""
    heads = list(HEADER.finditer(MAP))
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(MAP)
        section = MAP[head.start() : end]
        # A section ends at the next heading of the page too.
        section = re.split(r"^#", section, maxsplit=1, flags=re.M)[0]
        yield head.group(1), section


def crates():
    for manifest in sorted(ROOT.glob("**/Cargo.toml")):
        rel = manifest.parent.relative_to(ROOT)
        if not rel.parts or rel.parts[0] in ("patches", "target") or "fuzz" in rel.parts:
            continue
        if (manifest.parent / "src").is_dir():
            yield rel.as_posix(), manifest.parent / "src"


def named(names: set, src: pathlib.Path, module: pathlib.Path) -> bool:
    rel = module.relative_to(src).as_posix()
    if rel in names or (module.name != "mod.rs" and module.name in names):
        return True
    folder = module.parent.relative_to(src).as_posix() + "/"
    return folder in names and (module.name == "mod.rs" or module.stem in names)


mapped = dict(sections())
ours = list(crates())
missing = []
for crate, src in ours:
    if crate not in mapped:
        missing.append(f"{crate}/ (no section)")
        continue
    names = set(re.findall(r"`([^`\s]+)`", mapped[crate]))
    for module in sorted(src.rglob("*.rs")):
        if module.parent == src and module.name in ("lib.rs", "main.rs"):
            continue
        if not named(names, src, module):
            missing.append(module.relative_to(ROOT).as_posix())

if missing:
    print("docs/contributors.md's map does not name these:")
    for m in missing:
        print("  " + m)
    sys.exit(1)
print(f"docs/contributors.md names every module of the workspace's {len(ours)} crates")
