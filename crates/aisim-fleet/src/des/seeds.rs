//! Several seeds of one simulation: a bounded thread pool, and the mean and
//! 95 % interval of a statistic over them.

use serde::Serialize;

/// Mean and 95 % interval of a statistic over seeds.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Interval {
    /// Mean.
    pub mean: f64,
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

impl Interval {
    /// The interval cut to the statistic's range (a compliance is in [0, 1],
    /// a latency is at least 0): a t-interval over few seeds can overshoot it.
    pub fn within(self, lo: f64, hi: f64) -> Interval {
        Interval {
            mean: self.mean,
            lo: self.lo.clamp(lo, hi),
            hi: self.hi.clamp(lo, hi),
        }
    }
}

/// Student-t 97.5 % quantiles for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// Mean and 95 % t-interval of `xs` (a point when there is one value).
pub fn interval(xs: &[f64]) -> Interval {
    let n = xs.len();
    let mean = xs.iter().sum::<f64>() / n.max(1) as f64;
    if n < 2 {
        return Interval {
            mean,
            lo: mean,
            hi: mean,
        };
    }
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let t = T975.get(n - 2).copied().unwrap_or(1.96);
    let h = t * sd / (n as f64).sqrt();
    Interval {
        mean,
        lo: mean - h,
        hi: mean + h,
    }
}

/// Runs `seeds` independent seeds (seed, seed+1, ...) on a pool of at most
/// `available_parallelism` threads; the results come back in seed order, so
/// they do not depend on the scheduling.
pub fn run_seeds<T: Send>(seeds: u64, seed: u64, f: impl Fn(u64) -> T + Sync) -> Vec<T> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    run_seeds_on(workers, seeds, seed, f)
}

/// [`run_seeds`] on at most `workers` threads.
pub fn run_seeds_on<T: Send>(
    workers: usize,
    seeds: u64,
    seed: u64,
    f: impl Fn(u64) -> T + Sync,
) -> Vec<T> {
    let next = std::sync::atomic::AtomicU64::new(0);
    let workers = (workers.max(1) as u64).min(seeds.max(1)) as usize;
    let mut done: Vec<(u64, T)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if k >= seeds {
                            return mine;
                        }
                        mine.push((k, f(seed.wrapping_add(k))));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_by_key(|(k, _)| *k);
    done.into_iter().map(|(_, t)| t).collect()
}
