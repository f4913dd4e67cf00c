"""Schemathesis hooks: generated requests made to follow the rules that span several fields.

The document states every rule one field can carry (lengths, patterns, enums, formats). A few
rules tie fields together and JSON Schema cannot say them: a facet names a tag of the same
object type, templates name declared fields, a RECORD type has the fixed fields title, url and
content, ids are unique within their list, an OAuth client authenticates one way at a time.
Random data that ignores them is refused before it reaches the core, and schemathesis warns
"schema validation mismatch". These hooks repair *positive* cases (data the document calls
valid) so they satisfy those rules too; negative cases stay as generated, so refusals are still
tested. Each repair is one of the rules the server states in its refusal and the operation's
description. Loaded through SCHEMATHESIS_HOOKS by schemathesis.sh.
"""

import ipaddress
import json
import os
import secrets
import re
import uuid

import schemathesis
from schemathesis import GenerationMode

RECORD_FIELDS = ("title", "url", "content")
SCOPES = ("default", "*:*", "read:*")


def _line(value, fallback):
    """A non-blank one-line string (what the server's name and id rules accept)."""
    if isinstance(value, str) and value.strip():
        return value
    return fallback


def _unique(items, key, make):
    """Makes `item[key]` unique and non-blank across `items`."""
    seen = set()
    for i, item in enumerate(items):
        value = _line(item.get(key), f"{make}{i}")
        while value in seen:
            value = f"{value}-{i}"
        item[key] = value
        seen.add(value)


def _object_type(ot, index):
    """One object type that the source rules accept."""
    ot["externalId"] = _line(ot.get("externalId"), f"type{index}")
    ot["name"] = _line(ot.get("name"), f"Type {index}")
    fields = [f for f in ot.get("fields") or [] if isinstance(f, dict)]
    if ot.get("sourceDataType") == "RECORD":
        ot.pop("templates", None)
        kept, seen = [], set()
        for f in fields:
            if f.get("name") in RECORD_FIELDS and f["name"] not in seen:
                seen.add(f["name"])
                kept.append(f)
        fields = kept
    else:
        _unique(fields, "name", "field")
        for f in fields:
            f["contentSelector"] = "/" + re.sub(r"[~/]", "_", f["name"])[:1000]
        names = [f["name"] for f in fields]
        if names and all(re.fullmatch(r"[A-Za-z0-9_]+", n) for n in names):
            reference = "${f_" + names[0] + "!}"
            ot["templates"] = {"titleTemplate": reference, "searchTemplate": reference}
        else:
            ot.pop("templates", None)
    ot["fields"] = fields
    tags = [t for t in ot.get("tagConfigs") or [] if isinstance(t, dict)]
    for t in tags:
        t["externalId"] = _line(str(t.get("externalId", "")).replace(":", "_"), "tag")
    _unique(tags, "externalId", "tag")
    ot["tagConfigs"] = tags
    facets = [f for f in ot.get("facets") or [] if isinstance(f, dict)]
    if not tags:
        facets = []
    for i, facet in enumerate(facets):
        tag = tags[i % len(tags)]
        facet["tagConfig"] = {"externalId": tag["externalId"]}
        if tag.get("dataType") != "DATE_TIME":
            facet.pop("targetType", None)
    ot["facets"] = facets


def _create_source(case):
    body = case.body
    if not isinstance(body, dict):
        return
    # Unique per workspace: a repeat would be a (documented) 409, not a test of the core.
    body["externalId"] = f"st-{uuid.uuid4()}"
    config = body.get("config")
    if not isinstance(config, dict):
        return
    app = ((config.get("specification") or {}).get("application") or {})
    types = [t for t in app.get("objectTypes") or [] if isinstance(t, dict)]
    if not types:
        types = [{"name": "Files", "externalId": "files", "sourceDataType": "RECORD"}]
    for i, ot in enumerate(types):
        _object_type(ot, i)
    _unique(types, "externalId", "type")
    app["objectTypes"] = types


def _add_object_type(case):
    if isinstance(case.body, dict):
        _object_type(case.body, 0)
        # Unique within the fixture source.
        case.body["externalId"] = f"st-{uuid.uuid4()}"


