"""OCR accuracy on page images rendered at test time from known text (issue 16 point 4).

Known text: the first questions of the CACM test collection (../shared/relevance). Each page is
rendered with Pillow at 300 dpi, 12 pt, in a serif and a sans font (DejaVu, Debian's
fonts-dejavu-core), with salt-and-pepper noise and a 2 degree skew, uploaded as a PNG through the
API, and the stored text must match the known text at character accuracy >= 0.97 (1 - edit
distance / length, whitespace collapsed). Skipped when tesseract is missing, unless
INLET_REQUIRE_OCR=1 (CI).
"""

import os
import random
import re
import shutil
import textwrap
from io import BytesIO
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUERIES = ROOT.parent / "shared" / "relevance" / "cacm" / "query.text"
FONTS = Path("/usr/share/fonts/truetype/dejavu")

if shutil.which("tesseract") is None:
    if os.environ.get("INLET_REQUIRE_OCR"):
        raise RuntimeError("INLET_REQUIRE_OCR is set but tesseract is not installed")
    pytest.skip("tesseract is not installed", allow_module_level=True)

from PIL import Image, ImageDraw, ImageFont  # noqa: E402  (after the skip: Pillow is a CI dependency)


def known_text(words=180):
    """The .W fields of the first CACM queries, whole questions until about `words` words."""
    text = QUERIES.read_text()
    parts = re.findall(r"^\.W\n(.*?)(?=^\.[A-Z]\b)", text, flags=re.S | re.M)
    chosen, count = [], 0
    for part in parts:
        flat = " ".join(part.split())
        chosen.append(flat)
        count += len(flat.split())
        if count >= words:
            break
    return chosen


def render(paragraphs, font_file, seed):
    dpi, size_pt = 300, 12
    font = ImageFont.truetype(str(FONTS / font_file), round(size_pt * dpi / 72))
    width, margin = 2480, 200  # A4 at 300 dpi
    lines = []
    for p in paragraphs:
        lines += textwrap.wrap(p, width=62) + [""]
    line_h = round(size_pt * dpi / 72 * 1.45)
    height = margin * 2 + line_h * len(lines)
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    for i, line in enumerate(lines):
        draw.text((margin, margin + i * line_h), line, font=font, fill=0)
    # Noise: 1 % of the pixels flipped to a random grey.
    rng = random.Random(seed)
    px = page.load()
    for _ in range(width * height // 100):
        px[rng.randrange(width), rng.randrange(height)] = rng.randrange(256)
    page = page.rotate(2, resample=Image.BICUBIC, expand=True, fillcolor=255)
    out = BytesIO()
    page.save(out, format="PNG", dpi=(dpi, dpi))
    return out.getvalue()


def squash(s):
    return " ".join(s.split())


def accuracy(ours, reference):
    a, b = squash(ours), squash(reference)
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a):
        cur = [i + 1] + [0] * len(b)
        for j, cb in enumerate(b):
            cur[j + 1] = min(prev[j] + (ca != cb), prev[j + 1] + 1, cur[j] + 1)
        prev = cur
    return 1 - prev[len(b)] / max(len(b), 1)


@pytest.fixture(scope="module")
def scans(inlet):
    resp = inlet.admin.post(
        inlet.api("/sources"),
        json={
            "definition": {"type": "CUSTOM"},
            "externalId": "rendered-scans",
            "config": {
                "type": "CUSTOM",
                "name": "Scans",
                "trackStatus": True,
                "specification": {
                    "application": {
                        "objectTypes": [
                            {"name": "Pages", "externalId": "pages", "sourceDataType": "RECORD"}
                        ]
                    }
                },
            },
        },
    )
    assert resp.status_code == 201, resp.text
    source = resp.json()
    return f"/sources/{source['id']}/objecttypes/{source['sourceObjectTypes'][0]['id']}"


@pytest.mark.parametrize("font_file", ["DejaVuSerif.ttf", "DejaVuSans.ttf"])
def test_rendered_pages_read_at_97_percent(inlet, scans, font_file):
    paragraphs = known_text()
    png = render(paragraphs, font_file, seed=len(font_file))
    external_id = font_file.replace(".ttf", "").lower()
    resp = inlet.admin.put(
        inlet.api(f"{scans}/objects/{external_id}/file"),
        files={"file": (f"{external_id}.png", png, "image/png")},
        timeout=180,
    )
    assert resp.status_code == 201, resp.text
    assert resp.json()["extraction"]["format"] == "png", resp.text
    record = inlet.admin.get(inlet.api(f"{scans}/objects/{external_id}")).json()
    acc = accuracy(record["content"], " ".join(paragraphs))
    print(f"{font_file}: character accuracy {acc:.4f}")
    assert acc >= 0.97, f"{font_file}: {acc:.4f}\n{record['content']}"
