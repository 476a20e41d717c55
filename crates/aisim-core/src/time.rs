//! Virtual time: exact integer nanoseconds, totally ordered.

use serde::{Deserialize, Serialize};

/// The clock's limit: every time of a run stays below 2^63 ns (292 years),
/// so a run cannot saturate the clock and spin at its end.
pub const CLOCK_LIMIT_NS: u64 = 1 << 63;

/// A point on the virtual clock, in nanoseconds since the start of the run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SimTime(pub u64);

/// A length of virtual time, in nanoseconds.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SimDuration(pub u64);

impl SimTime {
    /// The start of the run.
    pub const ZERO: SimTime = SimTime(0);

    /// Seconds since the start, as a float (for reports).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }

    /// Milliseconds since the start, as a float (for reports).
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }

    /// The time `d` later (saturating: the clock never wraps).
    pub fn after(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }

    /// The time `d` later, or `None` past the run's limit,
    /// [`CLOCK_LIMIT_NS`]: a run never gets there, it stops with an error.
    pub fn checked_after(self, d: SimDuration) -> Option<SimTime> {
        self.0
            .checked_add(d.0)
            .filter(|&t| t < CLOCK_LIMIT_NS)
            .map(SimTime)
    }

    /// `self - earlier`, or zero when `earlier` is later.
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);

    /// Rounds a duration in seconds to the nearest nanosecond, once.
    /// Returns `None` for NaN, infinite or negative input, and for more than
    /// 2^63 ns (292 years): such a duration is an error, never an event.
    #[inline]
    pub fn from_secs_f64(secs: f64) -> Option<SimDuration> {
        let ns = secs * 1e9;
        // Also false for NaN.
        if !(0.0..9.223_372_036_854_775e18).contains(&ns) {
            return None;
        }
        // Round half away from zero, as f64::round does, without its libm call
        // on baseline x86_64 (this runs once per pass): `ns - trunc(ns)` is
        // exact. Through i64, whose conversions are single instructions.
        let whole = ns as i64;
        Some(SimDuration(if ns - whole as f64 >= 0.5 {
            whole as u64 + 1
        } else {
            whole as u64
        }))
    }

    /// Exact milliseconds (for configuration values such as think times).
    pub fn from_millis(ms: u64) -> SimDuration {
        SimDuration(ms.saturating_mul(1_000_000))
    }

    /// Seconds, as a float.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }

    /// Milliseconds, as a float.
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_once_and_rejects_bad_durations() {
        assert_eq!(
            SimDuration::from_secs_f64(0.0324_9),
            Some(SimDuration(32_490_000))
        );
        assert_eq!(SimDuration::from_secs_f64(1.5e-9), Some(SimDuration(2)));
        for x in [
            0.0,
            1e-10,
            4.9e-10,
            5e-10,
            2.5e-9,
            0.123456789123,
            7.75e-7,
            1e6,
        ] {
            assert_eq!(
                SimDuration::from_secs_f64(x),
                Some(SimDuration((x * 1e9f64).round() as u64)),
                "{x}"
            );
        }
        assert_eq!(SimDuration::from_secs_f64(f64::NAN), None);
        assert_eq!(SimDuration::from_secs_f64(f64::INFINITY), None);
        assert_eq!(SimDuration::from_secs_f64(-1e-3), None);
        assert_eq!(SimDuration::from_secs_f64(-0.0), Some(SimDuration::ZERO));
        assert_eq!(SimDuration::from_secs_f64(9.3e9), None, "over 2^63 ns");
        assert!(SimDuration::from_secs_f64(9.2e9).is_some());
        assert_eq!(SimTime(5).after(SimDuration(7)), SimTime(12));
        assert_eq!(SimTime(5).since(SimTime(7)), SimDuration::ZERO);
    }
}
