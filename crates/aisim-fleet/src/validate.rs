//! Range checks of planning parameters, shared by every entry point so a
//! library caller cannot bypass what the command line enforces. Each error
//! names the parameter (as spelled on the command line) and the value.

use crate::FleetError;

/// Most requests one simulation run takes (per pool, per seed): beyond it the
/// per-request state alone would need gigabytes.
pub const MAX_REQUESTS: u64 = 10_000_000;

/// Longest context, tokens: beyond any model, and it bounds the exact
/// calibration (one term per integer length).
pub const MAX_CONTEXT: u32 = 1 << 24;

/// Most seeds of one run (as many as a replay's `--seeds`).
pub use aisim_replay::seeds_summary::MAX_SEEDS;

/// Most rates, power cuts or profiles of one run: each costs a calibration
/// (one term per integer length).
pub const MAX_POINTS: u64 = 1000;

/// Most rows of a sweep whose rows cost `O(1)` (disaggregation splits).
pub const MAX_SWEEP: u64 = 1_000_000;

/// Most GPUs in one pool: far beyond any fleet, and small enough that slot
/// counts (GPUs × slots) cannot overflow.
pub const MAX_GPUS: u64 = 1 << 40;

/// `v` is finite and above 0.
pub fn positive(field: &'static str, v: f64) -> Result<(), FleetError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(FleetError::invalid(
            field,
            v,
            "must be a finite number above 0",
        ))
    }
}

/// Highest arrival rate, req/s: sizing costs `O(√λ)` per evaluation, so ten
/// billion req/s (beyond every service there is) still sizes in a second.
pub const MAX_RATE: f64 = 1e10;

/// An arrival rate above 0 and at most [`MAX_RATE`].
pub fn rate(field: &'static str, v: f64) -> Result<(), FleetError> {
    if v > 0.0 && v <= MAX_RATE {
        Ok(())
    } else {
        Err(FleetError::invalid(
            field,
            v,
            format!("must be above 0 and at most {MAX_RATE:e} req/s"),
        ))
    }
}

/// A request stream: a rate `--lam` above 0 and 1 to [`MAX_REQUESTS`] requests `--n-req`.
pub fn stream(lam: f64, n: u64) -> Result<(), FleetError> {
    rate("--lam", lam)?;
    count("--n-req", n, MAX_REQUESTS)
}

/// Shape of gamma arrival gaps in [0.01, 100]: beyond, the gaps are all
/// but 0 or all alike (cv² = 1/B), and tiny shapes underflow.
pub fn gamma_shape(b: f64) -> Result<(), FleetError> {
    within("--arrivals gamma:B", b, 0.01, 100.0)
}

/// `v` is finite and at least 0.
pub fn non_negative(field: &'static str, v: f64) -> Result<(), FleetError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(FleetError::invalid(
            field,
            v,
            "must be a finite number, 0 or more",
        ))
    }
}

/// `v` is in `[lo, hi]` (so finite).
pub fn within(field: &'static str, v: f64, lo: f64, hi: f64) -> Result<(), FleetError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(FleetError::invalid(
            field,
            v,
            format!("must be in [{lo}, {hi}]"),
        ))
    }
}

/// `v` is a token length in `(0, MAX_CONTEXT]`.
pub fn tokens(field: &'static str, v: f64) -> Result<(), FleetError> {
    if v > 0.0 && v <= MAX_CONTEXT as f64 {
        Ok(())
    } else {
        Err(FleetError::invalid(
            field,
            v,
            format!("must be above 0 and at most {MAX_CONTEXT} tokens"),
        ))
    }
}

/// `v` is in `(0, 1]`.
pub fn share(field: &'static str, v: f64) -> Result<(), FleetError> {
    if v > 0.0 && v <= 1.0 {
        Ok(())
    } else {
        Err(FleetError::invalid(field, v, "must be in (0, 1]"))
    }
}

/// `v` is a count in `1..=max`.
pub fn count(field: &'static str, v: u64, max: u64) -> Result<(), FleetError> {
    if (1..=max).contains(&v) {
        Ok(())
    } else {
        Err(FleetError::invalid(field, v, format!("must be 1 to {max}")))
    }
}

/// A context window of 1 to [`MAX_CONTEXT`] tokens that leaves a KV slot on `profile`.
pub fn context(
    field: &'static str,
    max_ctx: u32,
    profile: &dyn aisim_core::profile::GpuProfile,
) -> Result<(), FleetError> {
    if max_ctx == 0 || max_ctx > MAX_CONTEXT {
        return Err(FleetError::invalid(
            field,
            max_ctx,
            format!("must be 1 to {MAX_CONTEXT} tokens"),
        ));
    }
    if profile.n_slots(max_ctx) == 0 {
        return Err(FleetError::invalid(
            field,
            max_ctx,
            format!("leaves no KV slot on {}", profile.key()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_zero_and_negative_values_are_rejected_by_name() {
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -1.0] {
            let e = positive("--slo", v).unwrap_err().to_string();
            assert!(e.contains("`--slo`") && e.contains(&v.to_string()), "{e}");
        }
        assert!(positive("--slo", 1e-9).is_ok());
        assert!(non_negative("--x", 0.0).is_ok());
        assert!(non_negative("--x", -0.5).is_err());
        assert!(non_negative("--x", f64::NAN).is_err());
        assert!(within("--p", 1.0, 0.0, 1.0).is_ok());
        assert!(within("--p", f64::NAN, 0.0, 1.0).is_err());
        assert!(within("--p", 1.5, 0.0, 1.0).is_err());
        assert!(share("--a", 0.0).is_err() && share("--a", 1.0).is_ok());
        assert!(count("--seeds", 0, 10).is_err());
        assert!(count("--seeds", 11, 10).is_err());
        assert!(count("--seeds", 10, 10).is_ok());
    }
}
