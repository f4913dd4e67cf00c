"""Pooled HTTP clients survive early answers (issue 38, point 1).

An upload answered before its body is read (401, 404, 400 for a bad parameter, 415) used to
close the connection without `Connection: close`, and a pooled client's next request on it died
with `RemoteDisconnected`. Two real pooled clients, requests.Session and httpx.Client, send
1,000 early-answered uploads of 50-500 KB interleaved with ordinary requests, against a real
`inlet serve` on SQLite and on PostgreSQL: not one connection error.
"""

import os
import random
import subprocess
import tempfile
import time
import uuid

import httpx
import pytest
import requests

from conftest import ADMIN_EMAIL, ADMIN_TOKEN, ROOT, free_port

EARLY_UPLOADS = 1000


def databases():
    yield "sqlite"
    if os.environ.get("INLET_TEST_POSTGRES_URL"):
        yield "postgres"


@pytest.fixture(params=list(databases()))
def server(request):
    binary = os.environ.get("INLET_BIN", str(ROOT / "target" / "debug" / "inlet"))
    port = free_port()
    workdir = tempfile.mkdtemp()
    schema = None
    if request.param == "sqlite":
        database = f"sqlite://{workdir}/inlet.db?mode=rwc"
    else:
        schema = f"pooled_{uuid.uuid4().hex}"
        subprocess.run(
            ["psql", "-q", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-c",
             f"CREATE SCHEMA {schema}"],
            check=True,
        )
        database = ("postgres://postgres@127.0.0.1:5432/test"
                    f"?options=-c%20search_path%3D{schema}")
    env = dict(os.environ, INLET_ADMIN_EMAIL=ADMIN_EMAIL, INLET_ADMIN_API_TOKEN=ADMIN_TOKEN,
               RUST_LOG="warn")
    proc = subprocess.Popen(
        [binary, "serve", "--database", database, "--bind", f"127.0.0.1:{port}",
         "--index-dir", f"{workdir}/index"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/api/v1"
    for _ in range(300):
        try:
            requests.get(f"{base}/openapi.json", timeout=1)
            break
        except requests.ConnectionError:
            assert proc.poll() is None, "inlet exited during start"
            time.sleep(0.1)
    yield base
    proc.terminate()
    proc.wait(timeout=10)
    if schema:
        subprocess.run(["psql", "-q", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-c",
                        f"DROP SCHEMA {schema} CASCADE"], check=False)


def object_type(base):
    resp = requests.post(f"{base}/sources", auth=(ADMIN_EMAIL, ADMIN_TOKEN), json={
        "definition": {"type": "CUSTOM"}, "externalId": f"pool-{uuid.uuid4().hex}",
        "config": {"type": "CUSTOM", "name": "Pool", "trackStatus": True,
                   "specification": {"application": {"objectTypes": [
                       {"name": "Files", "externalId": "files", "sourceDataType": "RECORD"}]}}},
    })
    assert resp.status_code == 201, resp.text
    source = resp.json()
    return f"{base}/sources/{source['id']}/objecttypes/{source['sourceObjectTypes'][0]['id']}"


def early_cases(base, ot):
    """(url, auth, params, expected status, send as multipart) of uploads answered early."""
    missing = f"{base}/sources/{uuid.uuid4()}/objecttypes/{uuid.uuid4()}/objects/x/file"
    return [
        (f"{ot}/objects/a/file", (ADMIN_EMAIL, "wrong-token"), {}, 401, True),
        (missing, (ADMIN_EMAIL, ADMIN_TOKEN), {}, 404, True),
        (f"{ot}/objects/a/file", (ADMIN_EMAIL, ADMIN_TOKEN), {"externalUrl": "ftp://x"}, 400, True),
        (f"{ot}/objects/a/file", (ADMIN_EMAIL, ADMIN_TOKEN), {}, 415, False),
    ]


def run(base, send):
    """Sends the early uploads and ordinary requests through `send`; counts what failed."""
    ot = object_type(base)
    cases = early_cases(base, ot)
    rng = random.Random(38)
    errors, statuses = [], {}
    for i in range(EARLY_UPLOADS):
        url, auth, params, want, multipart = cases[i % len(cases)]
        body = rng.randbytes(rng.randint(50_000, 500_000))
        try:
            status = send("PUT", url, auth, params, body, multipart)
            statuses[want] = statuses.get(want, 0) + (status == want)
            # An ordinary request on the pooled connection, every time.
            if i % 2 == 0:
                ok = send("GET", f"{base}/sources", (ADMIN_EMAIL, ADMIN_TOKEN), {}, None, False)
            else:
                ok = send("PUT", f"{ot}/objects/n{i}/file", (ADMIN_EMAIL, ADMIN_TOKEN), {},
                          b"a small note", True)
            assert ok in (200, 201), ok
        except (requests.ConnectionError, httpx.TransportError) as e:
            errors.append(f"{i}: {type(e).__name__}: {e}")
    return errors, statuses


def sender(client, raw_body):
    """`send` over one pooled client; `raw_body` names its keyword for a raw request body
    (`data` for requests, `content` for httpx)."""
    def send(method, url, auth, params, body, multipart):
        if body is None:
            return client.request(method, url, auth=auth, params=params).status_code
        if multipart:
            return client.request(method, url, auth=auth, params=params,
                                  files={"file": ("f.bin", body)}).status_code
        return client.request(method, url, auth=auth, params=params, **{raw_body: body},
                              headers={"Content-Type": "application/octet-stream"}).status_code
    return send


def check(server, name, send):
    errors, statuses = run(server, send)
    print(f"{name}:", len(errors), "connection errors; answered as expected:", statuses)
    assert errors == [], errors[:5]
    assert sum(statuses.values()) == EARLY_UPLOADS, statuses


def test_requests_session_survives_early_answers(server):
    check(server, "requests.Session", sender(requests.Session(), "data"))


def test_httpx_client_survives_early_answers(server):
    check(server, "httpx.Client", sender(httpx.Client(timeout=30), "content"))
