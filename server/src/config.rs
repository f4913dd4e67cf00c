//! Settings of `inlet serve`, with every limit and default as a named constant.

use std::time::Duration;

/// Default listen address.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";
/// Default database URL: an embedded SQLite file in the working directory.
pub const DEFAULT_DATABASE: &str = "sqlite://inlet.db?mode=rwc";
/// Default maximum size of an uploaded file: 256 MiB.
pub const DEFAULT_MAX_UPLOAD_BYTES: u64 = 256 * 1024 * 1024;
/// Bytes allowed in a multipart request beyond the file itself (other parts, headers, boundaries).
pub const MULTIPART_OVERHEAD_BYTES: u64 = 1024 * 1024;
/// Default time budget of one extraction.
pub const DEFAULT_EXTRACTION_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time a shutdown waits for requests in flight.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// Maximum size of a JSON request body (source configurations): 1 MiB.
pub const MAX_JSON_BODY_BYTES: usize = 1024 * 1024;
/// Maximum size of a batch request body (`…/batch/…`): 1,000 items of the longest externalId and
/// checksum fit.
pub const MAX_BATCH_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Maximum size of a request body to `/oauth/…` (token, revoke, introspect, the sign-in and
/// consent forms), which is read before the caller is known: their parameters are a few
/// hundred bytes.
pub const MAX_OAUTH_BODY_BYTES: usize = 16 * 1024;
/// Change-feed reads with `wait` one user may have open at once (429 beyond).
pub const MAX_FEED_WAITS_PER_USER: usize = 16;
/// Default time a client has to send a whole request head.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default longest pause in a request body (or in a client's reading of a response).
pub const DEFAULT_BODY_IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// Default idle time of a kept-alive connection between requests.
pub const DEFAULT_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default number of connections open at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// Runtime settings of the HTTP service.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Largest accepted file in an upload, in bytes.
    pub max_upload_bytes: u64,
    /// Extractions running at once (uploads beyond wait).
    pub extraction_concurrency: usize,
    /// Time budget of one extraction.
    pub extraction_timeout: Duration,
    /// Characters of text kept per file.
    pub max_chars: usize,
    /// The URL users and clients reach the service at (`--public-url`): the OAuth issuer, and
    /// `Secure` session cookies when https. When absent, [`crate::serve`] sets it from the
    /// bound address (with a warning); it never comes from a request's `Host` header.
    pub public_url: Option<String>,
    /// How long a shutdown waits for requests in flight (uploads included) to finish.
    pub shutdown_grace: Duration,
    /// Time a client has to send a whole request head ([`crate::conn`]).
    pub header_timeout: Duration,
    /// Longest pause in a request body before 408, or in a client's reading of a response.
    pub body_idle_timeout: Duration,
    /// Idle time after which a kept-alive connection is closed.
    pub keep_alive_timeout: Duration,
    /// Connections open at once; further ones wait in the listen backlog.
    pub max_connections: usize,
    /// `/readyz` answers 200 before the search index has been built.
    pub serve_while_indexing: bool,
    /// Searches are typo tolerant unless they ask not to (`typos=false`).
    pub typo_tolerance: bool,
    /// Reverse proxies whose `X-Forwarded-For` names the client (`--trusted-proxy`); from
    /// any other peer the header is ignored and the socket's address is the client's.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// The mass-removal guard (`--complete-max-removal`): the largest share, in percent, of an
    /// object type's live records a COMPLETE close may remove without `allowMassRemoval`.
    /// `None` (the default) keeps the spec's behaviour.
    pub complete_max_removal: Option<f64>,
    /// How long the change feed keeps closes and source deletions (`--change-retention`): a
    /// feed cursor older than that may be answered 410.
    pub change_retention: Duration,
    /// Webhook deliveries may go to loopback and private addresses
    /// (`--webhook-allow-private`); off, such a target is refused.
    pub webhook_allow_private: bool,
    /// The wait before a failed delivery's second attempt (`--webhook-retry-base`); it doubles
    /// per attempt, up to an hour ([`inlet_core::webhook::next_attempt`]). 30 s.
    pub webhook_retry_base: Duration,
    /// How long delivered and given-up webhook deliveries are kept (`--webhook-retention`,
    /// 7 days): older ones are purged, pending ones never.
    pub webhook_retention: Duration,
    /// OCR of images and scanned pages (`--ocr-*`): languages, processes at once, the time
    /// budget and page cap per document.
    pub ocr: inlet_extractors::ocr::Settings,
    /// How long an original nothing names any more is kept before the sweep removes it
    /// (`--originals-grace`, 1 hour; [`inlet_core::blob::Sweeper`]).
    pub originals_grace: Duration,
    /// How often the blob store is swept (`--blob-sweep-interval`, 10 minutes).
    pub blob_sweep_interval: Duration,
    /// Queue a re-extraction of every workspace when this binary's extractors are newer than
    /// those the last such run read with (`--reextract-after-upgrade`, off).
    pub reextract_after_upgrade: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            max_upload_bytes: DEFAULT_MAX_UPLOAD_BYTES,
            extraction_concurrency: std::thread::available_parallelism().map_or(2, |n| n.get()),
            extraction_timeout: DEFAULT_EXTRACTION_TIMEOUT,
            max_chars: inlet_core::extract::MAX_CHARS,
            public_url: None,
            trusted_proxies: Vec::new(),
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_idle_timeout: DEFAULT_BODY_IDLE_TIMEOUT,
            keep_alive_timeout: DEFAULT_KEEP_ALIVE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            serve_while_indexing: false,
            typo_tolerance: true,
            complete_max_removal: None,
            change_retention: DEFAULT_CHANGE_RETENTION,
            webhook_allow_private: false,
            webhook_retry_base: Duration::from_secs(30),
            webhook_retention: Duration::from_secs(7 * 24 * 3600),
            ocr: inlet_extractors::ocr::Settings::default(),
            originals_grace: inlet_core::blob::DEFAULT_GRACE,
            blob_sweep_interval: DEFAULT_BLOB_SWEEP_INTERVAL,
            reextract_after_upgrade: false,
        }
    }
}

