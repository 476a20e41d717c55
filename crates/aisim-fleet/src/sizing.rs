//! Minimum GPUs for a pool: every KV slot is a server of an M/G/c queue.

use serde::Serialize;

use crate::calibrate::Calibration;
use crate::erlang::p99_wait;

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
    /// Predicted P99 TTFT (wait + mean prefill), ms.
    pub p99_ttft_ms: f64,
    /// Utilization `λ / (n μ_gpu)`.
    pub rho: f64,
    /// Whether the TTFT target holds.
    pub slo_met: bool,
}

/// Below this rate (req/s) a pool gets no GPUs.
pub const MIN_RATE: f64 = 0.01;

/// P99 TTFT (ms) of `n` GPUs at rate `lam`.
pub fn p99_ttft_ms(n: u64, lam: f64, cal: &Calibration) -> f64 {
    let wait = p99_wait(
        n * cal.n_slots,
        lam,
        cal.mu_gpu / cal.n_slots as f64,
        cal.cv2,
    );
    (wait + cal.mean_prefill_s) * 1e3
}

/// The size of a pool at a given GPU count.
pub fn pool_at(n: u64, lam: f64, cal: &Calibration, slo_ms: f64) -> PoolSize {
    if n == 0 {
        return PoolSize {
            n_gpus: 0,
            lam,
            p99_wait_ms: 0.0,
            p99_ttft_ms: 0.0,
            rho: 0.0,
            slo_met: lam <= MIN_RATE,
        };
    }
    let ttft = p99_ttft_ms(n, lam, cal);
    PoolSize {
        n_gpus: n,
        lam,
        p99_wait_ms: ttft - cal.mean_prefill_s * 1e3,
        p99_ttft_ms: ttft,
        rho: lam / (n as f64 * cal.mu_gpu),
        slo_met: ttft <= slo_ms,
    }
}

/// Fewest GPUs meeting the TTFT target at rate `lam` (and the utilization cap),
/// searching upward from `max(1, ceil(λ/μ_gpu) + 1)`. aisim sizes for the TTFT
/// (wait + mean prefill) the SLO is about, where the reference compares the wait
/// alone. When even an idle pool's prefill exceeds the target, the count that
/// keeps the queue stable is returned with `slo_met = false`.
pub fn min_gpus(lam: f64, cal: &Calibration, t: &SizingTargets) -> PoolSize {
    if lam <= MIN_RATE || cal.n_slots == 0 {
        return pool_at(0, lam, cal, t.slo_ms);
    }
    let start = ((lam / cal.mu_gpu).ceil() as u64 + 1).max(1);
    let ok = |n: u64| p99_ttft_ms(n, lam, cal) <= t.slo_ms;
    // Past an unreachable target (prefill alone too slow), the stable count stands.
    let mut n = if cal.mean_prefill_s * 1e3 > t.slo_ms || ok(start) {
        start
    } else {
        // Exponential then binary search: the P99 falls as GPUs are added.
        let (mut lo, mut hi) = (start, start * 2);
        while !ok(hi) {
            lo = hi;
            hi *= 2;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if ok(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    };
    if let Some(cap) = t.util_cap {
        n = n.max((lam / (cap * cal.mu_gpu)).ceil() as u64);
    }
    if let Some(a) = t.availability {
        n = (n as f64 / a).ceil() as u64;
    }
    pool_at(n, lam, cal, t.slo_ms)
}
