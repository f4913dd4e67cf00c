"""Records the API reference's examples from a real server.

Starts `inlet serve --database memory:` (INLET_BIN, default target/debug/inlet), walks every
operation of the document the way the README's walkthrough does, and writes each operation's
request and success response to server/src/api/examples.json, with ids, secrets and times
replaced by stable placeholders so the committed document does not change from run to run.
`cargo test -p inlet-server` checks every example against the document's schemas, so an
example cannot silently drift from what the server answers.

Run after changing an operation: python3 tests/python/integrators/record_examples.py
"""

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oauth_flow import approve  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "server" / "src" / "api" / "examples.json"
EMAIL, PASSWORD, TOKEN = "ada@example.com", "example-password-1", "example-api-token-1"
REDIRECT = "https://reports.example.com/oauth/callback"

examples = {}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def record(op, resp, request=None, params=None):
    """Keeps the success response (and the request body) of operation `op`."""
    assert resp.status_code < 300, f"{op}: {resp.status_code} {resp.text}"
    entry = examples.setdefault(op, {})
    entry["status"] = str(resp.status_code)
    if request is not None:
        entry["request"] = request
    if params:
        entry["parameters"] = params
    kind = resp.headers.get("content-type", "")
    if resp.content and "json" in kind:
        entry["response"] = resp.json()
    elif resp.content and kind.startswith("text/"):
        entry["response"] = resp.text  # a downloaded original
    return resp


