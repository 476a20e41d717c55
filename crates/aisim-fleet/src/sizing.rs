//! Minimum GPUs for a pool: every KV slot is a server of an M/G/c queue.

use serde::Serialize;

use crate::pool_model::PoolModel;

/// The targets a pool is sized for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SizingTargets {
    /// P99 TTFT target, ms.
    pub slo_ms: f64,
    /// Utilization cap (the reference's 0.85); `None` disables it.
    pub util_cap: Option<f64>,
    /// Node availability in (0, 1]; the count is divided by it.
    pub availability: Option<f64>,
}

impl Default for SizingTargets {
    fn default() -> Self {
        SizingTargets {
            slo_ms: 500.0,
            util_cap: Some(0.85),
            availability: None,
        }
    }
}

/// A sized pool.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PoolSize {
    /// GPUs.
    pub n_gpus: u64,
    /// Arrival rate, req/s.
    pub lam: f64,
    /// Predicted P99 wait, ms.
    pub p99_wait_ms: f64,
    /// Predicted P99 TTFT, ms: the P99 of wait + prefill (each request's
    /// prefill from the calibration's distribution, the wait by Kimura).
    pub p99_ttft_ms: f64,
    /// Utilization `λ / (n μ_gpu)`.
    pub rho: f64,
    /// Whether the TTFT target holds.
    pub slo_met: bool,
}

/// P99 TTFT (ms) of `n` GPUs at rate `lam`: the P99 of wait + prefill.
pub fn p99_ttft_ms(n: u64, lam: f64, model: &PoolModel) -> f64 {
    model.p99_ttft_s(n, lam) * 1e3
}

/// The size of a pool at a given GPU count.
pub fn pool_at(n: u64, lam: f64, model: &PoolModel, slo_ms: f64) -> PoolSize {
    if n == 0 {
        return PoolSize {
            n_gpus: 0,
            lam,
            p99_wait_ms: 0.0,
            p99_ttft_ms: 0.0,
            rho: 0.0,
            slo_met: lam <= model.kind().min_rate(),
        };
    }
    let ttft = p99_ttft_ms(n, lam, model);
    PoolSize {
        n_gpus: n,
        lam,
        p99_wait_ms: model.p99_wait_s(n, lam) * 1e3,
        p99_ttft_ms: ttft,
        rho: lam / (n as f64 * model.mu_gpu()),
        slo_met: ttft <= slo_ms,
    }
}

/// Most evaluations of the sizing predicate one search may make: the
/// exponential phase doubles a `u64` step at most 64 times, the binary phase
/// halves the bracket at most 64 times.
pub const MAX_EVALUATIONS: u32 = 130;

/// The smallest `n ≥ lo` with `ok(n)`, for a monotone `ok` (false, then true),
/// and the number of evaluations made: exponential steps above `lo`, then a
/// binary search of the last bracket, so the cost is logarithmic in the
/// answer's distance from `lo`. `None` when `ok` holds nowhere up to `max`.
pub fn first_ok(lo: u64, max: u64, mut ok: impl FnMut(u64) -> bool) -> (Option<u64>, u32) {
    let mut evals = 1;
    if ok(lo) {
        return (Some(lo), evals);
    }
    // Invariant: ok(below) is false.
    let (mut below, mut step) = (lo, 1u64);
    let above = loop {
        let probe = below.saturating_add(step).min(max);
        evals += 1;
        if ok(probe) {
            break probe;
        }
        if probe == max {
            return (None, evals);
        }
        below = probe;
        step = step.saturating_mul(2);
    };
    let mut above = above;
    while above - below > 1 {
        let mid = below + (above - below) / 2;
        evals += 1;
        if ok(mid) {
            above = mid;
        } else {
            below = mid;
        }
    }
    (Some(above), evals)
}

/// Fewest GPUs meeting the TTFT target at rate `lam` (and the utilization cap),
/// searching upward over the model's [`PoolModel::search_range`]. aisim sizes
/// for the P99 TTFT (of wait + prefill) the SLO is about, where the reference
/// compares the wait alone. When the target is out of reach (an idle pool's
/// P99 prefill exceeds it, or the range ends short of it), the count that
/// keeps the queue stable is returned with `slo_met = false`.
pub fn min_gpus(lam: f64, model: &PoolModel, t: &SizingTargets) -> PoolSize {
    min_gpus_counted(lam, model, t).0
}

