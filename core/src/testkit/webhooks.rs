//! Conformance cases of the webhook store: registrations per workspace, the delivery queue,
//! leases and attempts.

use uuid::Uuid;

use super::{assert_err, key, new_source_in, write};
use crate::{
    Error, RecordStore, TokenStore,
    access::Grantee,
    time::{self, Timestamp},
    token::{Role, User, Workspace},
    webhook::{self, Attempt, ClaimRules, DeliveryState, Event, Subject, Webhook, WebhookStore},
};

fn hook(workspace_id: Uuid, events: &[Event]) -> Webhook {
    Webhook {
        id: Uuid::new_v4(),
        workspace_id,
        url: "https://hooks.example.test/inlet".into(),
        events: events.to_vec(),
        secret: "whsec_test".into(),
        created_date: time::now(),
        owner: None,
    }
}

fn later(t: Timestamp, secs: i64) -> Timestamp {
    t + chrono::TimeDelta::seconds(secs)
}

/// Webhooks are kept per workspace, oldest first; an event is queued once for each webhook of
/// its workspace that receives it; a claim leases what is due so a second claim does not take it
/// until the lease ends; attempts are recorded (retry, delivered, given up); deleting a webhook
/// drops its deliveries; a workspace holds at most [`webhook::MAX_WEBHOOKS`].
pub async fn webhooks_queue_claim_and_record_deliveries<S>(store: &S)
where
    S: WebhookStore + RecordStore + TokenStore,
{
    let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
    let syncs = hook(a, &[Event::SyncCompleted, Event::SyncFailed]);
    store.create_webhook(&syncs).await.unwrap();
    let mut sources = hook(a, &[Event::SourceCreated]);
    sources.created_date = later(sources.created_date, 1);
    store.create_webhook(&sources).await.unwrap();
    let theirs = hook(b, &[Event::SyncCompleted]);
    store.create_webhook(&theirs).await.unwrap();
    assert_eq!(
        store.list_webhooks(a).await.unwrap(),
        [syncs.clone(), sources.clone()]
    );
    assert_eq!(store.list_webhooks(b).await.unwrap(), [theirs]);

    let data = serde_json::json!({"syncNumber": 3});
    let queue = |event| webhook::queue_event(store, store, store, a, event, &data, Subject::Setup);
    let completed = queue(Event::SyncCompleted).await.unwrap();
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0].webhook_id, syncs.id);
    let created = queue(Event::SourceCreated).await.unwrap();
    assert_eq!(created.len(), 1);
    assert!(
        queue(Event::RecordExtractionFailed)
            .await
            .unwrap()
            .is_empty()
    );

    // Claims take what is due, once per lease. (Other cases' deliveries may share the store:
    // only this case's are counted.)
    let ours = |claimed: &[(webhook::Delivery, Webhook)]| {
        let mut ids: Vec<Uuid> = claimed
            .iter()
            .filter(|(d, _)| d.workspace_id == a)
            .map(|(d, _)| d.id)
            .collect();
        ids.sort();
        ids
    };
    let mut both = vec![completed[0].id, created[0].id];
    both.sort();
    let now = time::now();
    let claimed = store
        .claim_deliveries(later(now, 1), later(now, 60), &ClaimRules::any(1000))
        .await
        .unwrap();
    assert_eq!(ours(&claimed), both);
    let (d, w) = claimed
        .iter()
        .find(|(d, _)| d.id == completed[0].id)
        .unwrap();
    assert_eq!(w, &syncs);
    assert_eq!(d.body, completed[0].body);
    assert_eq!(d.state, DeliveryState::Pending);
    assert!(
        ours(
            &store
                .claim_deliveries(later(now, 2), later(now, 60), &ClaimRules::any(1000))
                .await
                .unwrap()
        )
        .is_empty(),
        "leased deliveries were claimed again"
    );
    assert_eq!(
        ours(
            &store
                .claim_deliveries(later(now, 61), later(now, 120), &ClaimRules::any(1000))
                .await
                .unwrap()
        ),
        both,
        "an ended lease frees its deliveries"
    );

    // A failure to retry, a success, and a failure given up.
    let failed = Attempt {
        at: later(now, 61),
        status: Some(500),
        error: Some("the endpoint answered 500".into()),
    };
    let retry_at = later(now, 91);
    store
        .record_attempt(completed[0].id, &failed, Some(retry_at))
        .await
        .unwrap();
    store
        .record_attempt(
            created[0].id,
            &Attempt {
                at: later(now, 61),
                status: Some(204),
                error: None,
            },
            None,
        )
        .await
        .unwrap();
    let listed = store.list_deliveries(a, syncs.id, 10).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].state, DeliveryState::Pending);
    assert_eq!(listed[0].attempts, 1);
    assert_eq!(listed[0].last_status, Some(500));
    assert_eq!(listed[0].next_attempt, Some(retry_at));
    let listed = store.list_deliveries(a, sources.id, 10).await.unwrap();
    assert_eq!(listed[0].state, DeliveryState::Delivered);
    assert_eq!(listed[0].next_attempt, None);
    assert!(
        ours(
            &store
                .claim_deliveries(later(now, 90), later(now, 200), &ClaimRules::any(1000))
                .await
                .unwrap()
        )
        .is_empty(),
        "claimed before its retry time"
    );
    let due = store
        .claim_deliveries(later(now, 92), later(now, 200), &ClaimRules::any(1000))
        .await
        .unwrap();
    assert_eq!(ours(&due), [completed[0].id]);
    store
        .record_attempt(completed[0].id, &failed, None)
        .await
        .unwrap();
    let listed = store.list_deliveries(a, syncs.id, 10).await.unwrap();
    assert_eq!(listed[0].state, DeliveryState::Failed);
    assert_eq!(listed[0].attempts, 2);
    let far = later(now, 10 * 24 * 3600);
    assert!(
        ours(
            &store
                .claim_deliveries(far, later(far, 1), &ClaimRules::any(1000))
                .await
                .unwrap()
        )
        .is_empty()
    );

    // Isolation and deletion.
    assert!(
        store
            .list_deliveries(b, syncs.id, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(!store.delete_webhook(b, syncs.id).await.unwrap());
    assert!(store.delete_webhook(a, syncs.id).await.unwrap());
    assert!(
        store
            .list_deliveries(a, syncs.id, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.list_webhooks(a).await.unwrap(), [sources]);

    // The per-workspace cap.
    let c = Uuid::new_v4();
    for _ in 0..webhook::MAX_WEBHOOKS {
        store
            .create_webhook(&hook(c, &[Event::SyncFailed]))
            .await
            .unwrap();
    }
    assert_err(
        store.create_webhook(&hook(c, &[Event::SyncFailed])).await,
        |e| matches!(e, Error::Conflict(m) if m.contains("at most")),
        "Conflict at the cap",
    );
    // Racing registrations cannot pass the cap together.
    let d = Uuid::new_v4();
    let racing: Vec<Webhook> = (0..webhook::MAX_WEBHOOKS + 3)
        .map(|_| hook(d, &[Event::SyncFailed]))
        .collect();
    let made = futures_util::future::join_all(racing.iter().map(|h| store.create_webhook(h))).await;
    assert_eq!(
        made.iter().filter(|r| r.is_ok()).count(),
        webhook::MAX_WEBHOOKS
    );
    assert_eq!(
        store.list_webhooks(d).await.unwrap().len(),
        webhook::MAX_WEBHOOKS
    );
    // A delivery queued for a webhook deleted meanwhile is removed by the claim that finds it.
    let gone = hook(d, &[Event::SyncFailed]);
    let now = time::now();
    let orphan =
        webhook::Delivery::pending(Uuid::new_v4(), &gone, Event::SyncFailed, "{}".into(), now);
    store
        .queue_deliveries(std::slice::from_ref(&orphan))
        .await
        .unwrap();
    let claimed = store
        .claim_deliveries(
            later(now, 1),
            later(now, 60),
            &ClaimRules {
                skip_workspaces: &[a, b, c],
                ..ClaimRules::any(100)
            },
        )
        .await
        .unwrap();
    assert!(claimed.is_empty(), "{claimed:?}");
    assert!(
        store
            .list_deliveries(d, gone.id, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let after_lease = store
        .claim_due(later(now, 120), later(now, 180), &ClaimRules::any(100))
        .await
        .unwrap();
    assert!(
        after_lease.iter().all(|x| x.id != orphan.id),
        "the orphan was removed, not leased"
    );
}

/// A delivery of `hook` due `due_ms` after `now`.
/// A member's webhook is told of a record only while the member may read it, of a sync only
/// while its object type runs without permissions, of the workspace's setup always; once the
/// member is gone, of nothing. An administrator's webhook is told of everything. A member holds
/// at most [`webhook::MAX_MEMBER_WEBHOOKS`].
pub async fn member_webhooks_hear_only_what_the_member_may_read<S>(store: &S)
where
    S: WebhookStore + RecordStore + TokenStore,
{
    let ws = Workspace {
        id: Uuid::new_v4(),
        name: format!("ws-{}", Uuid::new_v4()),
        oauth_enabled: false,
        created_date: time::now(),
    };
    store.create_workspace(&ws).await.unwrap();
    let member = User {
        id: Uuid::new_v4(),
        workspace_id: ws.id,
        email: format!("m{}@x.test", Uuid::new_v4().simple()),
        role: Role::Member,
        password_hash: "$argon2id$x".into(),
        created_date: time::now(),
    };
    store.create_user(&member).await.unwrap();
    let (_, scope) = new_source_in(store, ws.id).await;
    let mut theirs = write(scope, "theirs", None, None);
    theirs.access = Some(vec![Grantee::User(member.email.to_uppercase())]);
    store.put_record(theirs).await.unwrap();
    let mut hr = write(scope, "hr", None, None);
    hr.access = Some(vec![Grantee::Group("hr".into())]);
    store.put_record(hr).await.unwrap();
    let theirs = store.get_record(&key(scope, "theirs")).await.unwrap();
    let hr = store.get_record(&key(scope, "hr")).await.unwrap();

    let all = Event::ALL;
    let admins = hook(ws.id, &all);
    store.create_webhook(&admins).await.unwrap();
    let mut members = hook(ws.id, &all);
    members.owner = Some(member.id);
    store.create_webhook(&members).await.unwrap();
    let mut orphan = hook(ws.id, &all);
    orphan.owner = Some(Uuid::new_v4());
    store.create_webhook(&orphan).await.unwrap();

    let data = &serde_json::json!({});
    let told = |event, subject| async move {
        let mut hooks: Vec<Uuid> =
            webhook::queue_event(store, store, store, ws.id, event, data, subject)
                .await
                .unwrap()
                .iter()
                .map(|d| d.webhook_id)
                .collect();
        hooks.sort();
        hooks
    };
    let sorted = |mut v: Vec<Uuid>| {
        v.sort();
        v
    };
    let failed = Event::RecordExtractionFailed;
    assert_eq!(
        told(failed, Subject::Record(&theirs)).await,
        sorted(vec![admins.id, members.id])
    );
    assert_eq!(told(failed, Subject::Record(&hr)).await, vec![admins.id]);
    let closed = Event::SyncCompleted;
    let open = Subject::Sync {
        open_to_readers: true,
    };
    let restricted = Subject::Sync {
        open_to_readers: false,
    };
    assert_eq!(
        told(closed, open).await,
        sorted(vec![admins.id, members.id])
    );
    assert_eq!(told(closed, restricted).await, vec![admins.id]);
    assert_eq!(
        told(Event::SourceCreated, Subject::Setup).await,
        sorted(vec![admins.id, members.id])
    );

    let listed = store.list_webhooks(ws.id).await.unwrap();
    assert_eq!(
        listed.iter().find(|w| w.id == members.id).map(|w| w.owner),
        Some(Some(member.id)),
        "the owner is kept"
    );
    let mut quota = listed.clone();
    while quota.iter().filter(|w| w.owner == Some(member.id)).count() < webhook::MAX_MEMBER_WEBHOOKS
    {
        webhook::check_member_quota(&quota, member.id).unwrap();
        quota.push(members.clone());
    }
    assert_err(
        webhook::check_member_quota(&quota, member.id),
        |e| matches!(e, Error::Conflict(_)),
        "Conflict",
    );
}

fn due(hook: &Webhook, now: Timestamp, due_ms: i64) -> webhook::Delivery {
    let at = now + chrono::TimeDelta::milliseconds(due_ms);
    webhook::Delivery::pending(Uuid::new_v4(), hook, Event::SyncCompleted, "{}".into(), at)
}

/// A claim takes every webhook's first due delivery before any webhook's second, at most
/// `per_webhook` of one, none of the `busy` webhooks; delivered and given-up deliveries last
/// tried before the retention are purged, pending ones never.
pub async fn webhook_claims_are_fair_and_done_deliveries_expire(store: &dyn WebhookStore) {
    let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
    let slow = hook(a, &[Event::SyncCompleted]);
    let fast = hook(b, &[Event::SyncCompleted]);
    store.create_webhook(&slow).await.unwrap();
    store.create_webhook(&fast).await.unwrap();
    let now = time::now();
    // Ten of the slow webhook's deliveries due first, then one of the fast webhook's.
    let backlog: Vec<_> = (0..10).map(|i| due(&slow, now, i)).collect();
    let first_of_fast = due(&fast, now, 100);
    store.queue_deliveries(&backlog).await.unwrap();
    store
        .queue_deliveries(std::slice::from_ref(&first_of_fast))
        .await
        .unwrap();
    // Compared as sets: the order a claim answers in is not part of the contract.
    let ids = |claimed: &[(webhook::Delivery, Webhook)]| -> Vec<Uuid> {
        let mut ids: Vec<Uuid> = claimed.iter().map(|(d, _)| d.id).collect();
        ids.sort();
        ids
    };
    let set = |mut v: Vec<Uuid>| {
        v.sort();
        v
    };
    let at = later(now, 1);
    let claimed = store
        .claim_deliveries(
            at,
            later(now, 60),
            &ClaimRules {
                per_webhook: 4,
                ..ClaimRules::any(3)
            },
        )
        .await
        .unwrap();
    assert_eq!(
        ids(&claimed),
        set(vec![backlog[0].id, first_of_fast.id, backlog[1].id]),
        "every webhook's first, then the seconds"
    );
    // At most per_webhook of one webhook; none of a busy one.
    let claimed = store
        .claim_deliveries(
            at,
            later(now, 60),
            &ClaimRules {
                per_webhook: 2,
                ..ClaimRules::any(100)
            },
        )
        .await
        .unwrap();
    assert_eq!(ids(&claimed), set(vec![backlog[2].id, backlog[3].id]));
    assert!(
        store
            .claim_deliveries(
                at,
                later(now, 60),
                &ClaimRules {
                    skip_webhooks: &[slow.id],
                    ..ClaimRules::any(100)
                },
            )
            .await
            .unwrap()
            .is_empty()
    );

    // Between workspaces: c's two webhooks with three due each, d's one; per_workspace 2
    // takes the first of each of c's webhooks and d's, however deep c's backlog.
    let (c, d) = (Uuid::new_v4(), Uuid::new_v4());
    let (c1, c2, d1) = (
        hook(c, &[Event::SyncCompleted]),
        hook(c, &[Event::SyncCompleted]),
        hook(d, &[Event::SyncCompleted]),
    );
    for h in [&c1, &c2, &d1] {
        store.create_webhook(h).await.unwrap();
    }
    let of_c1: Vec<_> = (0..3).map(|i| due(&c1, now, i)).collect();
    let of_c2: Vec<_> = (0..3).map(|i| due(&c2, now, 10 + i)).collect();
    let of_d1 = due(&d1, now, 500);
    store.queue_deliveries(&of_c1).await.unwrap();
    store.queue_deliveries(&of_c2).await.unwrap();
    store
        .queue_deliveries(std::slice::from_ref(&of_d1))
        .await
        .unwrap();
    let claimed = store
        .claim_deliveries(
            at,
            later(now, 60),
            &ClaimRules {
                per_workspace: 2,
                skip_workspaces: &[a, b],
                ..ClaimRules::any(100)
            },
        )
        .await
        .unwrap();
    assert_eq!(
        ids(&claimed),
        set(vec![of_c1[0].id, of_c2[0].id, of_d1.id]),
        "each of c's webhooks once, and d"
    );

    // Retention: done deliveries tried before the cut go, pending and later ones stay.
    let tried = |at: Timestamp, error: Option<&str>| Attempt {
        at,
        status: Some(if error.is_some() { 500 } else { 204 }),
        error: error.map(Into::into),
    };
    store
        .record_attempt(backlog[0].id, &tried(later(now, 1), None), None)
        .await
        .unwrap();
    store
        .record_attempt(first_of_fast.id, &tried(later(now, 1), Some("down")), None)
        .await
        .unwrap();
    store
        .record_attempt(backlog[1].id, &tried(later(now, 100), None), None)
        .await
        .unwrap();
    store
        .record_attempt(
            backlog[2].id,
            &tried(later(now, 1), Some("down")),
            Some(later(now, 30)),
        )
        .await
        .unwrap();
    assert_eq!(store.purge_deliveries(later(now, 50)).await.unwrap(), 2);
    let left: Vec<Uuid> = store
        .list_deliveries(a, slow.id, 100)
        .await
        .unwrap()
        .iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(left.len(), 9, "the delivered one went");
    assert!(left.contains(&backlog[1].id) && left.contains(&backlog[2].id));
    assert!(
        store
            .list_deliveries(b, fast.id, 10)
            .await
            .unwrap()
            .is_empty()
    );
}
