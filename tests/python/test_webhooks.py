"""Webhook deliveries to a receiver on a loopback port, checked independently of Inlet's code:
each `Inlet-Signature` is verified with Python's hmac, a delivery the receiver fails is tried
again (same delivery id), and deliveries queued while the receiver is down survive a kill -9 of
the server and arrive after it restarts.

The server runs from INLET_BIN (default target/debug/inlet) on a SQLite file of its own, with
--webhook-allow-private (the receiver is on loopback) and a one-second retry base.
"""

import hashlib
import hmac
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

from conftest import ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOKEN, ROOT, free_port

AUTH = (ADMIN_EMAIL, ADMIN_TOKEN)


class Receiver:
    """Records every POST; answers 500 to the first `fail_first` of them, 204 after."""

    def __init__(self, port: int, fail_first: int = 0):
        self.received = []
        self.fail_left = fail_first
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                with lock:
                    failing = outer.fail_left > 0
                    if failing:
                        outer.fail_left -= 1
                    outer.received.append(({k.lower(): v for k, v in self.headers.items()}, raw, failing))
                self.send_response(500 if failing else 204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, predicate, seconds=30):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if predicate(self.received):
                return
            time.sleep(0.1)
        raise AssertionError(f"receiver never saw it; got {[r[1] for r in self.received]}")


def start_inlet(db: str, port: int) -> subprocess.Popen:
    binary = os.environ.get("INLET_BIN", str(ROOT / "target" / "debug" / "inlet"))
    env = dict(os.environ, INLET_ADMIN_EMAIL=ADMIN_EMAIL, INLET_ADMIN_PASSWORD=ADMIN_PASSWORD,
               INLET_ADMIN_API_TOKEN=ADMIN_TOKEN, RUST_LOG="warn")
    proc = subprocess.Popen(
        [binary, "serve", "--database", f"sqlite://{db}?mode=rwc", "--bind", f"127.0.0.1:{port}",
         "--webhook-allow-private", "--webhook-retry-base", "1s"],
        env=env, stdout=subprocess.DEVNULL)
    for _ in range(300):
        try:
            if requests.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return proc
        except requests.ConnectionError:
            pass
        assert proc.poll() is None, "inlet exited during start"
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("inlet did not come up")