/// [`min_gpus`] and the number of P99 evaluations its search made (at most
/// [`MAX_EVALUATIONS`], whatever the rate).
pub fn min_gpus_counted(lam: f64, model: &PoolModel, t: &SizingTargets) -> (PoolSize, u32) {
    if lam <= model.kind().min_rate() || !model.serves() {
        return (pool_at(0, lam, model, t.slo_ms), 0);
    }
    let mu_gpu = model.mu_gpu();
    let (start, max) = model.search_range(lam);
    let start = start.min(max);
    // Past an unreachable target (prefill alone too slow), the stable count stands.
    let (mut n, evals) = if model.p99_prefill_s() * 1e3 > t.slo_ms {
        (start, 0)
    } else {
        // The P99 falls as GPUs are added; past `max` the target is out of reach.
        let (n, evals) = first_ok(start, max, |n| p99_ttft_ms(n, lam, model) <= t.slo_ms);
        (n.unwrap_or(start), evals)
    };
    if let Some(cap) = t.util_cap {
        n = n.max((lam / (cap * mu_gpu)).ceil() as u64);
    }
    if let Some(a) = t.availability {
        n = (n as f64 / a).ceil() as u64;
    }
    (pool_at(n, lam, model, t.slo_ms), evals)
}

impl SizingTargets {
    /// Checks the target and the optional cap and availability.
    pub fn validate(&self) -> Result<(), crate::FleetError> {
        crate::validate::positive("--slo-ttft-ms", self.slo_ms)?;
        if let Some(cap) = self.util_cap {
            crate::validate::share("util_cap", cap)?;
        }
        if let Some(a) = self.availability {
            crate::validate::share("--availability", a)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::Calibration;
    use proptest::prelude::*;

    /// The linear scan the search replaces.
    fn linear(lo: u64, max: u64, ok: impl Fn(u64) -> bool) -> Option<u64> {
        (lo..=max).find(|&n| ok(n))
    }

    proptest! {
        #[test]
        fn first_ok_equals_the_linear_scan(lo in 0u64..500, answer in 0u64..3000, max in 0u64..3000) {
            let ok = |n: u64| n >= answer;
            let max = max.max(lo);
            let (got, evals) = first_ok(lo, max, ok);
            prop_assert_eq!(got, linear(lo, max, ok));
            prop_assert!(evals <= MAX_EVALUATIONS);
        }

        #[test]
        fn min_gpus_equals_the_linear_scan(lam in 0.5f64..400.0, slo in 20.0f64..2000.0, cv2 in 0.01f64..6.0) {
            let cal = PoolModel::Slots(Calibration {
                mean_service_s: 10.0,
                cv2,
                n_slots: 8,
                mean_prefill_s: 0.015,
                mu_gpu: 0.8,
                prefill: vec![(0.015, 1.0)],
            });
            let t = SizingTargets { slo_ms: slo, util_cap: None, availability: None };
            let start = ((lam / cal.mu_gpu()).ceil() as u64 + 1).max(1);
            let want = linear(start, start + 100_000, |n| p99_ttft_ms(n, lam, &cal) <= slo);
            prop_assert_eq!(Some(min_gpus(lam, &cal, &t).n_gpus), want);
        }
    }

    #[test]
    fn a_billion_requests_per_second_is_sized_in_few_evaluations() {
        let cal = PoolModel::Slots(Calibration {
            mean_service_s: 13.3,
            cv2: 3.2,
            n_slots: 128,
            mean_prefill_s: 0.026,
            mu_gpu: 9.6,
            prefill: vec![(0.026, 1.0)],
        });
        let t = SizingTargets {
            util_cap: None,
            ..SizingTargets::default()
        };
        let (p, evals) = min_gpus_counted(1e9, &cal, &t);
        assert!(p.slo_met && p.n_gpus > (1e9 / 9.6) as u64, "{p:?}");
        assert!(evals <= 64, "{evals} evaluations");
        // One GPU fewer misses: it is the minimum.
        assert!(p99_ttft_ms(p.n_gpus - 1, 1e9, &cal) > 500.0);
    }
}
