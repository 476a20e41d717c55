//! The (worker, rank) pairs a load- or cache-aware policy weighs: every rank
//! of the workers in use, and one stand-in for the unused workers (all idle
//! and empty, so one of them says what any would), by (worker, rank) so that
//! a choice never depends on the order a view visits them.

use super::WorkerView;

/// A (worker, rank) a policy may choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub worker: u32,
    pub rank: u32,
    /// Whether it stands for the unused workers (the lowest of them): no
    /// load, nothing cached.
    pub unused: bool,
}

/// Fills `out` with the candidates of `view`, sorted by (worker, rank).
pub(crate) fn candidates(view: &dyn WorkerView, out: &mut Vec<Candidate>) {
    out.clear();
    let dp = view.dp_size().max(1);
    view.visit_used(&mut |worker| {
        out.extend((0..dp).map(|rank| Candidate {
            worker,
            rank,
            unused: false,
        }));
    });
    if let Some(worker) = view.first_unused() {
        out.push(Candidate {
            worker,
            rank: 0,
            unused: true,
        });
    }
    out.sort_unstable_by_key(|c| (c.worker, c.rank));
}

/// How many (worker, rank) pairs the unused stand-in speaks for, given
/// `candidates` from `candidates(view, ..)`.
pub(crate) fn unused_slots(view: &dyn WorkerView, candidates: &[Candidate]) -> u64 {
    let used = candidates.iter().filter(|c| !c.unused).count() as u64;
    let all = view.accepting_count() as u64 * view.dp_size().max(1) as u64;
    all.saturating_sub(used)
}
