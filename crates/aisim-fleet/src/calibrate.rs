//! Calibration of a pool: the service-time distribution of a CDF slice on a
//! profile, computed exactly (every integer length with its probability) or
//! sampled (for comparison with the reference's Monte-Carlo estimate).

use aisim_core::profile::GpuProfile;
use rand_core::SeedableRng;
use rand_pcg::Pcg64;
use serde::Serialize;

use crate::cdf::Cdf;
use crate::workload::{sample_total, split_lengths};

/// What queueing theory needs to know about a pool.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Calibration {
    /// Mean service time of a request, seconds (it holds one slot that long).
    pub mean_service_s: f64,
    /// Squared coefficient of variation of the service time (at least 0.01).
    pub cv2: f64,
    /// Slots (concurrent sequences) per GPU at the pool's maximum context.
    pub n_slots: u64,
    /// Mean prefill time `E[ceil(l_in/chunk) × iter(1)]`, seconds.
    pub mean_prefill_s: f64,
    /// Requests per second one GPU completes: `n_slots / E[S]`.
    pub mu_gpu: f64,
}

/// How the expectations are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CalibrationMethod {
    /// Sum over every integer length (no sampling noise).
    #[default]
    Exact,
    /// Average over this many random lengths.
    Sampled(u64),
}

/// Service time and prefill time of a request of `total` tokens.
fn service(p: &dyn GpuProfile, total: u64, n_slots: u64) -> (f64, f64) {
    let (l_in, l_out) = split_lengths(total);
    let iters = (l_in as u64).div_ceil(p.chunk().max(1) as u64);
    let s = (iters + l_out as u64) as f64 * p.iter_s(n_slots as f64, (l_in + l_out) as f64);
    (s, iters as f64 * p.iter_n_s(1.0))
}

/// Calibrates the slice of `cdf` between `lo_clamp` and `pool_max` on `profile`.
/// Interval `i` contributes `F_i − F_(i−1)`, spread uniformly over the integer
/// lengths `max(lo_clamp, t_(i−1) + 1) ..= min(pool_max, t_i)`, or placed at
/// `pool_max` when that range is empty.
pub fn calibrate(
    cdf: &Cdf,
    lo_clamp: u64,
    pool_max: u32,
    profile: &dyn GpuProfile,
    method: CalibrationMethod,
    seed: u64,
) -> Calibration {
    let n_slots = profile.n_slots(pool_max);
    let (mut es, mut es2, mut ep) = (0.0f64, 0.0f64, 0.0f64);
    match method {
        CalibrationMethod::Exact => {
            let mut prev_t = 0u64;
            let mut prev_f = 0.0;
            for &(t, f) in &cdf.points {
                let pr = f - prev_f;
                if pr > 0.0 {
                    let lo = lo_clamp.max(prev_t + 1);
                    let hi = (pool_max as u64).min(t);
                    if lo > hi {
                        let (s, pf) = service(profile, pool_max as u64, n_slots);
                        es += pr * s;
                        es2 += pr * s * s;
                        ep += pr * pf;
                    } else {
                        let w = pr / (hi - lo + 1) as f64;
                        let (mut a, mut b, mut c) = (0.0, 0.0, 0.0);
                        for len in lo..=hi {
                            let (s, pf) = service(profile, len, n_slots);
                            a += s;
                            b += s * s;
                            c += pf;
                        }
                        es += w * a;
                        es2 += w * b;
                        ep += w * c;
                    }
                }
                prev_t = t;
                prev_f = f;
            }
        }
        CalibrationMethod::Sampled(n) => {
            let mut rng = Pcg64::seed_from_u64(seed);
            for _ in 0..n.max(1) {
                let len = sample_total(cdf, lo_clamp, pool_max as u64, &mut rng);
                let (s, pf) = service(profile, len, n_slots);
                es += s;
                es2 += s * s;
                ep += pf;
            }
            let n = n.max(1) as f64;
            es /= n;
            es2 /= n;
            ep /= n;
        }
    }
    let cv2 = (es2 / (es * es) - 1.0).max(0.01);
    Calibration {
        mean_service_s: es,
        cv2,
        n_slots,
        mean_prefill_s: ep,
        mu_gpu: n_slots as f64 / es,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aisim_core::profile::resolve_profile;

    #[test]
    fn azure_at_8192_matches_the_exact_values() {
        let azure = Cdf::builtin("azure").unwrap();
        for (key, mu, cv2, slots, prefill_ms) in [
            ("a100", 9.6263, 3.1994, 128, 26.3),
            ("h100", 19.5671, 3.1894, 128, 8.0),
            ("a10g", 5.6050, 2.6567, 64, 72.2),
        ] {
            let p = resolve_profile(key).unwrap();
            let c = calibrate(&azure, 1, 8192, p.as_ref(), CalibrationMethod::Exact, 0);
            assert!((c.mu_gpu / mu - 1.0).abs() < 1e-4, "{key} mu {}", c.mu_gpu);
            assert!((c.cv2 / cv2 - 1.0).abs() < 1e-4, "{key} cv2 {}", c.cv2);
            assert_eq!(c.n_slots, slots);
            assert!(
                (c.mean_prefill_s * 1e3 - prefill_ms).abs() < 0.05,
                "{key} prefill {}",
                c.mean_prefill_s
            );
        }
    }

    #[test]
    fn sampled_agrees_with_exact_within_sampling_error() {
        let azure = Cdf::builtin("azure").unwrap();
        let p = resolve_profile("a100").unwrap();
        let exact = calibrate(&azure, 1, 8192, p.as_ref(), CalibrationMethod::Exact, 0);
        let sampled = calibrate(
            &azure,
            1,
            8192,
            p.as_ref(),
            CalibrationMethod::Sampled(200_000),
            7,
        );
        // Standard error of the mean service time: sqrt(cv2 / n) relative ≈ 0.4 %.
        let se = (exact.cv2 / 200_000.0).sqrt();
        assert!(
            (sampled.mean_service_s / exact.mean_service_s - 1.0).abs() < 4.0 * se,
            "{sampled:?} vs {exact:?}"
        );
        assert!((sampled.cv2 / exact.cv2 - 1.0).abs() < 0.05);
    }
}
