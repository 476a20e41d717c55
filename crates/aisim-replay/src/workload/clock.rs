//! Trace and spec times on aisim's clock (u64 nanoseconds). Any single time a
//! workload asks for must fit in 2^63 ns (292 years), which leaves the other
//! half of the clock for the service that follows; a time beyond it is an
//! error naming where it came from, never clamped to some far instant.

use aisim_core::SimDuration;

/// The range, as messages state it.
pub(crate) const CLOCK_RANGE: &str = "0 ..= 9223372036854 ms (2^63 ns, 292 years)";

/// Milliseconds to a rounded duration, or `None` when negative, not finite or
/// beyond the clock's range.
pub fn checked_ms(ms: f64) -> Option<SimDuration> {
    SimDuration::from_secs_f64(ms * 1e-3)
}

/// `a + b`, or `None` when the sum leaves the clock's range.
pub(crate) fn checked_sum(a: SimDuration, b: SimDuration) -> Option<SimDuration> {
    a.0.checked_add(b.0)
        .filter(|&ns| ns < 1 << 63)
        .map(SimDuration)
}

/// Milliseconds to a rounded duration. Every input is checked against the
/// clock first (`checked_ms` here, `ReplaySpec::validate`), so the fallback
/// is never reached.
pub(crate) fn ms_to_duration(ms: f64) -> SimDuration {
    SimDuration::from_secs_f64(ms.max(0.0) * 1e-3).unwrap_or(SimDuration(u64::MAX / 4))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_ends_at_two_to_the_63_nanoseconds() {
        assert_eq!(checked_ms(1500.0), Some(SimDuration(1_500_000_000)));
        assert!(checked_ms(9_223_372_036_854.0).is_some());
        assert_eq!(checked_ms(9_223_372_036_855.0), None);
        assert_eq!(checked_ms(1e300), None);
        assert_eq!(checked_ms(-1.0), None);
        assert_eq!(checked_ms(f64::NAN), None);
        let big = SimDuration(1 << 62);
        assert_eq!(
            checked_sum(big, SimDuration((1 << 62) - 1)),
            Some(SimDuration((1 << 63) - 1))
        );
        assert_eq!(checked_sum(big, big), None);
    }
}
