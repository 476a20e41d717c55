//! Slot-level M/G/c simulation: every KV slot is a server; requests are served
//! first come, first served by the earliest-free slot. It checks the analytic
//! sizing without the Erlang-C / Kimura approximations.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand_core::SeedableRng;
use rand_pcg::Pcg64;
use serde::Serialize;

use crate::workload::exponential;

/// An `f64` with a total order, for the heap of slot free times.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Time(f64);
impl Eq for Time {}
impl PartialOrd for Time {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Time {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// Waits and TTFTs of the measured requests.
#[derive(Debug, Clone, Serialize)]
pub struct MgcResult {
    /// Requests measured (after warm-up).
    pub measured: u64,
    /// Mean wait, s.
    pub mean_wait_s: f64,
    /// P99 wait, s (nearest rank).
    pub p99_wait_s: f64,
    /// P99 TTFT (wait + prefill), ms.
    pub p99_ttft_ms: f64,
}

/// Simulates `n` Poisson arrivals at `lam` on `servers` slots, dropping the first
/// `warmup` from the statistics. `draw` gives each request's (service s, prefill s).
pub fn simulate_mgc(
    lam: f64,
    servers: u64,
    n: u64,
    warmup: u64,
    seed: u64,
    mut draw: impl FnMut(&mut Pcg64) -> (f64, f64),
) -> MgcResult {
    let mut rng = Pcg64::seed_from_u64(seed);
    // n requests never use more than n servers: the rest would stay free at 0.
    let mut free: BinaryHeap<Reverse<Time>> = (0..servers.min(n).max(1))
        .map(|_| Reverse(Time(0.0)))
        .collect();
    let mut t = 0.0;
    let mut waits = Vec::with_capacity(n.saturating_sub(warmup) as usize);
    let mut ttfts = Vec::with_capacity(waits.capacity());
    for i in 0..n {
        t += exponential(&mut rng, lam);
        let (service, prefill) = draw(&mut rng);
        let Reverse(Time(at)) = free.pop().expect("at least one server");
        let start = at.max(t);
        free.push(Reverse(Time(start + service)));
        if i >= warmup {
            waits.push(start - t);
            ttfts.push((start - t + prefill) * 1e3);
        }
    }
    let m = waits.len().max(1);
    let mean = waits.iter().sum::<f64>() / m as f64;
    MgcResult {
        measured: waits.len() as u64,
        mean_wait_s: mean,
        p99_wait_s: crate::percentile(&mut waits, 99.0),
        p99_ttft_ms: crate::percentile(&mut ttfts, 99.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::erlang::{mean_wait_mmc, p99_wait};
    use crate::workload::gamma;

    #[test]
    fn exponential_service_reproduces_erlang_c() {
        // c = 10, μ = 1, ρ = 0.8: C = 0.409, mean wait 0.2046 s, P99 1.8558 s.
        let r = simulate_mgc(8.0, 10, 2_000_000, 100_000, 3, |rng| {
            (exponential(rng, 1.0), 0.0)
        });
        let mean = mean_wait_mmc(10, 8.0, 1.0);
        let p99 = p99_wait(10, 8.0, 1.0, 1.0);
        assert!(
            (r.mean_wait_s / mean - 1.0).abs() < 0.03,
            "mean {} vs {mean}",
            r.mean_wait_s
        );
        assert!(
            (r.p99_wait_s / p99 - 1.0).abs() < 0.05,
            "p99 {} vs {p99}",
            r.p99_wait_s
        );
    }

    #[test]
    fn kimura_is_close_for_gamma_service() {
        // Gamma service with mean 1 and cv² = 4 (shape 1/4), c = 10, ρ = 0.8.
        let r = simulate_mgc(8.0, 10, 2_000_000, 100_000, 5, |rng| {
            (gamma(rng, 0.25, 4.0), 0.0)
        });
        let kimura = p99_wait(10, 8.0, 1.0, 4.0);
        assert!(
            (kimura / r.p99_wait_s - 1.0).abs() < 0.15,
            "kimura {kimura} vs simulated {}",
            r.p99_wait_s
        );
    }
}
