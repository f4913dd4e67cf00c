"""Drives Inlet through the client that openapi-python-client generated from openapi/openapi.json.

Only the generated package (`inlet_client`) talks to the server. Usage:
    python use_client.py BASE_URL EMAIL API_TOKEN
"""
import base64
import inspect
import sys
import uuid

from inlet_client import AuthenticatedClient
from inlet_client.api.changes import list_changes
from inlet_client.api.objects import (
    batch_delete,
    batch_metadata,
    batch_touch,
    get_metadata,
    get_object,
    list_objects,
    touch_object,
    upload_file,
)
from inlet_client.api.webhooks import (
    create_webhook,
    delete_webhook,
    list_webhook_deliveries,
    list_webhooks,
)
from inlet_client.api.sources import create_source
from inlet_client.api.syncs import close_sync, get_sync, open_sync
from inlet_client.models import (
    Application,
    BatchIds,
    BatchMetadataResult,
    BatchResult,
    BatchTouch,
    BatchTouchObject,
    ChangePage,
    ChangeType,
    CreatedWebhookOut,
    RecordPage,
    WebhookIn,
    WebhookInEventsItem,
    CloseOperation,
    CloseSync,
    CreateSource,
    DataType,
    FacetInput,
    FacetType,
    ObjectTypeInput,
    OpenOperation,
    OpenSync,
    RecordMetadata,
    RecordOut,
    SourceConfigInput,
    SourceDataType,
    SourceDefinition,
    SourceKind,
    SourceOut,
    Specification,
    SyncOut,
    SyncState,
    TagConfigInput,
    TagConfigRef,
    TagType,
    UploadFileBody,
)
from inlet_client.types import UNSET, File

failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures += 1


def expect(resp, status, what, model=None):
    ok = resp.status_code == status and (model is None or isinstance(resp.parsed, model))
    check(ok, f"{what}: HTTP {resp.status_code} (want {status})"
          + ("" if ok else f" body={resp.content[:400]!r} parsed={type(resp.parsed).__name__}"))
    if not ok:
        sys.exit(f"{failures} check(s) failed")
    return resp.parsed


def tag_kwargs(values):
    """The upload's tag header as the generated function names it (a list where the
    generator supports one, else a single value)."""
    params = inspect.signature(upload_file.sync_detailed).parameters
    name = next((n for n in params if "object_tag" in n), None)
    if name is None:
        sys.exit("the generated upload function has no X-Service-Object-Tag parameter")
    ann = str(params[name].annotation)
    if "list" in ann or "List" in ann:
        return {name: list(values)}
    if len(values) != 1:
        sys.exit(f"generated tag parameter {name} takes one value ({ann})")
    return {name: values[0]}


