//! Sends the webhook deliveries queued in the store (`inlet_core::webhook`): signs each body as
//! Stripe does (`Inlet-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`),
//! refuses loopback and private-range targets (checked on the addresses the host resolves to at
//! each delivery, then connected to exactly those addresses, so DNS cannot swap them), bounds
//! every request in time and size, and records each attempt with its next try.

use std::{
    collections::HashMap,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    sync::Arc,
    time::Duration,
};

use hmac::{Hmac, Mac};
use inlet_core::{
    WorkspaceId,
    time::{self},
    webhook::{self, Attempt, Delivery, Event, Subject, Webhook},
};
use sha2::Sha256;
use uuid::Uuid;

use crate::state::AppState;

/// Deliveries sent at once by one replica.
pub const CONCURRENCY: usize = 256;
/// Deliveries of one webhook sent at once by one replica: a claim skips a webhook with
/// deliveries still in flight and takes at most these of one.
pub const PER_WEBHOOK: usize = 8;
/// Deliveries of one workspace a claim takes at most; a workspace with this many in flight is
/// skipped, so one holds under twice this many of the sender's slots (slow endpoints delay
/// only their own workspace's deliveries).
pub const PER_WORKSPACE: usize = 32;
/// HTTP clients kept for reuse (one per endpoint host and its checked addresses), so
/// deliveries to one endpoint share pooled connections.
const KEPT_CLIENTS: usize = 256;
/// How long a claimed delivery is this replica's before another may try it.
pub const LEASE: Duration = Duration::from_secs(60);
/// Time to resolve a host and to connect.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Time for a whole delivery request, answer included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Bytes of an endpoint's answer read (the rest is dropped).
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// How often the queue is looked at when nothing wakes the sender.
const TICK: Duration = Duration::from_secs(1);

/// `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the secret>`.
pub fn signature(secret: &str, unix_seconds: i64, body: &str) -> String {
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        Ok(m) => m,
        // HMAC takes keys of any length; this arm is never taken.
        Err(_) => return format!("t={unix_seconds},v1="),
    };
    mac.update(unix_seconds.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    format!(
        "t={unix_seconds},v1={}",
        hex::encode(mac.finalize().into_bytes())
    )
}

/// Whether an address is loopback, private, link-local or otherwise not on the public internet
/// (IPv4-mapped, IPv4-translated, NAT64 and 6to4 IPv6 addresses are judged by the IPv4 address
/// they carry; local-use NAT64, Teredo and the discard prefix are never public).
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => private_v4(v4),
        IpAddr::V6(v6) => private_v6(v6),
    }
}

fn private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || a >= 240
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19))
}

fn private_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    if let Some(v4) = ip.to_ipv4_mapped() {
        return private_v4(v4);
    }
    let embedded =
        |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return private_v4(embedded(s[6], s[7]));
    }
    // IPv4-translated (SIIT, ::ffff:0:a.b.c.d) carries an IPv4 address as mapped ones do.
    if s[..4] == [0, 0, 0, 0] && s[4] == 0xffff && s[5] == 0 {
        return private_v4(embedded(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return private_v4(embedded(s[1], s[2]));
    }
    ip.is_loopback()
        // NAT64 for local use (64:ff9b:1::/48): translates to whatever the network decides.
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1)
        // Teredo (2001::/32) tunnels to an IPv4 address it hides; the discard prefix 100::/64.
        || (s[0] == 0x2001 && s[1] == 0)
        || s[..4] == [0x100, 0, 0, 0]
        || ip.is_unspecified()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00
        || (s[0] & 0xffc0) == 0xfe80
        || (s[0] & 0xffc0) == 0xfec0
        || (s[0] == 0x2001 && s[1] == 0x0db8)
        || s[..6] == [0, 0, 0, 0, 0, 0]
}

/// The addresses `url`'s host resolves to, refused when one is private and `allow_private` is
/// off. The error says why, in words for the administrator.
pub async fn vetted_addresses(
    url: &reqwest::Url,
    allow_private: bool,
) -> Result<Vec<SocketAddr>, String> {
    let host = url
        .host_str()
        .ok_or_else(|| "the URL has no host".to_string())?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| "the URL has no port".to_string())?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::lookup_host((bare, port)))
            .await
            .map_err(|_| format!("resolving {host} took over {CONNECT_TIMEOUT:?}"))?
            .map_err(|_| format!("{host} does not resolve"))?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(format!("{host} does not resolve"));
    }
    if !allow_private && let Some(bad) = addrs.iter().find(|a| is_private(a.ip())) {
        return Err(format!(
            "{host} resolves to {}, a loopback or private address; the operator allows such \
             targets with --webhook-allow-private",
            bad.ip()
        ));
    }
    Ok(addrs)
}

