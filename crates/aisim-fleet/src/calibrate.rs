//! Calibration of a pool: the service-time distribution of a CDF slice on a
//! profile, computed exactly (every integer length with its probability) or
//! sampled (for comparison with the reference's Monte-Carlo estimate).

use std::collections::BTreeMap;

use aisim_core::profile::GpuProfile;
use rand_core::SeedableRng;
use rand_pcg::Pcg64;
use serde::Serialize;

use crate::cdf::Cdf;
use crate::workload::split_lengths;

/// What queueing theory needs to know about a pool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// Mean service time of a request, seconds (it holds one slot that long).
    pub mean_service_s: f64,
    /// Squared coefficient of variation of the service time (at least 0.01).
    pub cv2: f64,
    /// Slots (concurrent sequences) per GPU at the pool's maximum context.
    pub n_slots: u64,
    /// Mean prefill time (each chunk at least `iter(1)`, see [`ServiceModel`]), seconds.
    pub mean_prefill_s: f64,
    /// Requests per second one GPU completes: `n_slots / E[S]`.
    pub mu_gpu: f64,
    /// The prefill time's distribution: `(seconds, probability)` by
    /// increasing time, requests within 0.5 % of each other sharing an atom
    /// (what the P99 of wait + prefill is computed from).
    #[serde(skip)]
    pub prefill: Vec<(f64, f64)>,
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

/// The compute time of a prompt's chunks on a profile: each chunk of `chunk`
/// tokens costs at least a floor (an iteration), or its compute when the
/// profile knows its architecture and that is longer, as the replay's
/// iteration model charges prefill (`max(iter, roofline)` per chunk). Chunk
/// `j` sees a context of `j × chunk` tokens, so its compute grows with `j`
/// (attention) and the chunks a floor covers are a prefix.
#[derive(Debug, Clone)]
pub struct ChunkCosts {
    chunk: u64,
    roofline: bool,
    /// Compute time of full chunk `j`, seconds.
    roof: Vec<f64>,
    /// `roof_sum[j]`: the sum of the first `j` of them.
    roof_sum: Vec<f64>,
}

impl ChunkCosts {
    /// The costs of `profile`'s chunks for prompts of at most `max_prompt` tokens.
    pub fn new(profile: &dyn GpuProfile, max_prompt: u64) -> ChunkCosts {
        let chunk = profile.chunk().max(1) as u64;
        let roofline = profile.has_roofline();
        let full = if roofline {
            max_prompt.div_ceil(chunk)
        } else {
            0
        };
        let roof: Vec<f64> = (0..full)
            .map(|j| {
                let q = u32::try_from(j * chunk).unwrap_or(u32::MAX);
                profile.prefill_roofline_s(chunk as u32, q).unwrap_or(0.0)
            })
            .collect();
        let mut roof_sum = Vec::with_capacity(roof.len() + 1);
        roof_sum.push(0.0);
        for r in &roof {
            roof_sum.push(roof_sum.last().copied().unwrap_or(0.0) + r);
        }
        ChunkCosts {
            chunk,
            roofline,
            roof,
            roof_sum,
        }
    }

    /// Tokens per chunk.
    pub fn chunk(&self) -> u64 {
        self.chunk
    }

    /// Seconds of the first `k` full chunks when each takes at least `floor`.
    pub fn first_s(&self, k: u64, floor: f64) -> f64 {
        if !self.roofline {
            return k as f64 * floor;
        }
        let known = (k as usize).min(self.roof.len());
        let cut = self.roof[..known].partition_point(|&r| r < floor);
        let mut s = cut as f64 * floor + (self.roof_sum[known] - self.roof_sum[cut]);
        // Past the table (longer prompts than it was built for): its last cost.
        let last = self.roof.last().copied().unwrap_or(0.0).max(floor);
        s += (k as usize - known) as f64 * last;
        s
    }

    /// Seconds of full chunk `j` (at least `floor`).
    pub fn one_s(&self, j: u64, floor: f64) -> f64 {
        match self.roof.get(j as usize) {
            Some(&r) if self.roofline => r.max(floor),
            _ => self.first_s(j + 1, floor) - self.first_s(j, floor),
        }
    }
}

/// What a request costs a pool whose GPUs hold `n_slots` sequences in the
/// reference's slot model: the slot is held for the prompt's `ceil(l_in /
/// chunk)` chunks (each at least the full batch's iteration `iter(n_slots,
/// l_in + l_out)`, see [`ChunkCosts`]) and `l_out` decode iterations; the
/// prefill the request waits for is its chunks at `iter(1)`. Without a
/// roofline (the manual profiles) this is the reference's `(k + l_out) ×
/// iter(n, L)` and `k × iter(1)` exactly. The calibration, the slot-level
/// simulations and the power planner share it.
pub struct ServiceModel<'a> {
    profile: &'a dyn GpuProfile,
    n_slots: u64,
    costs: ChunkCosts,
}