class Stable:
    """Replaces ids, secrets and times with placeholders that stay the same run after run."""

    UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")

    def __init__(self):
        self.ids = {}
        self.secrets = {}

    def uuid(self, m):
        n = self.ids.setdefault(m.group(0), len(self.ids) + 1)
        return f"00000000-0000-4000-8000-{n:012d}"

    def text(self, s):
        for secret, name in self.secrets.items():
            s = s.replace(secret, name)
        s = self.UUID.sub(self.uuid, s)
        return self.TIME.sub("2026-11-25T09:30:00.000+00:00", s)

    # 2026-11-25T09:30:00Z as seconds since the epoch (introspection's `iat`; `exp` keeps its
    # distance from it).
    EPOCH = 1795599000

    def walk(self, v):
        if isinstance(v, dict):
            if isinstance(v.get("iat"), int) and isinstance(v.get("exp"), int):
                v = {**v, "exp": self.EPOCH + v["exp"] - v["iat"], "iat": self.EPOCH}
            return {k: self.walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [self.walk(x) for x in v]
        if isinstance(v, str):
            return self.text(v)
        return v


def main():
    binary = os.environ.get("INLET_BIN", str(ROOT / "target" / "debug" / "inlet"))
    port = free_port()
    env = dict(os.environ, INLET_ADMIN_EMAIL=EMAIL, INLET_ADMIN_PASSWORD=PASSWORD,
               INLET_ADMIN_API_TOKEN=TOKEN, RUST_LOG="warn")
    proc = subprocess.Popen([binary, "serve", "--database", "memory:", "--bind", f"127.0.0.1:{port}",
                             "--webhook-allow-private"],
                            env=env, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                requests.get(f"{base}/healthz", timeout=1)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        walk(base)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def walk(base):
    api = requests.Session()
    api.auth = (EMAIL, TOKEN)
    u = lambda p: f"{base}/api/v1{p}"  # noqa: E731
    stable = Stable()

    source_body = {
        "definition": {"type": "CUSTOM"},
        "externalId": "team-drive",
        "config": {
            "type": "CUSTOM", "name": "Team drive", "trackStatus": True,
            "specification": {"application": {"objectTypes": [
                {
                    "name": "Files", "externalId": "files", "sourceDataType": "RECORD",
                    "tagConfigs": [
                        {"type": "SIMPLE", "name": "Team", "externalId": "team", "dataType": "TEXT",
                         "allowMultipleValues": True},
                        {"type": "HIERARCHICAL", "name": "Folder", "externalId": "folder",
                         "dataType": "TEXT"},
                    ],
                    "facets": [
                        {"type": "TAG", "name": "Team", "tagConfig": {"externalId": "team"},
                         "allowMultipleValues": True},
                        {"type": "TAG", "name": "Folder", "tagConfig": {"externalId": "folder"}},
                    ],
                },
                {
                    "name": "Tickets", "externalId": "tickets", "sourceDataType": "STRUCTURED",
                    "fields": [
                        {"name": "title", "contentSelector": "/title", "dataType": "TEXT"},
                        {"name": "body", "contentSelector": "/body", "dataType": "TEXT"},
                    ],
                    "templates": {"titleTemplate": "${f_title}",
                                  "externalUrlTemplate": "https://tickets.example.com/${f_title}",
                                  "searchTemplate": "${f_title} ${f_body}"},
                },
            ]}},
        },
    }
    src = record("createSource", api.post(u("/sources"), json=source_body), source_body).json()
    s = src["id"]
    files, tickets = src["sourceObjectTypes"][0], src["sourceObjectTypes"][1]
    f, t = files["id"], tickets["id"]
    folder_tag = files["tagConfigs"][1]["id"]
    folder_facet = files["facets"][1]["id"]
    record("listSources", api.get(u("/sources")))
    record("getSource", api.get(u(f"/sources/{s}")), params={"sourceId": s})
    body = {"name": "Team drive (2026)"}
    record("updateSource", api.patch(u(f"/sources/{s}"), json=body), body, {"sourceId": s})
    body = {"name": "Notes", "externalId": "notes", "sourceDataType": "RECORD"}
    record("addObjectType", api.post(u(f"/sources/{s}/objecttypes"), json=body), body, {"sourceId": s})
    notes = api.get(u(f"/sources/{s}")).json()["sourceObjectTypes"][-1]["id"]
    body = {"completeMaxRemoval": 20}
    record("updateObjectType", api.patch(u(f"/sources/{s}/objecttypes/{notes}"), json=body), body,
           {"sourceId": s, "objectTypeId": notes})
    body = {"type": "SIMPLE", "name": "Language", "externalId": "lang", "dataType": "TEXT"}
    record("addTagConfig", api.post(u(f"/sources/{s}/objecttypes/{f}/tagconfigs"), json=body), body,
           {"sourceId": s, "objectTypeId": f})
    body = {"type": "TAG", "name": "Language", "tagConfig": {"externalId": "lang"}}
    record("addFacet", api.post(u(f"/sources/{s}/objecttypes/{f}/facets"), json=body), body,
           {"sourceId": s, "objectTypeId": f})

    hier = f"/sources/{s}/tagconfigs/{folder_tag}/hierarchies"
    api.put(u(f"{hier}/finance"), json={"name": "Finance"}).raise_for_status()
    body = {"name": "2026", "parentExternalId": "finance"}
    record("putFolder", api.put(u(f"{hier}/finance-2026"), json=body), body,
           {"sourceId": s, "tagConfigId": folder_tag, "externalId": "finance-2026"})

    syncs = f"/sources/{s}/objecttypes/{f}/syncs"
    body = {"operation": "START_INITIAL"}
    n = record("openSync", api.post(u(syncs), json=body), body, {"sourceId": s, "objectTypeId": f}).json()[
        "syncNumber"]
    obj = f"/sources/{s}/objecttypes/{f}/objects/report-q3"
    query = {"syncNumber": n, "externalChecksum": "etag-7f3a", "externalUrl": "https://drive.example.com/d/report-q3"}
    resp = api.put(u(f"{obj}/file"), params=query,
                   headers={"X-Service-Object-Tag": "team:finance"},
                   files={"file": ("Q3 report.txt", b"Quarterly sales report: revenue grew 12% in the third quarter.")})
    record("uploadFile", resp, params={"sourceId": s, "objectTypeId": f, "externalId": "report-q3",
                                       "X-Service-Object-Tag": "team:finance", **query})
    api.put(u(f"/sources/{s}/objecttypes/{f}/objects/budget-2026/file"), params={"syncNumber": n},
            headers={"X-Service-Object-Tag": "folder:finance-2026"},
            files={"file": ("Budget 2026.txt", b"Budget for 2026.")}).raise_for_status()
    ticket = {"title": "Printer on floor 3 is jammed", "body": "Paper jam in tray 2 since Monday."}
    record("pushContent", api.put(u(f"/sources/{s}/objecttypes/{t}/objects/T-1042/content"), json=ticket), ticket,
           {"sourceId": s, "objectTypeId": t, "externalId": "T-1042"})
    record("getMetadata", api.get(u(f"{obj}/metadata")), params={"sourceId": s, "objectTypeId": f,
                                                                  "externalId": "report-q3"})
    record("downloadFile", api.get(u(f"{obj}/file")), params={"sourceId": s, "objectTypeId": f,
                                                               "externalId": "report-q3"})
    body = {"format": "text", "sourceId": s, "all": True}
    job = record("createReextraction", api.post(u("/reextractions"), json=body), body).json()
    for _ in range(200):
        if api.get(u(f"/reextractions/{job['id']}")).json()["state"] == "DONE":
            break
        time.sleep(0.05)
    record("getReextraction", api.get(u(f"/reextractions/{job['id']}")), params={"jobId": job["id"]})
    record("listReextractions", api.get(u("/reextractions")))
    record("cancelReextraction", api.delete(u(f"/reextractions/{job['id']}")), params={"jobId": job["id"]})
    record("touchObject", api.put(u(obj), params={"syncNumber": n}, headers={"If-Match": '"etag-7f3a"'}),
           params={"sourceId": s, "objectTypeId": f, "externalId": "report-q3", "syncNumber": n,
                   "If-Match": '"etag-7f3a"'})
    record("getObject", api.get(u(obj)), params={"sourceId": s, "objectTypeId": f, "externalId": "report-q3"})
    ot = {"sourceId": s, "objectTypeId": f}
    batch = f"/sources/{s}/objecttypes/{f}/batch"
    body = {"externalIds": ["report-q3", "budget-2026", "minutes-0412"]}
    record("batchMetadata", api.post(u(f"{batch}/metadata"), json=body), body, ot)
    body = {"syncNumber": n, "objects": [{"externalId": "report-q3", "ifMatch": "etag-7f3a"},
                                         {"externalId": "budget-2026"},
                                         {"externalId": "minutes-0412"}]}
    record("batchTouch", api.post(u(f"{batch}/touch"), json=body), body, ot)
    members = {"members": ["user:ada@example.com", "group:finance-leads"]}
    record("putGroup", api.put(u(f"/sources/{s}/groups/finance"), json=members), members,
           {"sourceId": s, "groupId": "finance"})
    api.put(u(f"/sources/{s}/groups/finance-leads"), json={"members": ["user:grace@example.com"]}) \
        .raise_for_status()
    groups = {"limit": 10}
    record("listGroups", api.get(u(f"/sources/{s}/groups"), params=groups),
           params={"sourceId": s, **groups})
    body = {"access": ["group:finance", "user:grace@example.com"]}
    record("putAccess", api.put(u(f"{obj}/access"), json=body), body,
           {"sourceId": s, "objectTypeId": f, "externalId": "report-q3"})
    record("getAccess", api.get(u(f"{obj}/access")),
           params={"sourceId": s, "objectTypeId": f, "externalId": "report-q3"})
    body = {"objects": [{"externalId": "budget-2026", "access": ["group:finance"]},
                        {"externalId": "report-q3", "access": None},
                        {"externalId": "minutes-0412", "access": ["everyone"]}]}
    record("batchAccess", api.post(u(f"{batch}/access"), json=body), body, ot)
    api.put(u(f"/sources/{s}/groups/interns"), json={"members": []}).raise_for_status()
    record("deleteGroup", api.delete(u(f"/sources/{s}/groups/interns")),
           params={"sourceId": s, "groupId": "interns"})
    listing = {"limit": 2}
    record("listObjects", api.get(u(f"/sources/{s}/objecttypes/{f}/objects"), params=listing),
           params={**ot, **listing})
    feed = {"limit": 100}
    record("listChanges", api.get(u("/changes"), params=feed), params=feed)
    body = {"operation": "COMPLETE"}
    record("closeSync", api.put(u(f"{syncs}/{n}"), json=body), body,
           {"sourceId": s, "objectTypeId": f, "syncNumber": n})
    record("getSync", api.get(u(f"{syncs}/{n}")), params={"sourceId": s, "objectTypeId": f, "syncNumber": n})
    record("listSyncs", api.get(u(syncs)), params={"sourceId": s, "objectTypeId": f})

    q = {"q": "quarterly report"}
    deadline = time.time() + 5
    while True:
        resp = api.get(u("/search"), params=q)
        if resp.json().get("results") or time.time() > deadline:
            break
        time.sleep(0.1)
    record("search", resp, params=q)
    facets = f"/sources/{s}/facets/{folder_facet}/hierarchies"
    record("listRootFolders", api.get(u(facets)), params={"sourceId": s, "facetId": folder_facet})
    record("listChildFolders", api.get(u(f"{facets}/finance/children")),
           params={"sourceId": s, "facetId": folder_facet, "externalId": "finance"})

    api.put(u(f"{hier}/archive"), json={"name": "Archive"}).raise_for_status()
    record("deleteFolder", api.delete(u(f"{hier}/archive")),
           params={"sourceId": s, "tagConfigId": folder_tag, "externalId": "archive"})
    record("deleteObject", api.delete(u(obj)), params={"sourceId": s, "objectTypeId": f, "externalId": "report-q3"})
    body = {"externalIds": ["budget-2026", "report-q3"]}
    record("batchDelete", api.post(u(f"{batch}/delete"), json=body), body, ot)
    # A webhook (to a closed local port: the example server allows loopback targets) hears of
    # the next source.
    body = {"url": "http://127.0.0.1:9/inlet-hooks", "events": ["source.created", "sync.completed"]}
    hook = record("createWebhook", api.post(u("/webhooks"), json=body), body).json()
    stable.secrets[hook["secret"]] = "whsec_example_signing_secret"
    record("listWebhooks", api.get(u("/webhooks")))
    old = api.post(u("/sources"), json={**source_body, "externalId": "old-drive"}).json()["id"]
    time.sleep(0.5)
    record("listWebhookDeliveries", api.get(u(f"/webhooks/{hook['id']}/deliveries")),
           params={"webhookId": hook["id"]})
    record("deleteWebhook", api.delete(u(f"/webhooks/{hook['id']}")), params={"webhookId": hook["id"]})
    record("deleteSource", api.delete(u(f"/sources/{old}")), params={"sourceId": old})

    body = {"name": "Acme Reports", "description": "Builds weekly reports from your team drive.",
            "bottomDescription": "You can revoke access at any time.",
            "redirectUris": [REDIRECT], "scopes": ["default", "read:*"]}
    client = record("createOAuthClient", api.post(u("/oauthclients"), json=body), body).json()
    c, secret = client["clientId"], client["clientSecret"]
    stable.secrets[secret] = "cs_example_client_secret"
    record("listOAuthClients", api.get(u("/oauthclients")))
    record("getOAuthClient", api.get(u(f"/oauthclients/{c}")), params={"clientId": c})
    body = {**body, "description": "Builds weekly and monthly reports from your team drive."}
    record("updateOAuthClient", api.put(u(f"/oauthclients/{c}"), json=body), body, {"clientId": c})
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    from conftest import make_png  # the third-party tests' generated PNG

    record("uploadOAuthClientLogo",
           api.post(u(f"/oauthclients/{c}/logoUrl"), files={"logo": ("logo.png", make_png(), "image/png")}),
           params={"clientId": c})

    record("listApiTokens", api.get(u("/apitokens")))
    new = record("createApiToken", api.post(u("/apitokens"))).json()
    stable.secrets[new["apiToken"] if "apiToken" in new else new.get("token", "")] = "at_example_api_token"
    record("revokeApiToken", api.delete(u(f"/apitokens/{new['id']}")), params={"tokenId": new["id"]})

    # The OAuth2 flow as a browser and an application run it.
    fields, code, verifier = approve(base, EMAIL, PASSWORD, c, REDIRECT)
    stable.secrets[code] = "ac_example_authorization_code"
    stable.secrets[verifier] = "example-pkce-code-verifier-0123456789abcdefghijklmnopqrstuvwx"
    examples["authorize"] = {"status": "303", "parameters": {**fields, "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}}
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
            "code_verifier": verifier, "client_id": c, "client_secret": secret}
    tokens = record("token", requests.post(f"{base}/oauth/token", data=form), form).json()
    stable.secrets[tokens["access_token"]] = "oa_example_access_token"
    stable.secrets[tokens["refresh_token"]] = "or_example_refresh_token"
    form = {"token": tokens["access_token"], "client_id": c, "client_secret": secret}
    record("introspectToken", requests.post(f"{base}/oauth/introspect", data=form), form)
    form = {"token": tokens["refresh_token"], "token_type_hint": "refresh_token", "client_id": c,
            "client_secret": secret}
    record("revokeToken", requests.post(f"{base}/oauth/revoke", data=form), form)
    record("authorizationServerMetadata", requests.get(f"{base}/.well-known/oauth-authorization-server"))
    record("deleteOAuthClient", api.delete(u(f"/oauthclients/{c}")), params={"clientId": c})

    out = stable.walk(examples)
    # The server's own address varies; examples show the documented default.
    text = json.dumps(out, indent=2, ensure_ascii=False).replace(base, "http://127.0.0.1:8080")
    OUT.write_text(text + "\n")
    print(f"wrote {len(out)} operations' examples to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
