//! Scheduler cores: what each backend does in one pass.
//!
//! A core owns the KV pool and the request states of one rank. `schedule` picks
//! the pass's work and allocates its blocks; `finish` applies the pass's results
//! (tokens, completions) when its time is up.

mod seq;
mod sglang;
mod vllm;

use std::fmt::Debug;

pub(crate) use seq::DecodeBatch;
pub(crate) use sglang::SglangCore;
pub(crate) use vllm::VllmCore;

use crate::kv::KvCache;
use crate::outcome::{DecodeSink, EngineEvent, EngineStats, RankLoad, RejectReason};
use crate::request::{Request, RequestId};
use crate::time::SimTime;
use crate::timing::PrefillChunk;

/// The work one rank does in one pass, as the timing model sees it.
#[derive(Debug, Default, Clone)]
pub(crate) struct RankPlan {
    pub prefill: Vec<PrefillChunk>,
    pub decode_requests: u32,
    pub decode_context_tokens: u64,
}

impl RankPlan {
    pub fn clear(&mut self) {
        self.prefill.clear();
        self.decode_requests = 0;
        self.decode_context_tokens = 0;
    }
    pub fn is_empty(&self) -> bool {
        self.prefill.is_empty() && self.decode_requests == 0
    }
}

/// How a request of a disaggregated run enters a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handoff {
    /// A prefill worker's hidden one-token job: its blocks stay held after
    /// it completes, until `release_held`.
    PrefillJob,
    /// A decode worker's request, its prompt's KV transferred in.
    Transferred,
}

/// One rank's scheduler.
pub(crate) trait SchedulerCore: Debug + Send {
    /// Queues a request, or says why it can never be served.
    fn enqueue(&mut self, req: &Request) -> Result<(), RejectReason>;
    /// Queues a request of a disaggregated run (see `Handoff`). Only the
    /// cores whose backend `Engine::check_handoff` admits implement it.
    fn enqueue_handoff(&mut self, req: &Request, how: Handoff) -> Result<(), RejectReason> {
        let _ = (req, how);
        unreachable!("Engine::check_handoff refuses this backend first")
    }
    /// Requests running and waiting (what `load` counts, without its sums:
    /// each core counts its own queues, so this never walks them).
    fn requests(&self) -> u32;
    /// Frees the blocks of a completed prefill job; false when it held none.
    fn release_held(&mut self, _id: RequestId) -> bool {
        false
    }
    /// Whether anything is waiting or running.
    fn has_work(&self) -> bool;
    /// Picks this pass's work into `plan` (cleared by the caller).
    fn schedule(&mut self, plan: &mut RankPlan);
    /// Applies the pass's results, appending what became visible.
    fn finish(&mut self, out: &mut Vec<EngineEvent>);
    /// Load as routers see it.
    fn load(&self) -> RankLoad;
    /// The rank's KV pool.
    fn pool(&self) -> &dyn KvCache;
    /// The rank's KV pool, for event capture.
    fn pool_mut(&mut self) -> &mut dyn KvCache;
    /// Counters.
    fn stats(&self) -> EngineStats;
    /// Prompt tokens of `req` this rank would reuse from its cache now.
    fn cached_prefix_tokens(&self, req: &Request) -> u32;
    /// Removes a request wherever it is (a timeout); true when it was here.
    fn abort(&mut self, id: RequestId) -> bool;
    /// The next pass, if `schedule` would make it a pure decode pass (see
    /// `DecodeBatch`). Read-only.
    fn steady_decode(&self) -> Option<DecodeBatch>;
    /// Runs the pass `steady_decode` described, start to end (`schedule` and
    /// `finish` in one go, with the same effects), reporting to `sink`; the
    /// pass ends at `end`. Returns what `steady_decode` would say next.
    fn run_decode_pass(
        &mut self,
        start: SimTime,
        end: SimTime,
        sink: &mut dyn DecodeSink,
    ) -> Option<DecodeBatch>;
    /// Runs `passes` of the quiet passes `steady_decode` announced: each
    /// running request emits that many tokens. Their ids go into `ids`, in
    /// the order `run_decode_pass` reports tokens.
    fn advance_quiet(&mut self, passes: u32, ids: &mut Vec<RequestId>);
}