impl<'a> ServiceModel<'a> {
    /// The model of `profile` for prompts of at most `max_prompt` tokens.
    pub fn new(profile: &'a dyn GpuProfile, n_slots: u64, max_prompt: u64) -> ServiceModel<'a> {
        ServiceModel {
            profile,
            n_slots,
            costs: ChunkCosts::new(profile, max_prompt),
        }
    }

    /// `(service seconds, prefill seconds)` of a request.
    pub fn cost(&self, l_in: u32, l_out: u32) -> (f64, f64) {
        let iter = self
            .profile
            .iter_s(self.n_slots as f64, l_in as f64 + l_out as f64);
        let k = (l_in as u64).div_ceil(self.costs.chunk());
        let service = self.costs.first_s(k, iter) + l_out as f64 * iter;
        (service, self.costs.first_s(k, self.profile.iter_n_s(1.0)))
    }
}

/// The running sums of a calibration.
#[derive(Default)]
struct Sums {
    es: f64,
    es2: f64,
    /// Prefill time by bin: (probability, probability × seconds).
    prefill: BTreeMap<i64, (f64, f64)>,
    /// The last bin and its sums not yet in `prefill` (consecutive lengths
    /// mostly share a bin, so the map is touched once per run of them).
    pending: Option<(i64, (f64, f64))>,
}

/// Relative width of a prefill-time bin: requests within 0.5 % of each other
/// share an atom (at its mean), which keeps the P99 of wait + prefill cheap
/// to evaluate and moves it by less than that.
const PREFILL_BIN: f64 = 0.005;

impl Sums {
    fn add(&mut self, w: f64, (s, prefill): (f64, f64)) {
        self.es += w * s;
        self.es2 += w * s * s;
        let bin = if prefill > 0.0 {
            (prefill.ln() / PREFILL_BIN.ln_1p()).floor() as i64
        } else {
            i64::MIN
        };
        match &mut self.pending {
            Some((b, (pr, t))) if *b == bin => {
                *pr += w;
                *t += w * prefill;
            }
            pending => {
                if let Some((b, acc)) = pending.replace((bin, (w, w * prefill))) {
                    let e = self.prefill.entry(b).or_insert((0.0, 0.0));
                    e.0 += acc.0;
                    e.1 += acc.1;
                }
            }
        }
    }

    /// The prefill atoms `(seconds, probability)` by increasing time.
    fn prefill(mut self) -> Vec<(f64, f64)> {
        if let Some((b, acc)) = self.pending.take() {
            let e = self.prefill.entry(b).or_insert((0.0, 0.0));
            e.0 += acc.0;
            e.1 += acc.1;
        }
        self.prefill
            .into_values()
            .filter(|&(pr, _)| pr > 0.0)
            .map(|(pr, t)| (t / pr, pr))
            .collect()
    }
}

/// Calls `f(weight, (l_in, l_out))` for every request of the slice of `cdf`
/// between `lo_clamp` and `pool_max`, the weights summing to 1. A trace's
/// pairs each weigh `1/n`. For a CDF, interval `i` contributes `F_i −
/// F_(i−1)`, spread uniformly over the integer lengths `max(lo_clamp,
/// t_(i−1) + 1) ..= min(pool_max, t_i)` split 80/20, or placed at `pool_max`
/// when that range is empty. Sampled: `n` draws of `1/n` each.
pub fn for_each_request(
    cdf: &Cdf,
    lo_clamp: u64,
    pool_max: u32,
    method: CalibrationMethod,
    seed: u64,
    mut f: impl FnMut(f64, (u32, u32)),
) {
    match (method, cdf.pairs.as_deref()) {
        (CalibrationMethod::Exact, Some(pairs)) => {
            let w = 1.0 / pairs.len() as f64;
            for &p in pairs {
                f(w, p);
            }
        }
        (CalibrationMethod::Exact, None) => {
            let mut prev_t = 0u64;
            let mut prev_f = 0.0;
            for &(t, cf) in &cdf.points {
                let pr = cf - prev_f;
                if pr > 0.0 {
                    let lo = lo_clamp.max(prev_t + 1);
                    let hi = (pool_max as u64).min(t);
                    if lo > hi {
                        f(pr, split_lengths(pool_max as u64));
                    } else {
                        let w = pr / (hi - lo + 1) as f64;
                        for len in lo..=hi {
                            f(w, split_lengths(len));
                        }
                    }
                }
                prev_t = t;
                prev_f = cf;
            }
        }
        (CalibrationMethod::Sampled(n), _) => {
            let mut rng = Pcg64::seed_from_u64(seed);
            let w = 1.0 / n.max(1) as f64;
            for _ in 0..n.max(1) {
                f(w, cdf.sample_lengths(lo_clamp, pool_max as u64, &mut rng));
            }
        }
    }
}

/// Calibrates the slice of `cdf` between `lo_clamp` and `pool_max` on
/// `profile` for the slot model (requests as [`for_each_request`] gives them;
/// a trace's pair longer than `pool_max` is served as is: the planner refuses
/// those before calibrating).
pub fn calibrate(
    cdf: &Cdf,
    lo_clamp: u64,
    pool_max: u32,
    profile: &dyn GpuProfile,
    method: CalibrationMethod,
    seed: u64,
) -> Calibration {
    let n_slots = profile.n_slots(pool_max);
    let longest = cdf.pairs.as_deref().map_or(pool_max as u64, |p| {
        p.iter().map(|x| x.0 as u64).max().unwrap_or(1)
    });
    let model = ServiceModel::new(profile, n_slots, longest.max(pool_max as u64));
    let at = |(l_in, l_out): (u32, u32)| model.cost(l_in, l_out);
    let mut sums = Sums::default();
    for_each_request(cdf, lo_clamp, pool_max, method, seed, |w, p| {
        sums.add(w, at(p))
    });
    let (es, es2) = (sums.es, sums.es2);
    let prefill = sums.prefill();
    let cv2 = (es2 / (es * es) - 1.0).max(0.01);
    Calibration {
        mean_service_s: es,
        cv2,
        n_slots,
        mean_prefill_s: prefill.iter().map(|(t, pr)| t * pr).sum(),
        mu_gpu: n_slots as f64 / es,
        prefill,
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
