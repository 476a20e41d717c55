//! The batch model of a pool, aisim's default sizing model: every GPU runs
//! continuous batching with chunked prefill the way the replay's engines do,
//! so a GPU, not a KV slot, is the server.
//!
//! A GPU with `n` sequences running runs passes back to back; a pass costs
//! `iter(n) = W + H·(L̄/ctx)·n` (the profile's iteration model at the running
//! sequences' mean context `L̄`), a prompt chunk at least that much (or its
//! compute, [`ChunkCosts`]), and every running sequence gains a token per
//! pass. With `λ_g` requests per second per GPU:
//!
//! - prefill work `u(n) = λ_g · E[work(n)]`: the share of time spent in
//!   prompt chunks (a prompt's last chunk counted by the share of it filled,
//!   since the engine packs several prompts into one chunk);
//! - a token every `τ(n) = iter(n) / (1 − u(n))` per running sequence (the
//!   passes left between chunks);
//! - Little's law fixes the batch: `n = λ_g · (E[P(n)] + E[l_out] · τ(n))`,
//!   `P(n)` a prompt's chunks at `iter(n)` each. The least root is the
//!   operating point; with no root below the most sequences a GPU holds
//!   (`max_num_seqs`, and its KV tokens over `L̄`) the GPU is overloaded.
//!
//! The TTFT is the wait for a GPU's prompt work in an M/G/c queue of the
//! pool's GPUs (service `work(n)`, Kimura's tail) plus the request's own
//! prefill `P(n)`, its P99 taken over both ([`p99_wait_plus`]). A GPU's
//! capacity `μ_gpu` is the largest `λ_g` with an operating point.

use aisim_core::profile::GpuProfile;
use aisim_core::EngineConfig;

use crate::calibrate::CalibrationMethod;
use crate::calibrate::{for_each_request, ChunkCosts};
use crate::cdf::Cdf;
use crate::erlang::{p99_of_atoms, p99_wait, p99_wait_plus};

/// Bisection and search steps of the operating point and the capacity.
const STEPS: u32 = 100;

/// A pool's workload on a profile in the batch model.
#[derive(Debug, Clone)]
pub struct BatchModel {
    costs: ChunkCosts,
    /// `(chunks k ≥ 1, probability, mean share of the last chunk filled)`.
    prompts: Vec<(u64, f64, f64)>,
    /// Mean output tokens.
    mean_out: f64,
    /// Mean context of a running sequence, tokens: `E[l_out·(l_in + l_out/2)] / E[l_out]`.
    pub mean_ctx: f64,
    /// `iter(n) = w_s + slope_s · n`.
    w_s: f64,
    slope_s: f64,
    /// Most sequences a GPU runs: `max_num_seqs` and its KV tokens over `L̄`.
    pub n_cap: f64,
    /// Requests per second one GPU sustains (the largest rate with an operating point).
    pub mu_gpu: f64,
}

/// A GPU's operating point at a rate.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchState {
    /// Sequences running.
    pub n: f64,
    /// Seconds of one pass.
    pub iter_s: f64,
    /// Share of time in prompt chunks.
    pub prefill_util: f64,
    /// Mean prompt work of a request, seconds.
    pub mean_work_s: f64,
    /// Its squared coefficient of variation (at least 0.01).
    pub cv2: f64,
    /// A request's own prefill: `(seconds, probability)` by increasing time.
    pub prefill: Vec<(f64, f64)>,
}

impl BatchModel {
    /// The model of the slice of `cdf` between `lo_clamp` and `pool_max` on `profile`.
    pub fn new(
        cdf: &Cdf,
        lo_clamp: u64,
        pool_max: u32,
        profile: &dyn GpuProfile,
        method: CalibrationMethod,
        seed: u64,
    ) -> BatchModel {
        let chunk = profile.chunk().max(1) as u64;
        let mut by_k: std::collections::BTreeMap<u64, (f64, f64)> = Default::default();
        let (mut out, mut weighted_ctx, mut longest) = (0.0, 0.0, 1u64);
        for_each_request(cdf, lo_clamp, pool_max, method, seed, |w, (l_in, l_out)| {
            let l_in = l_in.max(1) as u64;
            let k = l_in.div_ceil(chunk);
            let fill = (l_in - (k - 1) * chunk) as f64 / chunk as f64;
            let e = by_k.entry(k).or_insert((0.0, 0.0));
            e.0 += w;
            e.1 += w * fill;
            out += w * l_out as f64;
            weighted_ctx += w * l_out as f64 * (l_in as f64 + l_out as f64 / 2.0);
            longest = longest.max(l_in);
        });
        let prompts = by_k
            .into_iter()
            .filter(|(_, (pr, _))| *pr > 0.0)
            .map(|(k, (pr, fill))| (k, pr, fill / pr))
            .collect();
        let mean_ctx = if out > 0.0 { weighted_ctx / out } else { 1.0 };
        let kv_tokens = (profile.total_kv_blks() * profile.blk_size() as u64) as f64;
        let max_seqs = EngineConfig::default().max_num_seqs as f64;
        let mut m = BatchModel {
            costs: ChunkCosts::new(profile, longest),
            prompts,
            mean_out: out,
            mean_ctx,
            w_s: profile.w_s(),
            slope_s: profile.h_s() * mean_ctx / profile.calibration_ctx().max(1) as f64,
            n_cap: max_seqs.min(kv_tokens / mean_ctx.max(1.0)).max(1.0),
            mu_gpu: 0.0,
        };
        m.mu_gpu = m.capacity();
        m
    }

