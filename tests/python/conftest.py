"""Fixtures for the third-party client tests: a real `inlet serve` on a free loopback port.

The binary is taken from INLET_BIN (default: target/debug/inlet, built by `cargo build -p inlet-server`).
"""

import base64
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
ADMIN_EMAIL = "admin@example.test"
ADMIN_PASSWORD = "admin-password"
ADMIN_TOKEN = "python-admin-token-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Inlet:
    """A running server and helpers to call it as the administrator."""

    def __init__(self, base: str):
        self.base = base
        self.admin = requests.Session()
        self.admin.auth = (ADMIN_EMAIL, ADMIN_TOKEN)

    def api(self, path: str) -> str:
        return f"{self.base}/api/v1{path}"

    def create_client(self, scopes, redirect_uris, name="Acme Sync"):
        resp = self.admin.post(
            self.api("/oauthclients"),
            json={
                "name": name,
                "description": "Keeps your Acme files in sync with Inlet.",
                "bottomDescription": "Acme Corp. · Privacy policy at acme.example/privacy",
                "redirectUris": redirect_uris,
                "scopes": scopes,
            },
        )
        assert resp.status_code == 201, resp.text
        return resp.json()

    def upload_logo(self, client_id: str, png: bytes):
        resp = self.admin.post(
            self.api(f"/oauthclients/{client_id}/logoUrl"),
            files={"logo": ("logo.png", png, "image/png")},
        )
        assert resp.status_code == 200, resp.text
        return resp.json()


@pytest.fixture(scope="session")
def inlet():
    binary = os.environ.get("INLET_BIN", str(ROOT / "target" / "debug" / "inlet"))
    port = free_port()
    env = dict(
        os.environ,
        INLET_ADMIN_EMAIL=ADMIN_EMAIL,
        INLET_ADMIN_PASSWORD=ADMIN_PASSWORD,
        INLET_ADMIN_API_TOKEN=ADMIN_TOKEN,
        RUST_LOG="warn",
    )
    proc = subprocess.Popen(
        [binary, "serve", "--database", "memory:", "--bind", f"127.0.0.1:{port}"],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            requests.get(f"{base}/healthz", timeout=1)
            break
        except requests.ConnectionError:
            assert proc.poll() is None, "inlet exited during start"
            time.sleep(0.1)
    else:
        proc.kill()
        raise RuntimeError("inlet did not come up")
    yield Inlet(base)
    proc.terminate()
    proc.wait(timeout=10)


# A 64x64 PNG logo (a blue rounded square with a white bar), generated without extra packages.
def make_png() -> bytes:
    import struct
    import zlib

    w = h = 64
    rows = []
    for y in range(h):
        row = bytearray([0])
        for x in range(w):
            corner = min(x, w - 1 - x) + min(y, h - 1 - y)
            inside = corner >= 6
            bar = 26 <= y <= 37 and 14 <= x <= 49
            if not inside:
                row += bytes([0, 0, 0, 0])
            elif bar:
                row += bytes([255, 255, 255, 255])
            else:
                row += bytes([47, 111, 223, 255])
        rows.append(bytes(row))
    raw = b"".join(rows)

    def chunk(kind, data):
        c = kind + data
        return struct.pack(">I", len(data)) + c + struct.pack(">I", zlib.crc32(c) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


LOGO_PNG = make_png()
LOGO_B64 = base64.b64encode(LOGO_PNG).decode()