/// How often the blob store is swept by default: every 10 minutes.
pub const DEFAULT_BLOB_SWEEP_INTERVAL: Duration = Duration::from_secs(600);

/// The change feed's default retention: 7 days.
pub const DEFAULT_CHANGE_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// Parses a `--change-retention` (or `--webhook-retry-base`) value: a whole number with a unit, `s`, `m`, `h` or `d`
/// (`7d`, `36h`), from one second to ten years.
pub fn parse_retention(value: &str) -> Result<Duration, String> {
    let v = value.trim();
    let bad = || format!("'{value}' is not a duration such as 7d, 36h, 90m or 30s (1s to 3650d)");
    let split = v.len().checked_sub(1).ok_or_else(bad)?;
    let (n, unit) = v.split_at_checked(split).ok_or_else(bad)?;
    let n: u64 = n.parse().map_err(|_| bad())?;
    let secs = match unit {
        "s" => Some(n),
        "m" => n.checked_mul(60),
        "h" => n.checked_mul(3600),
        "d" => n.checked_mul(86_400),
        _ => None,
    }
    .ok_or_else(bad)?;
    if secs == 0 || secs > 3650 * 86_400 {
        return Err(bad());
    }
    Ok(Duration::from_secs(secs))
}

/// Parses a `--complete-max-removal` value: a percentage from 0 to 100.
pub fn parse_percent(value: &str) -> Result<f64, String> {
    let v = value.trim().trim_end_matches('%');
    match v.parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!("'{value}' is not a percentage from 0 to 100")),
    }
}

/// Parses an on/off setting (`--typo-tolerance`): `on`, `off`, `true`, `false`, `1`, `0`.
pub fn parse_switch(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        _ => Err(format!("'{value}' is neither on nor off")),
    }
}

/// Parses a `--trusted-proxy` value: a CIDR block (`10.0.0.0/8`) or one address.
pub fn parse_proxy(value: &str) -> Result<ipnet::IpNet, String> {
    let value = value.trim();
    value
        .parse::<ipnet::IpNet>()
        .or_else(|_| value.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("'{value}' is neither an address nor a CIDR block (10.0.0.0/8)"))
}

/// The service URL a bound address gives when no `--public-url` is set: `http://` and the
/// address, an unspecified one (`0.0.0.0`, `[::]`) shown as the loopback address of its family.
pub fn url_of_bound(addr: std::net::SocketAddr) -> String {
    let ip = match addr.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => std::net::Ipv4Addr::LOCALHOST.into(),
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => std::net::Ipv6Addr::LOCALHOST.into(),
        ip => ip,
    };
    format!("http://{}", std::net::SocketAddr::new(ip, addr.port()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{parse_proxy, parse_retention, url_of_bound};

    #[test]
    fn retentions_have_a_unit() {
        assert_eq!(parse_retention("7d"), Ok(Duration::from_secs(604_800)));
        assert_eq!(parse_retention(" 36h "), Ok(Duration::from_secs(129_600)));
        assert_eq!(parse_retention("90m"), Ok(Duration::from_secs(5_400)));
        assert_eq!(parse_retention("2s"), Ok(Duration::from_secs(2)));
        for bad in [
            "",
            "7",
            "d",
            "0s",
            "-1d",
            "3651d",
            "1w",
            "1.5h",
            "99999999999999999999d",
        ] {
            assert!(parse_retention(bad).unwrap_err().contains("7d"), "{bad}");
        }
    }

    #[test]
    fn proxies_are_blocks_or_addresses() {
        assert_eq!(parse_proxy("10.0.0.0/8").unwrap().to_string(), "10.0.0.0/8");
        assert_eq!(
            parse_proxy(" 192.0.2.1 ").unwrap().to_string(),
            "192.0.2.1/32"
        );
        assert_eq!(parse_proxy("::1").unwrap().to_string(), "::1/128");
        assert!(parse_proxy("proxy.local").unwrap_err().contains("CIDR"));
    }

    #[test]
    fn a_bound_address_gives_a_reachable_url() {
        let url = |a: &str| url_of_bound(a.parse().unwrap());
        assert_eq!(url("127.0.0.1:8080"), "http://127.0.0.1:8080");
        assert_eq!(url("0.0.0.0:80"), "http://127.0.0.1:80");
        assert_eq!(url("[::]:8080"), "http://[::1]:8080");
        assert_eq!(url("192.0.2.7:9000"), "http://192.0.2.7:9000");
    }
}