    fn iter_s(&self, n: f64) -> f64 {
        self.w_s + self.slope_s * n
    }

    /// Mean prompt work and mean own prefill (seconds) with passes of `iter` seconds.
    fn means(&self, iter: f64) -> (f64, f64) {
        self.prompts
            .iter()
            .fold((0.0, 0.0), |(work, own), &(k, pr, fill)| {
                let before = self.costs.first_s(k - 1, iter);
                let last = self.costs.one_s(k - 1, iter);
                (
                    work + pr * (before + fill * last),
                    own + pr * (before + last),
                )
            })
    }

    /// `λ_g · (E[P(n)] + E[l_out]·τ(n)) − n`, infinite when the prompt work
    /// alone fills the GPU.
    fn excess(&self, lam_g: f64, n: f64) -> f64 {
        let iter = self.iter_s(n);
        let (work, own) = self.means(iter);
        let u = lam_g * work;
        if u >= 1.0 {
            return f64::INFINITY;
        }
        lam_g * (own + self.mean_out * iter / (1.0 - u)) - n
    }

    /// The least batch `n ≤ n_cap` where Little's law holds at `lam_g`, or
    /// `None` (overloaded). The excess is convex in `n`, so its minimum is
    /// found by ternary search and the root below it by bisection.
    fn batch_at(&self, lam_g: f64) -> Option<f64> {
        if lam_g <= 0.0 {
            return Some(0.0);
        }
        let (mut a, mut b) = (0.0, self.n_cap);
        for _ in 0..STEPS {
            let (m1, m2) = (a + (b - a) / 3.0, b - (b - a) / 3.0);
            if self.excess(lam_g, m1) <= self.excess(lam_g, m2) {
                b = m2;
            } else {
                a = m1;
            }
        }
        let low = (a + b) / 2.0;
        if self.excess(lam_g, low) > 0.0 && self.excess(lam_g, self.n_cap) > 0.0 {
            return None;
        }
        let high = if self.excess(lam_g, low) <= 0.0 {
            low
        } else {
            self.n_cap
        };
        if self.excess(lam_g, 0.0) <= 0.0 {
            return Some(0.0);
        }
        let (mut lo, mut hi) = (0.0, high);
        for _ in 0..STEPS {
            let mid = (lo + hi) / 2.0;
            if self.excess(lam_g, mid) <= 0.0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi)
    }

