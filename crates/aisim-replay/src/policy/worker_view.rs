//! `WorkerView`: what a placement policy may look at. The policies read it
//! and the runtime and the tests' crafted view implement it, so it lives
//! below all of them: the crafted view, which placement's tests use, then
//! names nothing of `placement.rs`.

use aisim_core::{RankLoad, Request};

/// What a policy may look at: the live state of every worker, computed on demand
/// (a policy that does not look pays nothing).
pub trait WorkerView {
    /// Workers.
    fn workers(&self) -> u32;
    /// DP ranks per worker.
    fn dp_size(&self) -> u32;
    /// Whether a worker takes new requests (not starting up, not draining).
    fn accepting(&self, worker: u32) -> bool;
    /// Load of one rank.
    fn load(&self, worker: u32, rank: u32) -> RankLoad;
    /// Prompt tokens of `req` that rank would serve from its prefix cache now.
    fn cached_prefix_tokens(&self, worker: u32, rank: u32, req: &Request) -> u32;
    /// Accepting workers (the default counts them).
    fn accepting_count(&self) -> u32 {
        (0..self.workers()).filter(|&w| self.accepting(w)).count() as u32
    }
    /// The `n`-th accepting worker (0-based, by index; the default scans).
    fn nth_accepting(&self, n: u32) -> Option<u32> {
        (0..self.workers())
            .filter(|&w| self.accepting(w))
            .nth(n as usize)
    }
    /// Calls `visit` with every accepting worker that may hold requests or
    /// cache, in any order; every other accepting worker is unused (no load,
    /// nothing cached). The default visits every accepting worker.
    fn visit_used(&self, visit: &mut dyn FnMut(u32)) {
        for w in (0..self.workers()).filter(|&w| self.accepting(w)) {
            visit(w);
        }
    }
    /// The lowest accepting worker `visit_used` skips, if any (the default
    /// skips none).
    fn first_unused(&self) -> Option<u32> {
        None
    }
}
