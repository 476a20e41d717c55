//! A bounded thread pool for independent simulations (one per seed, or one
//! per run of a sweep), results in seed order. The replay's seeds, sweeps and
//! the fleet planners' simulations all run on it.

/// Runs `seeds` independent seeds (seed, seed+1, ...) on a pool of at most
/// `available_parallelism` threads; the results come back in seed order, so
/// they do not depend on the scheduling.
pub fn run_seeds<T: Send>(seeds: u64, seed: u64, f: impl Fn(u64) -> T + Sync) -> Vec<T> {
    run_seeds_on(available_threads(), seeds, seed, f)
}

thread_local! {
    static ON_POOL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this thread is one of a pool's (the pool keeps the cores busy
/// already: a run on it has no core to split its work onto).
pub fn on_pool_thread() -> bool {
    ON_POOL.with(|c| c.get())
}

/// Whether a second core is there for this thread's work: the machine has
/// two or more and this is not a pool's thread.
pub fn second_core_free() -> bool {
    !on_pool_thread() && available_threads() >= 2
}

/// Threads the machine runs at once (1 when it cannot tell).
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// [`run_seeds`] on at most `workers` threads.
pub fn run_seeds_on<T: Send>(
    workers: usize,
    seeds: u64,
    seed: u64,
    f: impl Fn(u64) -> T + Sync,
) -> Vec<T> {
    let next = std::sync::atomic::AtomicU64::new(0);
    // The caller's cancel flag goes with the work to every worker.
    let flag = crate::cancel::current();
    let workers = (workers.max(1) as u64).min(seeds.max(1)) as usize;
    if workers == 1 {
        // One worker runs on the calling thread: nothing to share, and the
        // runs then use the same thread (and allocator arena) as a lone replay.
        return (0..seeds).map(|k| f(seed.wrapping_add(k))).collect();
    }
    let mut done: Vec<(u64, T)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let flag = flag.clone();
                let (next, f) = (&next, &f);
                s.spawn(move || {
                    ON_POOL.with(|c| c.set(true));
                    crate::cancel::with_flag(flag, || {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_callers_cancel_flag_reaches_every_worker_for_the_call_only() {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        assert!(crate::cancel::current().is_none());
        let flag = Arc::new(AtomicBool::new(true));
        let seen = crate::cancel::with_flag(Some(flag), || {
            run_seeds_on(
                2,
                4,
                0,
                |_| crate::cancel::is_set(&crate::cancel::current()),
            )
        });
        assert_eq!(seen, vec![true; 4]);
        assert!(crate::cancel::current().is_none());
    }
}