/// Queues `event` about `subject` for the workspace's webhooks that may hear of it and wakes
/// the sender. A failure to queue is logged, not the caller's: the write it reports has been
/// answered already.
pub async fn emit(
    state: &AppState,
    workspace_id: WorkspaceId,
    event: Event,
    data: serde_json::Value,
    subject: Subject<'_>,
) {
    let queued = webhook::queue_event(
        &*state.webhooks,
        &*state.records,
        &*state.tokens,
        workspace_id,
        event,
        &data,
        subject,
    )
    .await;
    match queued {
        Ok(queued) if !queued.is_empty() => state.webhook_wake.notify_one(),
        Ok(_) => {}
        Err(e) => {
            tracing::warn!(error = %e, event = event.name(), "queuing a webhook event failed")
        }
    }
}

/// Starts the sender of this state's queue, and the purge of old deliveries.
pub fn start(state: &AppState) {
    let sender = state.clone();
    tokio::spawn(async move { run(sender).await });
    let purger = state.clone();
    tokio::spawn(async move { purge(purger).await });
}

/// Sends what is due, fairly: up to [`CONCURRENCY`] deliveries at once, at most
/// [`PER_WEBHOOK`] of one webhook and under twice [`PER_WORKSPACE`] of one workspace (a claim
/// skips webhooks with deliveries in flight and workspaces at their share, and takes every
/// workspace's and webhook's first due before any second: `webhook::ClaimRules`).
/// Each delivery runs as its own task, so a slow endpoint holds only its own slots; a finished
/// delivery makes room for the next claim at once.
async fn run(state: AppState) {
    let clients = Arc::new(Clients::default());
    let mut running = tokio::task::JoinSet::new();
    // Per task: its webhook and workspace; per webhook and per workspace: deliveries in flight.
    let mut task_hook: HashMap<tokio::task::Id, (Uuid, WorkspaceId)> = HashMap::new();
    let mut in_flight: HashMap<Uuid, usize> = HashMap::new();
    let mut per_workspace: HashMap<WorkspaceId, usize> = HashMap::new();
    loop {
        let room = CONCURRENCY.saturating_sub(running.len());
        let mut full = false;
        if room > 0 {
            let now = time::now();
            let lease = chrono::TimeDelta::from_std(LEASE).unwrap_or(chrono::TimeDelta::MAX);
            let busy_hooks: Vec<Uuid> = in_flight.keys().copied().collect();
            let busy_workspaces: Vec<WorkspaceId> = per_workspace
                .iter()
                .filter(|(_, n)| **n >= PER_WORKSPACE)
                .map(|(w, _)| *w)
                .collect();
            let rules = webhook::ClaimRules {
                limit: room,
                per_webhook: PER_WEBHOOK,
                per_workspace: PER_WORKSPACE,
                skip_webhooks: &busy_hooks,
                skip_workspaces: &busy_workspaces,
            };
            match state
                .webhooks
                .claim_deliveries(now, now + lease, &rules)
                .await
            {
                Ok(claimed) => {
                    full = claimed.len() >= room;
                    for (delivery, hook) in claimed {
                        let owner = (hook.id, hook.workspace_id);
                        *in_flight.entry(owner.0).or_default() += 1;
                        *per_workspace.entry(owner.1).or_default() += 1;
                        let (state, clients) = (state.clone(), clients.clone());
                        let task = running.spawn(async move {
                            attempt(&state, &clients, delivery, hook).await;
                        });
                        task_hook.insert(task.id(), owner);
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "reading the webhook queue failed; retrying");
                    tokio::time::sleep(TICK).await;
                    continue;
                }
            }
        }
        let mut finished = |id: tokio::task::Id| {
            let Some((hook, workspace)) = task_hook.remove(&id) else {
                return;
            };
            release(&mut in_flight, hook);
            release(&mut per_workspace, workspace);
        };
        // Claim again when a delivery finishes (its webhook may have more), when deliveries
        // are queued, or on the tick (retries coming due).
        tokio::select! {
            Some(done) = running.join_next_with_id(), if !running.is_empty() => {
                match done {
                    Ok((id, ())) => finished(id),
                    Err(e) => finished(e.id()),
                }
                while let Some(done) = running.try_join_next_with_id() {
                    match done {
                        Ok((id, ())) => finished(id),
                        Err(e) => finished(e.id()),
                    }
                }
            }
            () = state.webhook_wake.notified(), if !full => {}
            () = tokio::time::sleep(TICK), if !full => {}
        }
    }
}

/// One fewer in flight for `key` (forgotten at none).
fn release(counts: &mut HashMap<Uuid, usize>, key: Uuid) {
    if let Some(n) = counts.get_mut(&key) {
        *n -= 1;
        if *n == 0 {
            counts.remove(&key);
        }
    }
}

/// Purges delivered and given-up deliveries older than the retention, now and then every
/// tenth of it (between a minute and an hour). Every replica may run it: a purge is idempotent.
async fn purge(state: AppState) {
    let retention = state.settings.webhook_retention;
    let every = (retention / 10).clamp(Duration::from_secs(60), Duration::from_secs(3600));
    loop {
        let keep = chrono::TimeDelta::from_std(retention).unwrap_or(chrono::TimeDelta::MAX);
        let before = time::now()
            .checked_sub_signed(keep)
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
        match state.webhooks.purge_deliveries(before).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(deliveries = n, "old webhook deliveries purged"),
            Err(e) => {
                tracing::warn!(error = %e, "purging webhook deliveries failed; retrying later")
            }
        }
        tokio::time::sleep(every).await;
    }
}