def verified(secret: str, headers: dict, raw: bytes) -> dict:
    """The body, once its signature checks out with Python's own HMAC-SHA256."""
    parts = dict(p.split("=", 1) for p in headers["inlet-signature"].split(","))
    t = parts["t"]
    expected = hmac.new(secret.encode(), t.encode() + b"." + raw, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(expected, parts["v1"]), "signature does not verify"
    assert abs(time.time() - int(t)) < 300, "timestamp far from now"
    body = json.loads(raw)
    assert headers["inlet-delivery"] == body["id"]
    assert headers["inlet-event"] == body["event"]
    assert headers["content-type"] == "application/json"
    return body


def source_body(external_id: str) -> dict:
    return {
        "definition": {"type": "CUSTOM"},
        "externalId": external_id,
        "config": {"type": "CUSTOM", "name": "Files", "trackStatus": True,
                   "specification": {"application": {"objectTypes": [{
                       "name": "Files", "externalId": "files",
                       "sourceDataType": "RECORD", "tagConfigs": [], "facets": []}]}}},
    }


def test_signed_deliveries_retries_and_a_kill_9():
    tmp = Path(tempfile.mkdtemp())
    db = tmp / "hooks.db"
    port = free_port()
    receiver = Receiver(free_port(), fail_first=1)
    proc = start_inlet(str(db), port)
    api = f"http://127.0.0.1:{port}/api/v1"
    try:
        resp = requests.post(f"{api}/webhooks", auth=AUTH, json={
            "url": f"http://127.0.0.1:{receiver.server.server_port}/hooks",
            "events": ["source.created", "sync.completed", "record.extraction_failed"]})
        assert resp.status_code == 201, resp.text
        hook = resp.json()
        secret = hook["secret"]
        assert secret.startswith("whsec_")
        listed = requests.get(f"{api}/webhooks", auth=AUTH).json()
        assert [h["id"] for h in listed] == [hook["id"]]
        assert "secret" not in listed[0]

        # source.created: the first attempt is answered 500, the second delivers.
        source = requests.post(f"{api}/sources", auth=AUTH, json=source_body("hooked")).json()
        receiver.wait_for(lambda r: sum(1 for _, _, failed in r if not failed) >= 1)
        (h1, raw1, failed1), (h2, raw2, failed2) = receiver.received[:2]
        assert failed1 and not failed2
        first, second = verified(secret, h1, raw1), verified(secret, h2, raw2)
        assert first == second, "a retry sends the same body"
        assert first["event"] == "source.created"
        assert first["data"]["id"] == source["id"]
        deliveries = requests.get(f"{api}/webhooks/{hook['id']}/deliveries", auth=AUTH).json()
        assert deliveries[0]["id"] == first["id"]
        assert deliveries[0]["state"] == "DELIVERED", deliveries
        assert deliveries[0]["attempts"] == 2
        assert deliveries[0]["lastStatus"] == 204

        # record.extraction_failed and sync.completed, signed the same way.
        s, o = source["id"], source["sourceObjectTypes"][0]["id"]
        ot = f"{api}/sources/{s}/objecttypes/{o}"
        opened = requests.post(f"{ot}/syncs", auth=AUTH, json={"operation": "START_INITIAL"}).json()
        n = opened["syncNumber"]
        resp = requests.put(f"{ot}/objects/broken/file", auth=AUTH, params={"syncNumber": n},
                            files={"file": ("broken.bin", os.urandom(4096), "application/octet-stream")})
        assert resp.status_code == 201, resp.text
        assert requests.put(f"{ot}/syncs/{n}", auth=AUTH,
                            json={"operation": "COMPLETE"}).status_code == 200
        receiver.wait_for(lambda r: {json.loads(b)["event"] for _, b, _ in r} >=
                          {"record.extraction_failed", "sync.completed"})
        bodies = {}
        for headers, raw, _ in receiver.received:
            body = verified(secret, headers, raw)
            bodies[body["event"]] = body
        failed = bodies["record.extraction_failed"]["data"]
        assert failed["externalId"] == "broken"
        assert failed["record"]["extraction"]["failure"]
        completed = bodies["sync.completed"]["data"]
        assert (completed["sourceId"], completed["objectTypeId"]) == (s, o)
        assert completed["syncNumber"] == n and completed["state"] == "COMPLETED"

        # A second endpoint that is down: its delivery waits in the database through a kill -9.
        down_port = free_port()
        resp = requests.post(f"{api}/webhooks", auth=AUTH, json={
            "url": f"http://127.0.0.1:{down_port}/later", "events": ["source.created"]})
        assert resp.status_code == 201, resp.text
        later = resp.json()
        requests.post(f"{api}/sources", auth=AUTH, json=source_body("while-down"))
        deadline = time.time() + 20
        while True:
            queued = requests.get(f"{api}/webhooks/{later['id']}/deliveries", auth=AUTH).json()
            if queued and queued[0]["attempts"] >= 1:
                break
            assert time.time() < deadline, queued
            time.sleep(0.2)
        assert queued[0]["state"] == "PENDING"
        assert "connect" in queued[0]["lastError"], queued
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        revived = Receiver(down_port)
        proc = start_inlet(str(db), port)
        revived.wait_for(lambda r: len(r) >= 1, seconds=90)
        body = verified(later["secret"], *revived.received[0][:2])
        assert body["id"] == queued[0]["id"]
        assert body["event"] == "source.created"
        revived.stop()
    finally:
        proc.kill()
        proc.wait(timeout=10)
        receiver.stop()
