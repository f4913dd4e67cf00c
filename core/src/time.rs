//! Timestamps: stored and compared at millisecond precision, as the interface shows them.

use chrono::{DateTime, SubsecRound, Utc};

/// A point in time, UTC, millisecond precision.
pub type Timestamp = DateTime<Utc>;

/// The current time truncated to milliseconds.
pub fn now() -> Timestamp {
    Utc::now().trunc_subsecs(3)
}

/// Formats a timestamp as RFC 3339 with exactly three fraction digits and a numeric offset,
/// e.g. `2026-11-22T10:42:10.123+00:00`.
pub fn format(ts: &Timestamp) -> String {
    ts.format("%Y-%m-%dT%H:%M:%S%.3f%:z").to_string()
}

/// [`format`] of milliseconds since the epoch (out-of-range values show the epoch).
pub fn format_millis(ms: i64) -> String {
    format(&chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn formats_millis_and_numeric_offset() {
        let ts = Utc.with_ymd_and_hms(2026, 11, 22, 10, 42, 10).unwrap();
        assert_eq!(format(&ts), "2026-11-22T10:42:10.000+00:00");
        let ts = ts + chrono::Duration::milliseconds(123);
        assert_eq!(format(&ts), "2026-11-22T10:42:10.123+00:00");
    }

    #[test]
    fn now_has_no_sub_millisecond_part() {
        let t = now();
        assert_eq!(t.timestamp_subsec_nanos() % 1_000_000, 0);
    }
}
