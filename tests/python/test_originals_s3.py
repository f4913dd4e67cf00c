"""Originals in S3-compatible storage, shared by two replicas over PostgreSQL (DESIGN 7b).

A real S3-compatible server (moto's standalone server, from PyPI) holds the blobs; boto3 counts
them. Two `inlet serve` processes share one PostgreSQL database and one bucket prefix: a file
uploaded through one downloads byte for byte through the other; a replacement and a delete leave
exactly the live records' blobs after the sweep; with the S3 server gone an upload fails with
503 and stores nothing.

Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust) and `psql`; skipped without them
unless INLET_REQUIRE_POSTGRES=1 (CI), which makes their absence a failure.
"""

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
import uuid

import boto3
import pytest
import requests
from moto.server import ThreadedMotoServer

from conftest import ADMIN_EMAIL, ADMIN_TOKEN, ROOT, free_port

BUCKET = "inlet-originals"
PREFIX = "deployment-a"
AUTH = (ADMIN_EMAIL, ADMIN_TOKEN)
PG = "postgresql://postgres@127.0.0.1:5432"


def psql(sql):
    return subprocess.run(["psql", f"{PG}/postgres", "-qAtc", sql],
                          capture_output=True, text=True, timeout=30)


@pytest.fixture
def database():
    if shutil.which("psql") is None or psql("SELECT 1").returncode != 0:
        if os.environ.get("INLET_REQUIRE_POSTGRES") == "1":
            pytest.fail("PostgreSQL is required (INLET_REQUIRE_POSTGRES=1) but not reachable")
        pytest.skip("PostgreSQL is not reachable")
    name = f"inlet_s3_{uuid.uuid4().hex[:12]}"
    assert psql(f"CREATE DATABASE {name}").returncode == 0
    yield f"{PG}/{name}"
    psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def s3():
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")
    client.create_bucket(Bucket=BUCKET)
    yield endpoint, client, server
    try:
        server.stop()
    except Exception:
        pass


def blobs(client):
    listed = client.list_objects_v2(Bucket=BUCKET, Prefix=f"{PREFIX}/")
    return sorted(o["Key"].rsplit("/", 1)[-1] for o in listed.get("Contents", []))


class Replica:
    def __init__(self, database, endpoint, index_dir):
        self.port = free_port()
        env = dict(
            os.environ,
            INLET_ADMIN_EMAIL=ADMIN_EMAIL,
            INLET_ADMIN_PASSWORD="admin-password",
            INLET_ADMIN_API_TOKEN=ADMIN_TOKEN,
            AWS_ENDPOINT_URL=endpoint,
            AWS_ACCESS_KEY_ID="test",
            AWS_SECRET_ACCESS_KEY="test",
            AWS_REGION="us-east-1",
            AWS_ALLOW_HTTP="true",
            INLET_ORIGINALS_GRACE="1s",
            INLET_BLOB_SWEEP_INTERVAL="1s",
            RUST_LOG="warn",
        )
        binary = os.environ.get("INLET_BIN", str(ROOT / "target" / "debug" / "inlet"))
        self.proc = subprocess.Popen(
            [binary, "serve", "--database", database, "--bind", f"127.0.0.1:{self.port}",
             "--index-dir", index_dir, "--blob-store", f"s3://{BUCKET}/{PREFIX}"],
            env=env, stdout=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}/api/v1"
        for _ in range(300):
            try:
                if requests.get(f"http://127.0.0.1:{self.port}/readyz", timeout=1).ok:
                    return
            except requests.ConnectionError:
                pass
            assert self.proc.poll() is None, "inlet exited during start"
            time.sleep(0.1)
        raise RuntimeError("inlet did not come up")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=15)


def wait_for(what, check, seconds=30):
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def test_two_replicas_share_originals_in_s3(database, s3):
    endpoint, client, server = s3
    with tempfile.TemporaryDirectory() as tmp:
        a = Replica(database, endpoint, os.path.join(tmp, "index-a"))
        b = Replica(database, endpoint, os.path.join(tmp, "index-b"))
        try:
            source = requests.post(f"{a.base}/sources", auth=AUTH, json={
                "definition": {"type": "CUSTOM"}, "externalId": "drive",
                "config": {"type": "CUSTOM", "name": "Drive", "trackStatus": True,
                           "specification": {"application": {"objectTypes": [{
                               "name": "Files", "externalId": "files",
                               "sourceDataType": "RECORD", "fields": []}]}}}})
            assert source.status_code == 201, source.text
            s, o = source.json()["id"], source.json()["sourceObjectTypes"][0]["id"]
            obj = f"/sources/{s}/objecttypes/{o}/objects"

            pdf = (ROOT.parent / "shared" / "corpus" / "pdf" / "2022_Q3_AAPL.pdf").read_bytes()
            up = requests.put(f"{a.base}{obj}/q3/file", auth=AUTH,
                              files={"file": ("Q3.pdf", pdf, "application/pdf")})
            assert up.status_code == 201, up.text
            digest = hashlib.sha256(pdf).hexdigest()
            assert blobs(client) == [digest]

            down = requests.get(f"{b.base}{obj}/q3/file", auth=AUTH)
            assert down.status_code == 200, down.text
            assert down.content == pdf
            assert down.headers["ETag"] == f'"{digest}"'
            assert down.headers["Content-Type"] == "application/pdf"
            part = requests.get(f"{b.base}{obj}/q3/file", auth=AUTH,
                                headers={"Range": "bytes=0-4"})
            assert part.status_code == 206 and part.content == pdf[:5]

            # A replacement through b: after the sweep only the new content is kept.
            up = requests.put(f"{b.base}{obj}/q3/file", auth=AUTH,
                              files={"file": ("Q3.txt", b"revised figures", "text/plain")})
            assert up.status_code == 200, up.text
            new = hashlib.sha256(b"revised figures").hexdigest()
            wait_for("the replaced original is swept", lambda: blobs(client) == [new])
            assert requests.get(f"{a.base}{obj}/q3/file", auth=AUTH).content == b"revised figures"

            # A delete: nothing is left after the sweep.
            assert requests.delete(f"{a.base}{obj}/q3", auth=AUTH).status_code == 204
            wait_for("the deleted record's original is swept", lambda: blobs(client) == [])

            # The S3 server gone: an upload fails with 503 and stores nothing.
            server.stop()
            up = requests.put(f"{a.base}{obj}/later/file", auth=AUTH,
                              files={"file": ("later.txt", b"later", "text/plain")}, timeout=120)
            assert up.status_code == 503, up.text
            assert up.headers["Content-Type"] == "application/problem+json"
            assert "original" in up.json()["detail"]
            assert "127.0.0.1" not in up.text
            meta = requests.get(f"{a.base}{obj}/later/metadata", auth=AUTH)
            assert meta.status_code == 404
            ready = requests.get(f"http://127.0.0.1:{a.port}/readyz", timeout=60)
            assert ready.status_code == 503
            assert ready.json()["originals"] == "unavailable"
        finally:
            a.stop()
            b.stop()