def _add_tag_config(case):
    if isinstance(case.body, dict):
        # Unique within the object type: a repeat is a (documented) 409, and once the first
        # generated externalId is taken every later positive case would repeat it.
        case.body["externalId"] = f"st-{uuid.uuid4()}"


def _add_facet(case):
    if isinstance(case.body, dict):
        # The fixture object type's SIMPLE TEXT tag (schemathesis_fixtures.py).
        case.body["tagConfig"] = {"externalId": "team"}
        case.body.pop("targetType", None)


def _without_nul(value):
    # The body's description: no string or key holds NUL, at any depth (OpenAPI 3.0 has no
    # keyword for keys, and a recursive schema for values breaks generators).
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [_without_nul(v) for v in value]
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    return value


def _push_content(case):
    # The fixture STRUCTURED type reads /title; any JSON object is a record.
    if not isinstance(case.body, dict):
        case.body = {"title": str(case.body)[:200]}
    case.body = _without_nul(case.body)
    # It has no tags: any tag header would name a tag it does not have (404).
    for name in list(case.headers or {}):
        if name.lower() == "x-service-object-tag":
            del case.headers[name]


TOKEN_FIELDS = {"grant_type", "code", "redirect_uri", "scope", "refresh_token", "code_verifier"}
LOOKUP_FIELDS = {"token", "token_type_hint"}


def _fixtures():
    path = os.environ.get("INLET_ST_FIXTURES")
    if not path or not os.path.exists(path):
        return {}
    with open(path) as fh:
        return json.load(fh)


def _client_form(case):
    # The client authenticates with HTTP Basic (the config's header): a client_secret beside
    # it would be a second method (RFC 6749 2.3), a different client_id another client.
    if isinstance(case.body, dict):
        known = TOKEN_FIELDS if "grant_type" in case.body else LOOKUP_FIELDS
        for key in list(case.body):
            if key not in known:
                del case.body[key]


def _token(case):
    _client_form(case)
    # A code cannot be guessed and is single-use: the valid request a generator can make is
    # the refresh grant with the fixtures' refresh token (refresh tokens do not rotate).
    refresh = _fixtures().get("refresh_token")
    if isinstance(case.body, dict) and refresh:
        scope = case.body.get("scope")
        case.body.clear()
        case.body.update({"grant_type": "refresh_token", "refresh_token": refresh})
        if scope in ("read:*",):
            case.body["scope"] = scope


def _authorize(case):
    query = case.query or {}
    if query.get("scope") not in SCOPES:
        query["scope"] = "default"
    challenge = query.get("code_challenge")
    if not (isinstance(challenge, str) and re.fullmatch(r"[A-Za-z0-9._~-]{43,128}", challenge)):
        query.pop("code_challenge", None)
        query.pop("code_challenge_method", None)
    elif "code_challenge_method" in query:
        query["code_challenge_method"] = "S256"
    case.query = query


def _upload_file(case):
    # The parts beside `file` are ignored, but a part name must be a header-safe line; tags
    # must be the object type's (uploads without tags are valid).
    if isinstance(case.body, dict):
        for key in list(case.body):
            if key != "file" and not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", key):
                del case.body[key]
    for name in list(case.headers or {}):
        if name.lower() == "x-service-object-tag":
            del case.headers[name]


# A 1x1 transparent PNG: the logo endpoint reads the image type from the bytes.
PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f"
    "15c4890000000d49444154789c63f8cfc0f01f00050001ffa5f7a3d60000000049454e44ae426082"
)
IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"RIFF")


def _upload_logo(case):
    # The logo must be an image by its bytes (PNG, JPEG, GIF, WebP), the only part.
    if isinstance(case.body, dict):
        logo = case.body.get("logo")
        data = getattr(logo, "data", logo)
        if not (isinstance(data, (bytes, bytearray)) and bytes(data).startswith(IMAGE_MAGIC)):
            data = PNG_1X1
        case.body.clear()
        case.body["logo"] = data


def _touch(case):
    # If-Match must equal the stored checksum (else 412, the documented precondition failure);
    # without it a touch of an existing record succeeds.
    for name in list(case.headers or {}):
        if name.lower() == "if-match":
            del case.headers[name]


def _search(case):
    # A cursor must be one the server issued (nextCursor); tag filters must name a tag of the
    # searched object types.
    query = case.query or {}
    query.pop("cursor", None)
    query.pop("tag", None)
    case.query = query