    /// The largest rate per GPU with an operating point, req/s.
    fn capacity(&self) -> f64 {
        let (work0, _) = self.means(self.iter_s(0.0));
        if work0 <= 0.0 {
            return f64::INFINITY;
        }
        // The prompt work alone bounds the rate.
        let (mut lo, mut hi) = (0.0, 1.0 / work0);
        for _ in 0..STEPS {
            let mid = (lo + hi) / 2.0;
            if self.batch_at(mid).is_some() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The operating point at `lam_g` requests per second per GPU.
    pub fn state(&self, lam_g: f64) -> Option<BatchState> {
        let n = self.batch_at(lam_g)?;
        let iter = self.iter_s(n);
        let (mut work, mut work2) = (0.0, 0.0);
        let mut prefill = Vec::with_capacity(self.prompts.len());
        for &(k, pr, fill) in &self.prompts {
            let before = self.costs.first_s(k - 1, iter);
            let last = self.costs.one_s(k - 1, iter);
            let w = before + fill * last;
            work += pr * w;
            work2 += pr * w * w;
            prefill.push((before + last, pr));
        }
        prefill.sort_by(|a, b| a.0.total_cmp(&b.0));
        Some(BatchState {
            n,
            iter_s: iter,
            prefill_util: lam_g * work,
            mean_work_s: work,
            cv2: (work2 / (work * work) - 1.0).max(0.01),
            prefill,
        })
    }

    /// P99 TTFT (s) of `gpus` GPUs at `lam` req/s: infinite when overloaded.
    pub fn p99_ttft_s(&self, gpus: u64, lam: f64) -> f64 {
        self.queue(gpus, lam, |c, lam, mu, cv2, st| {
            p99_wait_plus(c, lam, mu, cv2, &st.prefill)
        })
    }

    /// P99 wait (s) for a GPU's prompt work.
    pub fn p99_wait_s(&self, gpus: u64, lam: f64) -> f64 {
        self.queue(gpus, lam, |c, lam, mu, cv2, _| p99_wait(c, lam, mu, cv2))
    }

    fn queue(
        &self,
        gpus: u64,
        lam: f64,
        f: impl Fn(u64, f64, f64, f64, &BatchState) -> f64,
    ) -> f64 {
        if gpus == 0 || lam / gpus as f64 >= self.mu_gpu {
            return f64::INFINITY;
        }
        match self.state(lam / gpus as f64) {
            Some(st) if st.mean_work_s > 0.0 => f(gpus, lam, 1.0 / st.mean_work_s, st.cv2, &st),
            Some(st) => st.prefill.first().map_or(0.0, |a| a.0),
            None => f64::INFINITY,
        }
    }

    /// An idle GPU's P99 prefill (s): the least any count of GPUs can reach.
    pub fn p99_prefill_s(&self) -> f64 {
        let iter = self.iter_s(0.0);
        let mut atoms: Vec<(f64, f64)> = self
            .prompts
            .iter()
            .map(|&(k, pr, _)| (self.costs.first_s(k, iter), pr))
            .collect();
        atoms.sort_by(|a, b| a.0.total_cmp(&b.0));
        p99_of_atoms(&atoms)
    }

    /// A request's `(prompt work, own prefill)` seconds at an operating point.
    pub fn cost(&self, st: &BatchState, l_in: u32) -> (f64, f64) {
        let chunk = self.costs.chunk();
        let l_in = l_in.max(1) as u64;
        let k = l_in.div_ceil(chunk);
        let fill = (l_in - (k - 1) * chunk) as f64 / chunk as f64;
        let before = self.costs.first_s(k - 1, st.iter_s);
        let last = self.costs.one_s(k - 1, st.iter_s);
        (before + fill * last, before + last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aisim_core::profile::resolve_profile;

    fn model(cdf: &Cdf, key: &str) -> BatchModel {
        let p = resolve_profile(key).unwrap();
        BatchModel::new(cdf, 1, 65536, p.as_ref(), CalibrationMethod::Exact, 0)
    }

    #[test]
    fn the_operating_point_satisfies_littles_law() {
        let azure = Cdf::builtin("azure").unwrap();
        let m = model(&azure, "h100/llama-3.1-8b");
        assert!(m.mu_gpu > 0.0 && m.mu_gpu.is_finite());
        for share in [0.1, 0.5, 0.9] {
            let lam_g = share * m.mu_gpu;
            let st = m.state(lam_g).expect("below capacity");
            assert!(m.excess(lam_g, st.n).abs() < 1e-6 * st.n.max(1.0), "{st:?}");
            assert!(st.prefill_util < 1.0 && st.n <= m.n_cap);
        }
        // Past the capacity there is no operating point.
        assert!(m.state(1.01 * m.mu_gpu).is_none());
        // More load, a bigger batch and longer passes.
        let (a, b) = (
            m.state(0.3 * m.mu_gpu).unwrap(),
            m.state(0.8 * m.mu_gpu).unwrap(),
        );
        assert!(b.n > a.n && b.iter_s > a.iter_s);
    }

    #[test]
    fn without_a_roofline_a_prompt_costs_its_chunks_at_the_pass_time() {
        // a100 (manual): no roofline; a 1,000-token prompt is 2 chunks of 512.
        let m = model(
            &Cdf::from_pairs("t".into(), vec![(1000, 100)]).unwrap(),
            "a100",
        );
        let st = m.state(0.5 * m.mu_gpu).unwrap();
        let (work, own) = m.cost(&st, 1000);
        assert!((own - 2.0 * st.iter_s).abs() < 1e-12);
        assert!((work - (1.0 + 488.0 / 512.0) * st.iter_s).abs() < 1e-12);
        assert!((st.mean_work_s - work).abs() < 1e-12);
        // L̄ of one pair: its prompt and half its output.
        assert!((m.mean_ctx - 1050.0).abs() < 1e-9);
    }

    #[test]
    fn the_p99_falls_as_gpus_are_added() {
        let azure = Cdf::builtin("azure").unwrap();
        let m = model(&azure, "h100/llama-3.1-8b");
        let lam = 50.0;
        let first = (lam / m.mu_gpu).ceil() as u64;
        let p: Vec<f64> = (first..first + 6).map(|n| m.p99_ttft_s(n, lam)).collect();
        assert!(p.windows(2).all(|w| w[1] <= w[0]), "{p:?}");
        assert!(*p.last().unwrap() >= m.p99_prefill_s() * 0.5);
        assert_eq!(
            m.p99_ttft_s(first.saturating_sub(1).max(1), 1e6),
            f64::INFINITY
        );
    }
}
