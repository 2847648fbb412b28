//! The wall clock, read here and nowhere in `core`: decision-log times and today's date
//! for baseline expiry. Formatting and calendar arithmetic are `jiff`'s.

use jiff::tz::Offset;
use jiff::Timestamp;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The wall clock as the effect handlers read it. Nothing may depend on it for safety
/// (the project lock never judges a holder by age, waits use the monotonic clock); the
/// fault tests skew it to prove that ([`crate::faults`]).
pub fn now() -> SystemTime {
    let skew = crate::faults::clock_skew_secs();
    let by = Duration::from_secs(skew.unsigned_abs());
    let real = SystemTime::now();
    let skewed = if skew >= 0 {
        real.checked_add(by)
    } else {
        real.checked_sub(by)
    };
    skewed.unwrap_or(real)
}

/// `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds). Times before 1970 clamp to it;
/// times past year 9999 clamp to the last microsecond `jiff` represents.
pub fn rfc3339(t: SystemTime) -> String {
    let micros = t
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
    let ts = Timestamp::from_microsecond(micros).unwrap_or(Timestamp::MAX);
    format!("{ts:.6}")
}

/// Today's date in UTC as (year, month, day).
pub fn today_utc() -> (u16, u8, u8) {
    let date = Offset::UTC
        .to_datetime(Timestamp::try_from(now()).unwrap_or_else(|_| Timestamp::now()))
        .date();
    (
        // A year outside u16 cannot happen; if it did, every dated entry counts as
        // expired rather than valid.
        u16::try_from(date.year()).unwrap_or(u16::MAX),
        u8::try_from(date.month()).unwrap_or(1),
        u8::try_from(date.day()).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_clock_formats_rfc3339() {
        let at = |secs: u64, micros: u32| {
            rfc3339(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(micros.into()))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(at(951_782_400, 0), "2000-02-29T00:00:00.000000Z");
        assert_eq!(at(1_700_000_000, 123_456), "2023-11-14T22:13:20.123456Z");
        assert_eq!(at(4_107_542_399, 0), "2100-02-28T23:59:59.000000Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000000Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH - Duration::from_secs(5)),
            "1970-01-01T00:00:00.000000Z"
        );
    }

    #[test]
    fn today_is_a_plausible_utc_date() {
        let before = rfc3339(SystemTime::now());
        let (y, m, d) = today_utc();
        let after = rfc3339(SystemTime::now());
        assert!(y >= 2024 && (1..=12).contains(&m) && (1..=31).contains(&d));
        // Either side of the call, in case it straddles midnight.
        let day = format!("{y:04}-{m:02}-{d:02}T");
        assert!(
            before.starts_with(&day) || after.starts_with(&day),
            "{day} {before} {after}"
        );
    }
}
