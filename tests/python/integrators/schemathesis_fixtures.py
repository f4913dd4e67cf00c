"""Real data for schemathesis: creates, through the public API of a running server, a source
(RECORD and STRUCTURED object types, a SIMPLE and a HIERARCHICAL tag with facets), records,
folders, closed and open syncs, OAuth2 clients and a refresh token, and writes a
schemathesis.toml that gives each operation ids that exist.

Without it schemathesis reaches almost no write path: random UUIDs answer 404 ("missing test
data"). The document's links let the stateful phase chain ids on its own; these fixtures make
every operation reach its success path in the other phases too. Disposable objects are used
where an operation destroys what it is given (deleteSource, deleteObject, deleteFolder,
deleteOAuthClient), so the rest keep their data.

Usage: schemathesis_fixtures.py BASE_URL EMAIL API_TOKEN PASSWORD OUT.toml
"""

import base64
import json
import sys

import requests

from oauth_flow import approve

REDIRECT = "https://st.example.com/callback"


def main():
    base, email, token, password, out = sys.argv[1:6]
    api = requests.Session()
    api.auth = (email, token)

    def call(method, path, expect=(200, 201, 204), **kw):
        resp = api.request(method, f"{base}/api/v1{path}", **kw)
        assert resp.status_code in expect, f"{method} {path}: {resp.status_code} {resp.text}"
        return resp.json() if resp.content else None

    def source(external_id):
        return call("POST", "/sources", json={
            "definition": {"type": "CUSTOM"},
            "externalId": external_id,
            "config": {"type": "CUSTOM", "name": "Schemathesis drive", "trackStatus": True,
                       "specification": {"application": {"objectTypes": [
                           {"name": "Files", "externalId": "files", "sourceDataType": "RECORD",
                            "tagConfigs": [
                                {"type": "SIMPLE", "name": "Team", "externalId": "team",
                                 "dataType": "TEXT", "allowMultipleValues": True},
                                {"type": "HIERARCHICAL", "name": "Folder", "externalId": "folder",
                                 "dataType": "TEXT"}],
                            "facets": [
                                {"type": "TAG", "name": "Team", "tagConfig": {"externalId": "team"}},
                                {"type": "TAG", "name": "Folder", "tagConfig": {"externalId": "folder"}}]},
                           {"name": "Tickets", "externalId": "tickets", "sourceDataType": "STRUCTURED",
                            "fields": [{"name": "title", "contentSelector": "/title", "dataType": "TEXT"}],
                            # Optional references: any JSON object is a valid record.
                            "templates": {"titleTemplate": "${f_title!}", "searchTemplate": "${f_title!}"}},
                           # The sync operations' own object type: a COMPLETE close there removes
                           # nothing the other operations are given.
                           {"name": "Runs", "externalId": "runs", "sourceDataType": "RECORD"},
                       ]}}}})

    src = source("st-drive")
    disposable_source = source("st-disposable")["id"]
    s = src["id"]
    files, tickets, runs = src["sourceObjectTypes"]
    f, t, r = files["id"], tickets["id"], runs["id"]
    folder_tag, folder_facet = files["tagConfigs"][1]["id"], files["facets"][1]["id"]

    hier = f"/sources/{s}/tagconfigs/{folder_tag}/hierarchies"
    call("PUT", f"{hier}/st-root", json={"name": "Root"})
    call("PUT", f"{hier}/st-child", json={"name": "Child", "parentExternalId": "st-root"})
    call("PUT", f"{hier}/st-empty", json={"name": "Empty"})

    objects = f"/sources/{s}/objecttypes/{f}/objects"
    for external_id in ("st-doc", "st-doomed"):
        call("PUT", f"{objects}/{external_id}/file", params={"externalChecksum": "st-sum"},
             headers={"X-Service-Object-Tag": "folder:st-child"},
             files={"file": (f"{external_id}.txt", b"schemathesis fixture text")})
    syncs = f"/sources/{s}/objecttypes/{r}/syncs"
    closed = call("POST", syncs, json={"operation": "START_INITIAL"})["syncNumber"]
    call("PUT", f"{syncs}/{closed}", json={"operation": "COMPLETE"})
    opened = call("POST", syncs, json={"operation": "START"})["syncNumber"]
    call("PUT", f"/sources/{s}/objecttypes/{t}/objects/st-ticket/content", json={"title": "Fixture"})

    client_body = {"name": "Schemathesis", "description": "Fuzzing client", "redirectUris": [REDIRECT],
                   "scopes": ["default", "read:*"]}
    client = call("POST", "/oauthclients", json=client_body)
    disposable_client = call("POST", "/oauthclients", json=client_body)["clientId"]
    # updateOAuthClient replaces redirect URIs and scopes with generated ones; the client the
    # OAuth operations use must keep its own (a removed redirect URI or narrowed scopes now
    # withdraw access, issue 22).
    changed_client = call("POST", "/oauthclients", json=client_body)["clientId"]
    c, secret = client["clientId"], client["clientSecret"]
    refresh = refresh_token(base, email, password, c, secret)
    client_basic = "Basic " + base64.b64encode(f"{c}:{secret}".encode()).decode()

    # Webhooks to a closed loopback port (the server runs with --webhook-allow-private).
    hook_body = {"url": "http://127.0.0.1:9/st-hook", "events": ["sync.completed", "sync.failed"]}
    hook = call("POST", "/webhooks", json=hook_body)["id"]
    disposable_hook = call("POST", "/webhooks", json=hook_body)["id"]

    record = {"path.sourceId": s, "path.objectTypeId": f, "path.externalId": "st-doc"}
    per_operation = {
        "getSource": {"path.sourceId": s},
        "updateSource": {"path.sourceId": s},
        "deleteSource": {"path.sourceId": disposable_source},
        "addObjectType": {"path.sourceId": s},
        "updateObjectType": {"path.sourceId": s, "path.objectTypeId": t},
        "addTagConfig": {"path.sourceId": s, "path.objectTypeId": f},
        "addFacet": {"path.sourceId": s, "path.objectTypeId": f},
        "openSync": {"path.sourceId": s, "path.objectTypeId": r},
        "listSyncs": {"path.sourceId": s, "path.objectTypeId": r},
        "getSync": {"path.sourceId": s, "path.objectTypeId": r, "path.syncNumber": closed},
        "closeSync": {"path.sourceId": s, "path.objectTypeId": r, "path.syncNumber": opened},
        "uploadFile": {"path.sourceId": s, "path.objectTypeId": f, "path.externalId": "st-upload"},
        "pushContent": {"path.sourceId": s, "path.objectTypeId": t, "path.externalId": "st-ticket"},
        "getMetadata": record,
        "touchObject": record,
        "getObject": record,
        "deleteObject": {**record, "path.externalId": "st-doomed"},
        "batchMetadata": {"path.sourceId": s, "path.objectTypeId": f},
        "batchTouch": {"path.sourceId": s, "path.objectTypeId": f},
        "batchDelete": {"path.sourceId": s, "path.objectTypeId": f},
        "listObjects": {"path.sourceId": s, "path.objectTypeId": f},
        "getAccess": record,
        "putAccess": record,
        "batchAccess": {"path.sourceId": s, "path.objectTypeId": f},
        "putGroup": {"path.sourceId": s},
        "deleteGroup": {"path.sourceId": s},
        "listGroups": {"path.sourceId": s},
        "putFolder": {"path.sourceId": s, "path.tagConfigId": folder_tag, "path.externalId": "st-new"},
        "deleteFolder": {"path.sourceId": s, "path.tagConfigId": folder_tag, "path.externalId": "st-empty"},
        "listRootFolders": {"path.sourceId": s, "path.facetId": folder_facet},
        "listChildFolders": {"path.sourceId": s, "path.facetId": folder_facet, "path.externalId": "st-root"},
        "deleteWebhook": {"path.webhookId": disposable_hook},
        "listWebhookDeliveries": {"path.webhookId": hook},
        "getOAuthClient": {"path.clientId": c},
        "updateOAuthClient": {"path.clientId": changed_client},
        "uploadOAuthClientLogo": {"path.clientId": c},
        "deleteOAuthClient": {"path.clientId": disposable_client},
        "authorize": {"query.client_id": c, "query.redirect_uri": REDIRECT, "query.response_type": "code"},
        # The client authenticates with HTTP Basic (below); a generated client_secret beside it
        # is refused (RFC 6749 2.3: one method), so some cases fail and others succeed.
        "token": {"body.grant_type": "refresh_token", "body.refresh_token": refresh, "body.client_id": c},
        "revokeToken": {"body.client_id": c},
        "introspectToken": {"body.client_id": c},
    }
    # The OAuth2 endpoints authenticate the client, not the user: they get no user credentials.
    client_headers = {"Authorization": client_basic}
    headers = {op: client_headers for op in ("token", "revokeToken", "introspectToken")}

    lines = ["# Written by schemathesis_fixtures.py for one run; ids exist on the server under test.",
             "[warnings]",
             'fail-on = ["missing_test_data"]', ""]
    for op, params in per_operation.items():
        lines.append("[[operations]]")
        lines.append(f"include-operation-id = {json.dumps(op)}")
        lines.append("parameters = { " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in params.items()) + " }")
        if op in headers:
            lines.append("headers = { " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in headers[op].items()) + " }")
        lines.append("")
    with open(out, "w") as fh:
        fh.write("\n".join(lines))
    # What schemathesis_hooks.py needs to repair generated token requests.
    with open(out + ".json", "w") as fh:
        json.dump({"refresh_token": refresh}, fh)
    print(f"fixtures: source {s}, client {c}; config {out}")


def refresh_token(base, email, password, client_id, secret):
    """A refresh token from the authorization-code flow, as a browser and an application run it."""
    _, code, verifier = approve(base, email, password, client_id, REDIRECT, state="st")
    tokens = requests.post(f"{base}/oauth/token", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
        "code_verifier": verifier, "client_id": client_id, "client_secret": secret})
    assert tokens.status_code == 200, tokens.text
    return tokens.json()["refresh_token"]


if __name__ == "__main__":
    main()