def _list_objects(case):
    # A cursor must be one the server issued (nextCursor).
    query = case.query or {}
    query.pop("cursor", None)
    case.query = query


def _list_changes(case):
    # A cursor must be one the server issued; a long wait would outlast the request timeout.
    query = case.query or {}
    query.pop("cursor", None)
    query.pop("wait", None)
    case.query = query


def _create_webhook(case):
    # The host must resolve to an address the server may deliver to: a closed loopback port
    # (the server runs with --webhook-allow-private), so no name is looked up and nothing leaves
    # the machine.
    if isinstance(case.body, dict):
        case.body["url"] = "http://127.0.0.1:9/st-generated"


def _batch_touch(case):
    # A syncNumber must name the open sync (else 409 for the whole batch, documented); without
    # one the touches join the open sync, if any.
    if isinstance(case.body, dict):
        case.body.pop("syncNumber", None)


REPAIRS = {
    "listObjects": _list_objects,
    "listChanges": _list_changes,
    "createWebhook": _create_webhook,
    "batchTouch": _batch_touch,
    "uploadFile": _upload_file,
    "uploadOAuthClientLogo": _upload_logo,
    "touchObject": _touch,
    "search": _search,
    "createSource": _create_source,
    "addObjectType": _add_object_type,
    "addTagConfig": _add_tag_config,
    "addFacet": _add_facet,
    "pushContent": _push_content,
    "token": _token,
    "revokeToken": _client_form,
    "introspectToken": _client_form,
    "authorize": _authorize,
}


def _repair(case):
    operation_id = getattr(case.operation.definition, "raw", {}).get("operationId")
    repair = REPAIRS.get(operation_id)
    if repair is not None:
        repair(case)


@schemathesis.hook
def before_add_examples(context, examples):
    # The document's examples illustrate each operation with example ids; the repairs make them
    # fit the fixtures' object types as well (a facet over the fixture tag, and so on).
    for case in examples:
        _repair(case)


OAUTH_CLIENT_OPERATIONS = {"token", "revokeToken", "introspectToken"}


@schemathesis.hook
def before_call(context, case, kwargs):
    # Again right before sending: the stateful phase fills parameters from links after the
    # map hooks ran (a created client's id as client_id beside the fixtures' HTTP Basic).
    map_case(context, case)


@schemathesis.hook
def map_case(context, case):
    operation_id = getattr(case.operation.definition, "raw", {}).get("operationId")
    if operation_id in OAUTH_CLIENT_OPERATIONS:
        # Each request from its own address behind the trusted proxy (schemathesis.sh), so the
        # per-address failure limit does not stop the run; the failures still count per
        # (client, address).
        case.headers = dict(case.headers or {})
        case.headers["X-Forwarded-For"] = str(ipaddress.IPv4Address(secrets.randbits(32)))
    if operation_id == "listChanges" and isinstance(case.query, dict):
        # In every mode: a valid `wait` holds the request open that many seconds, past the
        # request timeout; one second still exercises the long poll.
        wait = case.query.get("wait")
        if isinstance(wait, int) and not isinstance(wait, bool) and 1 <= wait <= 30:
            case.query["wait"] = 1
    meta = getattr(case, "meta", None)
    if meta is None or meta.generation.mode != GenerationMode.POSITIVE:
        return case
    _repair(case)
    return case


if os.environ.get("INLET_ST_DEBUG"):

    @schemathesis.hook
    def after_call(context, case, response):
        op = getattr(case.operation.definition, "raw", {}).get("operationId")
        meta = getattr(case, "meta", None)
        positive = meta is not None and meta.generation.mode == GenerationMode.POSITIVE
        if positive and 400 <= response.status_code < 500 and response.status_code not in (401, 403, 404, 409, 429):
            phase = getattr(getattr(meta, "phase", None), "name", "?")
            with open(os.environ["INLET_ST_DEBUG"], "a") as fh:
                fh.write(f"{op} {phase} {response.status_code} xff={(case.headers or {}).get('X-Forwarded-For')} body={str(case.body)[:200]!r} "
                         f"query={str(case.query)[:200]!r} -> {response.text[:200]!r}\n")
