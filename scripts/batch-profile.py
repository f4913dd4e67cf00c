#!/usr/bin/env python3
"""Times the batch endpoints of a release server as a connector sees them (loopback).

Starts `inlet serve` (INLET_BIN, default target/release/inlet) on DATABASE, uploads 3,000 small
files into one object type (8 in parallel), then sends 20 sequential requests of each kind and
prints p50 / p95 in milliseconds: a 1,000-item batch touch inside an open sync, a 1,000-item
metadata batch, a 1-item touch, and a 1,000-item touch of unknown ids.

    cargo build --release -p inlet-server
    python3 scripts/batch-profile.py "sqlite:///tmp/p.db?mode=rwc"
    python3 scripts/batch-profile.py "postgres://postgres@127.0.0.1:5432/test?options=-c%20search_path%3Dprof"

(The PostgreSQL schema must exist and be empty.)
"""
import os
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
EMAIL, TOKEN = "bench@example.test", "bench-token-0123456789abcdef0123"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    database = sys.argv[1]
    binary = os.environ.get("INLET_BIN", str(ROOT / "target" / "release" / "inlet"))
    port = free_port()
    env = dict(os.environ, INLET_ADMIN_EMAIL=EMAIL, INLET_ADMIN_PASSWORD="bench-password",
               INLET_ADMIN_API_TOKEN=TOKEN, RUST_LOG="warn")
    index = tempfile.mkdtemp()
    server = subprocess.Popen([binary, "serve", "--database", database, "--bind", f"127.0.0.1:{port}",
                               "--index-dir", index], env=env, stdout=subprocess.DEVNULL)
    try:
        run(f"http://127.0.0.1:{port}")
    finally:
        server.terminate()
        server.wait(timeout=10)


def run(origin):
    base = f"{origin}/api/v1"
    api = requests.Session()
    api.auth = (EMAIL, TOKEN)
    for _ in range(300):
        try:
            if requests.get(f"{origin}/readyz", timeout=1).status_code == 200:
                break
        except requests.ConnectionError:
            pass
        time.sleep(0.1)
    source = api.post(f"{base}/sources", json={
        "definition": {"type": "CUSTOM"}, "externalId": "profile",
        "config": {"type": "CUSTOM", "name": "Profile", "trackStatus": True, "specification": {
            "application": {"objectTypes": [{"name": "Files", "externalId": "files",
                                             "sourceDataType": "RECORD"}]}}}}).json()
    ot = f"{base}/sources/{source['id']}/objecttypes/{source['sourceObjectTypes'][0]['id']}"
    n = api.post(f"{ot}/syncs", json={"operation": "START_INITIAL"}).json()["syncNumber"]

    def upload(i):
        r = api.put(f"{ot}/objects/file-{i:05d}.txt/file",
                    params={"syncNumber": n, "externalChecksum": f"c{i}"},
                    files={"file": (f"file-{i}.txt", b"small text %d" % i)})
        assert r.status_code in (200, 201), r.text

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(upload, range(3000)))
    api.put(f"{ot}/syncs/{n}", json={"operation": "COMPLETE"})
    n = api.post(f"{ot}/syncs", json={"operation": "START"}).json()["syncNumber"]

    def timed(path, body):
        times = []
        for i in range(20):
            t = time.perf_counter()
            r = api.post(f"{ot}/{path}", json=body(i))
            times.append((time.perf_counter() - t) * 1000)
            assert r.status_code == 200, r.text
        times.sort()
        return f"p50 {times[10]:.1f} ms, p95 {times[19]:.1f} ms"

    ids = lambda i: [f"file-{(i % 3) * 1000 + j:05d}.txt" for j in range(1000)]
    print("1,000-item touch:   ", timed("batch/touch", lambda i: {
        "syncNumber": n, "objects": [{"externalId": x} for x in ids(i)]}))
    print("1,000-item metadata:", timed("batch/metadata", lambda i: {"externalIds": ids(i)}))
    print("1-item touch:       ", timed("batch/touch", lambda i: {
        "syncNumber": n, "objects": [{"externalId": "file-00001.txt"}]}))
    print("1,000 unknown ids:  ", timed("batch/touch", lambda i: {
        "syncNumber": n, "objects": [{"externalId": f"nope-{j}"} for j in range(1000)]}))


if __name__ == "__main__":
    main()