/// HTTP clients by endpoint host and checked addresses ([`KEPT_CLIENTS`] at most).
#[derive(Default)]
struct Clients(parking_lot::Mutex<HashMap<(String, Vec<SocketAddr>), reqwest::Client>>);

impl Clients {
    /// The client for `host` connecting to exactly `addrs`.
    fn get(&self, host: &str, addrs: &[SocketAddr]) -> Result<reqwest::Client, String> {
        let key = (host.to_string(), addrs.to_vec());
        if let Some(client) = self.0.lock().get(&key) {
            return Ok(client.clone());
        }
        // No proxy, whatever the environment says: a proxy would resolve the name again and
        // reach what the address check refused.
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .user_agent(concat!("Inlet-Webhooks/", env!("CARGO_PKG_VERSION")))
            .resolve_to_addrs(host, addrs)
            .build()
            .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
        let mut kept = self.0.lock();
        if kept.len() >= KEPT_CLIENTS {
            kept.clear();
        }
        kept.insert(key, client.clone());
        Ok(client)
    }
}

/// Makes one attempt and records it.
async fn attempt(state: &AppState, clients: &Clients, delivery: Delivery, hook: Webhook) {
    let outcome = send(
        clients,
        &delivery,
        &hook,
        state.settings.webhook_allow_private,
    )
    .await;
    let at = time::now();
    let attempt = match outcome {
        Ok(status) if (200..300).contains(&status) => Attempt {
            at,
            status: Some(status),
            error: None,
        },
        Ok(status) => Attempt {
            at,
            status: Some(status),
            error: Some(format!("the endpoint answered {status}")),
        },
        Err(why) => Attempt {
            at,
            status: None,
            error: Some(why),
        },
    };
    let next = match attempt.error {
        None => None,
        Some(_) => webhook::next_attempt(
            delivery.created_date,
            delivery.attempts + 1,
            at,
            state.settings.webhook_retry_base,
        ),
    };
    state.metrics.webhook_attempt(attempt.error.is_none());
    if let Some(why) = &attempt.error {
        tracing::info!(delivery = %delivery.id, webhook = %hook.id, reason = %why, given_up = next.is_none(), "webhook delivery failed");
    }
    if let Err(e) = state
        .webhooks
        .record_attempt(delivery.id, &attempt, next)
        .await
    {
        tracing::warn!(error = %e, delivery = %delivery.id, "recording a webhook attempt failed");
    }
}

/// POSTs a delivery; the endpoint's status, or why there was none.
async fn send(
    clients: &Clients,
    delivery: &Delivery,
    hook: &Webhook,
    allow_private: bool,
) -> Result<u16, String> {
    let url = reqwest::Url::parse(&hook.url).map_err(|e| format!("the URL is not valid: {e}"))?;
    let addrs = vetted_addresses(&url, allow_private).await?;
    let host = url
        .host_str()
        .ok_or_else(|| "the URL has no host".to_string())?;
    let client = clients.get(host, &addrs)?;
    let signed = signature(&hook.secret, time::now().timestamp(), &delivery.body);
    let mut resp = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header("Inlet-Signature", signed)
        .header("Inlet-Delivery", delivery.id.to_string())
        .header("Inlet-Event", delivery.event.name())
        .body(delivery.body.clone())
        .send()
        .await
        .map_err(|e| {
            if e.is_timeout() {
                format!("no answer within {REQUEST_TIMEOUT:?}")
            } else if e.is_connect() {
                "cannot connect to the endpoint".to_string()
            } else {
                "the request failed".to_string()
            }
        })?;
    let status = resp.status().as_u16();
    // Read a bounded part of the answer so the connection closes cleanly; the rest is dropped.
    let mut read = 0usize;
    while read < MAX_ANSWER_BYTES {
        match resp.chunk().await {
            Ok(Some(chunk)) => read += chunk.len(),
            _ => break,
        }
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_follow_the_stripe_scheme() {
        // HMAC-SHA256("secret", "1700000000.{}"), computed independently with Python's hmac.
        assert_eq!(
            signature("secret", 1_700_000_000, "{}"),
            "t=1700000000,v1=b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163"
        );
    }

    #[test]
    fn private_ranges_are_recognized() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2002:7f00:1::",
            "::7f00:1",
            "64:ff9b:1::a00:1",
            "64:ff9b:1:ffff::8.8.8.8",
            "::ffff:0:7f00:1",
            "::ffff:0:a00:1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "100::1",
        ] {
            assert!(is_private(private.parse().unwrap()), "{private}");
        }
        for public in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "::ffff:0:808:808",
            "64:ff9b::808:808",
            "2001:4860:4860::8888",
        ] {
            assert!(!is_private(public.parse().unwrap()), "{public}");
        }
    }
}