def main():
    base_url, email, api_token = sys.argv[1:4]
    basic = base64.b64encode(f"{email}:{api_token}".encode()).decode()
    client = AuthenticatedClient(base_url=base_url, token=basic, prefix="Basic",
                                 raise_on_unexpected_status=False)

    # 1. A custom source, trackStatus true, one RECORD object type with a tag.
    body = CreateSource(
        definition=SourceDefinition(type_=SourceKind.CUSTOM),
        external_id=f"integrators-{uuid.uuid4().hex[:8]}",
        config=SourceConfigInput(
            type_=SourceKind.CUSTOM, name="Integrators drive", track_status=True,
            specification=Specification(application=Application(object_types=[
                ObjectTypeInput(
                    name="Documents", external_id="documents",
                    source_data_type=SourceDataType.RECORD,
                    tag_configs=[TagConfigInput(type_=TagType.SIMPLE, name="Team",
                                                external_id="team", data_type=DataType.TEXT,
                                                allow_multiple_values=True)],
                    facets=[FacetInput(type_=FacetType.TAG, name="Team",
                                       tag_config=TagConfigRef(external_id="team"),
                                       allow_multiple_values=True)],
                )]))))
    src = expect(create_source.sync_detailed(client=client, body=body), 201,
                 "create source", SourceOut)
    check(src.config.track_status is True, "source trackStatus is true")
    check(len(src.source_object_types) == 1, "one object type")
    sid, oid = src.id, src.source_object_types[0].id

    # 2. Open the first sync.
    sync = expect(open_sync.sync_detailed(sid, oid, client=client,
                                          body=OpenSync(operation=OpenOperation.START_INITIAL)),
                  201, "open sync START_INITIAL", SyncOut)
    n = sync.sync_number
    check(sync.state == SyncState.OPEN, f"sync {n} is OPEN")
    check(sync.object_type.current_sync_number == n, "objectType.currentSyncNumber = syncNumber")

    def upload(ext_id, name, data, checksum, tags):
        return upload_file.sync_detailed(
            sid, oid, ext_id, client=client,
            body=UploadFileBody(file=File(payload=data, file_name=name, mime_type="text/plain")),
            sync_number=n, external_url=f"https://files.example/{ext_id}",
            external_checksum=checksum if checksum else UNSET, **tag_kwargs(tags))

    # 3. Upload with a tag and an externalChecksum (new record: 201, version 1).
    rec = expect(upload("doc-a", "Report (final).txt", b"quarterly report alpha\n", "sha-a-1",
                        ["team:alpha"]), 201, "upload doc-a", RecordMetadata)
    check(rec.version == 1, "doc-a version 1")
    check(rec.external_checksum == "sha-a-1", "upload answer carries the checksum")
    check(rec.modified_by.email == email, "modifiedBy.email is the caller")
    rec_b = expect(upload("doc-b", "b.txt", b"second file beta\n", "sha-b-1", ["team:beta"]),
                   201, "upload doc-b", RecordMetadata)
    check(rec_b.version == 1, "doc-b version 1")

    # Same checksum again: only touched, 200 with current metadata, tags of this upload ignored.
    same = expect(upload("doc-a", "other.txt", b"changed bytes", "sha-a-1", ["team:gamma"]),
                  200, "re-upload doc-a with unchanged checksum", RecordMetadata)
    check(same.version == 1, "unchanged checksum keeps version 1")

    # 4. Read back: metadata (checksum) and the whole record (tags, title, url).
    meta = expect(get_metadata.sync_detailed(sid, oid, "doc-a", client=client), 200,
                  "metadata doc-a", RecordMetadata)
    check(meta.external_checksum == "sha-a-1", "metadata externalChecksum = sha-a-1")
    check(meta.id == rec.id and meta.external_id == "doc-a", "metadata id/externalId")
    whole = expect(get_object.sync_detailed(sid, oid, "doc-a", client=client), 200,
                   "record doc-a", RecordOut)
    tags = whole.tags.to_dict()
    check(tags == {"team": ["alpha"]}, f"tags = {{'team': ['alpha']}} (got {tags})")
    check(whole.title == "Report_final_.txt", f"title normalized (got {whole.title!r})")
    check(whole.url == "https://files.example/doc-a", "url = externalUrl")
    check("quarterly report alpha" in whole.content, "content extracted")
    expect(get_metadata.sync_detailed(sid, oid, "never-uploaded", client=client), 404,
           "metadata of an unknown externalId")

    # 5. Touch: with the right If-Match (204), with a wrong one (412), without (204).
    r = touch_object.sync_detailed(sid, oid, "doc-a", client=client, sync_number=n,
                                   if_match='"sha-a-1"')
    expect(r, 204, "touch doc-a with matching If-Match")
    r = touch_object.sync_detailed(sid, oid, "doc-a", client=client, sync_number=n,
                                   if_match='"something-else"')
    expect(r, 412, "touch doc-a with a different If-Match")
    r = touch_object.sync_detailed(sid, oid, "doc-b", client=client, sync_number=n)
    expect(r, 204, "touch doc-b without If-Match")

    # 6. Close COMPLETE and check the counters.
    closed = expect(close_sync.sync_detailed(sid, oid, n, client=client,
                                             body=CloseSync(operation=CloseOperation.COMPLETE)),
                    200, f"close sync {n} COMPLETE", SyncOut)
    check(closed.state == SyncState.COMPLETED, "sync COMPLETED")
    check(closed.close_operation == CloseOperation.COMPLETE, "closeOperation COMPLETE")
    counters = dict(uploaded=closed.uploaded, unchanged=closed.unchanged, touched=closed.touched,
                    extraction_failures=closed.extraction_failures, removed=closed.removed,
                    kept=closed.kept)
    want = dict(uploaded=2, unchanged=1, touched=2, extraction_failures=0, removed=0, kept=2)
    check(counters == want, f"sync {n} counters {counters} == {want}")
    again = expect(get_sync.sync_detailed(sid, oid, n, client=client), 200, "get sync", SyncOut)
    check(again.to_dict() == closed.to_dict(), "get sync answers what close answered")

    # 7. A later full sync that only re-uploads doc-a removes doc-b.
    s2 = expect(open_sync.sync_detailed(sid, oid, client=client,
                                        body=OpenSync(operation=OpenOperation.START)),
                201, "open sync START", SyncOut)
    n = s2.sync_number
    up = expect(upload("doc-a", "Report (final).txt", b"quarterly report alpha v2\n", "sha-a-2",
                       ["team:alpha", ]), 200, "upload doc-a with a new checksum",
                RecordMetadata)
    check(up.version == 2, "doc-a version 2")
    closed2 = expect(close_sync.sync_detailed(sid, oid, n, client=client,
                                              body=CloseSync(operation=CloseOperation.COMPLETE)),
                     200, f"close sync {n} COMPLETE", SyncOut)
    c2 = dict(uploaded=closed2.uploaded, unchanged=closed2.unchanged, touched=closed2.touched,
              removed=closed2.removed, kept=closed2.kept)
    w2 = dict(uploaded=1, unchanged=0, touched=0, removed=1, kept=1)
    check(c2 == w2, f"sync {n} counters {c2} == {w2}")
    gone = expect(get_metadata.sync_detailed(sid, oid, "doc-b", client=client), 200,
                  "metadata of removed doc-b", RecordMetadata)
    check(gone.external_checksum is UNSET, "removed record has no externalChecksum")
    # A removed record cannot be touched (404) in the next sync; FAIL then removes nothing.
    s3 = expect(open_sync.sync_detailed(sid, oid, client=client,
                                        body=OpenSync(operation=OpenOperation.START)),
                201, "open sync START (third)", SyncOut)
    expect(touch_object.sync_detailed(sid, oid, "doc-b", client=client,
                                      sync_number=s3.sync_number), 404, "touch removed doc-b")
    failed = expect(close_sync.sync_detailed(sid, oid, s3.sync_number, client=client,
                                             body=CloseSync(operation=CloseOperation.FAIL)),
                    200, "close third sync FAIL", SyncOut)
    check(failed.state == SyncState.FAILED and failed.removed == 0,
          f"FAIL removes nothing (state {failed.state}, removed {failed.removed})")
    still = expect(get_metadata.sync_detailed(sid, oid, "doc-a", client=client), 200,
                   "metadata doc-a after FAIL", RecordMetadata)
    check(still.external_checksum == "sha-a-2" and still.version == 2, "doc-a kept at version 2")

    # 6. Many records per request, the listing, the change feed and webhooks (issue 17).
    meta = expect(batch_metadata.sync_detailed(sid, oid, client=client,
                                               body=BatchIds(external_ids=["doc-a", "nope"])),
                  200, "batch metadata", BatchMetadataResult)
    check([(i.external_id, i.status) for i in meta.items] == [("doc-a", 200), ("nope", 404)],
          "batch metadata answers per item, in order")
    check(meta.items[0].record.version == 2, "batch metadata carries the record")
    touched = expect(batch_touch.sync_detailed(sid, oid, client=client, body=BatchTouch(
        objects=[BatchTouchObject(external_id="doc-a", if_match="sha-a-2"),
                 BatchTouchObject(external_id="doc-a", if_match="other")])),
        200, "batch touch", BatchResult)
    check([i.status for i in touched.items] == [204, 412], "batch touch: 204 then 412")
    page = expect(list_objects.sync_detailed(sid, oid, client=client, limit=10), 200,
                  "list objects", RecordPage)
    check([o.external_id for o in page.objects] == ["doc-a"], "the listing holds doc-a")
    feed = expect(list_changes.sync_detailed(client=client, source_id=sid), 200,
                  "change feed", ChangePage)
    upserts = {c.external_id: c.record.version for c in feed.changes if c.type_ == ChangeType.UPSERT}
    check(upserts == {"doc-a": 2}, f"the feed's snapshot is doc-a v2 (got {upserts})")
    hook = expect(create_webhook.sync_detailed(client=client, body=WebhookIn(
        url="http://127.0.0.1:9/hooks", events=[WebhookInEventsItem.SYNC_FAILED])),
        201, "create webhook", CreatedWebhookOut)
    check(hook.secret.startswith("whsec_"), "the webhook's secret is shown once")
    hooks = expect(list_webhooks.sync_detailed(client=client), 200, "list webhooks")
    check([h.id for h in hooks] == [hook.id], "the webhook is listed")
    expect(list_webhook_deliveries.sync_detailed(hook.id, client=client), 200, "deliveries")
    expect(delete_webhook.sync_detailed(hook.id, client=client), 204, "delete webhook")
    deleted = expect(batch_delete.sync_detailed(sid, oid, client=client,
                                                body=BatchIds(external_ids=["doc-a"])),
                     200, "batch delete", BatchResult)
    check([i.status for i in deleted.items] == [204], "batch delete: 204")
    after = expect(list_changes.sync_detailed(client=client, cursor=feed.cursor, wait=2), 200,
                   "change feed after the delete", ChangePage)
    check([(c.type_, c.external_id) for c in after.changes] == [(ChangeType.REMOVE, "doc-a")],
          "the feed gives the delete as a REMOVE")

    if failures:
        sys.exit(f"{failures} check(s) failed")
    print("use_client: all checks passed")


if __name__ == "__main__":
    main()
