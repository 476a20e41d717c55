//! `Tally`: what the report needs of every request, folded in when the request
//! is dispatched and when it ends, so a record lives only while its request
//! is in flight. Counts and token sums are exact integers; distributions are
//! exact up to `EXACT_LIMIT` values each (see `distribution.rs`).

use std::collections::{BTreeMap, HashMap};

use aisim_core::hashing::IntHashBuilder;

use aisim_core::RejectReason;

use crate::curves::ReportCdfs;
use crate::distribution::Distribution;
use crate::record::{Outcome, RequestRecord};
use crate::spec::SlaSpec;
use crate::timeseries::RequestSeries;
use aisim_core::summary::{ms, Summary};

/// The kind of a request refused because the router queue was full.
pub const ROUTER_QUEUE_FULL: &str = "router_queue_full";

/// Every kind a rejection is counted under, as the report spells it: the
/// engine's reasons, and `ROUTER_QUEUE_FULL`. A kind with no rejection is
/// not listed.
pub const REJECT_KINDS: [&str; 6] = [
    "empty_prompt",
    "longer_than_max_model_len",
    "larger_than_kv_cache",
    "fills_sglang_pool",
    "prompt_over_batch_budget",
    ROUTER_QUEUE_FULL,
];

/// The short name a rejection is counted under (the record keeps the details).
pub fn reject_kind(reason: &RejectReason) -> &'static str {
    match reason {
        RejectReason::EmptyPrompt => "empty_prompt",
        RejectReason::LongerThanMaxModelLen { .. } => "longer_than_max_model_len",
        RejectReason::LargerThanKvCache { .. } => "larger_than_kv_cache",
        RejectReason::FillsSglangPool { .. } => "fills_sglang_pool",
        RejectReason::PromptOverBatchBudget { .. } => "prompt_over_batch_budget",
    }
}

/// Requests in flight (dispatched, not ended) over time, folded as edges
/// arrive: the peak and the integral.
///
/// The runtime records a dispatch at its time and never records an end
/// earlier than the latest dispatch, so the count seen when time first moves
/// past a dispatch time is the count at that time (ends at the same instant
/// first, as a sort of the edges by `(time, −1 before +1)` would take them).
#[derive(Debug, Default, Clone)]
pub struct InFlightCurve {
    count: u64,
    last_dispatch_ns: u64,
    unsettled: bool,
    peak: u64,
    busy_ns: u128,
}

impl InFlightCurve {
    fn settle(&mut self, at_ns: u64) {
        if self.unsettled && at_ns > self.last_dispatch_ns {
            self.peak = self.peak.max(self.count);
            self.unsettled = false;
        }
    }

    fn dispatched(&mut self, at_ns: u64) {
        self.settle(at_ns);
        self.last_dispatch_ns = at_ns;
        self.unsettled = true;
        self.count += 1;
    }

    fn ended(&mut self, dispatch_ns: u64, end_ns: u64) {
        self.settle(end_ns);
        self.count -= 1;
        self.busy_ns += end_ns.saturating_sub(dispatch_ns) as u128;
    }

    /// Largest number in flight.
    pub fn peak(&self) -> u64 {
        let open = if self.unsettled { self.count } else { 0 };
        self.peak.max(open)
    }

    /// ∫ in flight dt, request-nanoseconds.
    pub fn busy_ns(&self) -> f64 {
        self.busy_ns as f64
    }
}

/// Latency values of the cohort's completed requests, ms (speed in tok/s).
#[derive(Debug, Default, Clone)]
pub struct LatencyValues {
    /// First token − planned arrival.
    pub ttft: Distribution,
    /// First token − dispatch.
    pub ttft_from_dispatch: Distribution,
    /// Per-token time after the first.
    pub tpot: Distribution,
    /// Terminal − planned arrival.
    pub e2e: Distribution,
    /// Terminal − dispatch.
    pub e2e_from_dispatch: Distribution,
    /// Tokens after the first per second.
    pub output_speed: Distribution,
    /// Dispatch − planned arrival.
    pub dispatch_delay: Distribution,
}

/// Token lengths counted per distinct value: exact at any request count, in
/// memory that follows the distinct lengths (a few thousand), not the
/// requests.
#[derive(Debug, Default, Clone)]
pub struct LengthCounts(HashMap<u32, u64, IntHashBuilder>);

impl LengthCounts {
    /// Counts one length.
    pub fn add(&mut self, tokens: u32) {
        *self.0.entry(tokens).or_insert(0) += 1;
    }

    /// The summary, exact.
    pub fn summary(&self) -> Summary {
        let mut runs: Vec<(u32, u64)> = self.0.iter().map(|(&v, &c)| (v, c)).collect();
        runs.sort_unstable();
        Summary::of_sorted_runs(runs.into_iter().map(|(v, c)| (v as f64, c)))
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<(u32, u64)>()
    }
}

/// Completed cohort requests meeting each SLA threshold on its own.
#[derive(Debug, Default, Clone, Copy)]
pub struct SlaMet {
    /// TTFT at or under `sla.ttft_ms`.
    pub ttft: u64,
    /// TPOT at or under `sla.tpot_ms`.
    pub tpot: u64,
    /// E2E at or under `sla.e2e_ms`.
    pub e2e: u64,
}

/// The running totals of a replay.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    sla: SlaSpec,
    exact_limit: usize,
    /// Requests dispatched (cohort or not).
    pub dispatched: u64,
    /// Of which outside the cohort (warm-up).
    pub warmup: u64,
    /// Earliest planned arrival of a dispatched request, ns.
    pub first_planned_ns: Option<u64>,
    /// Earliest and latest planned arrival of a cohort request, ns.
    pub cohort_arrivals_ns: Option<(u64, u64)>,
    /// In flight over time.
    pub in_flight: InFlightCurve,
    /// Whether any request belonged to a session.
    pub any_session: bool,
    /// Sessions whose second turn was dispatched.
    pub sessions: u64,
    /// Later turns dispatched.
    pub later_turns: u64,
    /// Dispatch of a later turn − end of the previous one, ms.
    pub realized_gap_ms: Distribution,
    /// The same gap on the trace clock, ms.
    pub trace_gap_ms: Distribution,
    /// Cohort requests that completed, timed out, were rejected, or were
    /// still in flight at the end.
    pub completed: u64,
    /// Cohort requests that timed out.
    pub timed_out: u64,
    /// Cohort requests rejected.
    pub rejected: u64,
    /// Cohort requests in flight at the end.
    pub incomplete: u64,
    /// Cohort rejections by kind.
    pub rejections: BTreeMap<&'static str, u64>,
    /// Latency of completed cohort requests.
    pub latency: LatencyValues,
    /// TTFT over the cohort (with output), unfinished at infinity.
    pub offered_ttft: Distribution,
    /// E2E over the cohort, unfinished at infinity.
    pub offered_e2e: Distribution,
    /// Completed cohort requests meeting every SLA threshold.
    pub goodput: u64,
    /// Completed cohort requests meeting the TTFT, TPOT and E2E thresholds
    /// (each counted alone; a threshold not given is met by every one).
    pub sla_met: SlaMet,
    /// Prompt tokens of every cohort request, as offered.
    pub input_lengths: LengthCounts,
    /// Output tokens every cohort request asked for.
    pub output_lengths: LengthCounts,
    /// Prompt tokens of completed cohort requests.
    pub input_tokens: u64,
    /// Output tokens of completed cohort requests.
    pub output_tokens: u64,
    /// The placement policy's cache guesses against the engines' reuse.
    pub expected_reuse: ExpectedReuse,
    /// Every request over time.
    pub series: RequestSeries,
}

/// Over every request the placement policy made a cache guess for (cohort
/// or not, as the cache report counts reuse): what it expected and what
/// the engine reused at first admission.
#[derive(Debug, Default, Clone, Copy)]
pub struct ExpectedReuse {
    /// Requests with a guess.
    pub requests: u64,
    /// Prompt tokens the policy expected cached.
    pub expected_tokens: u64,
    /// Prompt tokens the engines reused at first admission, same requests.
    pub reused_tokens: u64,
    /// Requests that reused fewer tokens than expected.
    pub fell_short: u64,
}

impl Tally {
    /// The latency curves of the run's totals (sorting their exact values
    /// in place, which the report's percentiles then find sorted).
    pub fn cdfs(&mut self) -> ReportCdfs {
        let l = &mut self.latency;
        ReportCdfs {
            ttft_ms: l.ttft.cdf(),
            tpot_ms: l.tpot.cdf(),
            e2e_ms: l.e2e.cdf(),
            realized_gap_ms: self.realized_gap_ms.cdf(),
            trace_gap_ms: self.trace_gap_ms.cdf(),
        }
    }

    /// Totals measuring goodput against `sla`, each distribution exact up to
    /// `exact_limit` values.
    pub fn new(sla: SlaSpec, exact_limit: usize) -> Tally {
        let d = || Distribution::with_limit(exact_limit);
        Tally {
            sla,
            exact_limit,
            realized_gap_ms: d(),
            trace_gap_ms: d(),
            latency: LatencyValues {
                ttft: d(),
                ttft_from_dispatch: d(),
                tpot: d(),
                e2e: d(),
                e2e_from_dispatch: d(),
                output_speed: d(),
                dispatch_delay: d(),
            },
            offered_ttft: d(),
            offered_e2e: d(),
            ..Tally::default()
        }
    }

    /// A request was dispatched; `gap_after_previous_ns` is, for a later turn,
    /// its dispatch − the end of the previous turn.
    pub fn dispatched(&mut self, r: &RequestRecord, gap_after_previous_ns: Option<u64>) {
        self.dispatched += 1;
        self.warmup += u64::from(!r.in_cohort);
        self.first_planned_ns = Some(
            self.first_planned_ns
                .map_or(r.planned_ns, |t| t.min(r.planned_ns)),
        );
        if r.in_cohort {
            let t = r.planned_ns;
            self.cohort_arrivals_ns = Some(
                self.cohort_arrivals_ns
                    .map_or((t, t), |(lo, hi)| (lo.min(t), hi.max(t))),
            );
        }
        self.in_flight.dispatched(r.dispatch_ns);
        if r.session.is_some() {
            self.any_session = true;
            self.sessions += u64::from(r.turn == 1);
            if r.turn > 0 {
                self.later_turns += 1;
                if let Some(g) = gap_after_previous_ns {
                    self.realized_gap_ms.add(ms(g));
                }
                if let Some(g) = RequestRecord::at(r.trace_gap_ns) {
                    self.trace_gap_ms.add(ms(g));
                }
            }
        }
    }

    /// A request ended (or the run did, at `end_ns`, with it in flight).
    pub fn ended(&mut self, r: &RequestRecord, end_ns: u64) {
        self.in_flight.ended(r.dispatch_ns, end_ns);
        if let Some(expected) = r.expected_cached_tokens {
            let e = &mut self.expected_reuse;
            e.requests += 1;
            e.expected_tokens += u64::from(expected);
            e.reused_tokens += u64::from(r.reused_first);
            e.fell_short += u64::from(r.reused_first < expected);
        }
        let admitted = RequestRecord::at(r.first_admit_ns);
        self.series
            .request(r.dispatch_ns, admitted, end_ns, r.outcome);
        if !r.in_cohort {
            return;
        }
        match r.outcome {
            Outcome::Completed => self.completed += 1,
            Outcome::TimedOut => self.timed_out += 1,
            Outcome::Rejected => self.rejected += 1,
            Outcome::Incomplete => self.incomplete += 1,
        }
        if let Some(kind) = r.reject_kind {
            *self.rejections.entry(kind).or_insert(0) += 1;
        }
        self.input_lengths.add(r.input_length);
        self.output_lengths.add(r.output_length);
        let done = r.outcome == Outcome::Completed;
        let ttft = (r.tokens > 0).then(|| ms(r.first_token_ns - r.planned_ns));
        let e2e = ms(r.terminal_ns.wrapping_sub(r.planned_ns));
        if r.output_length > 0 {
            self.offered_ttft
                .add(ttft.filter(|_| done).unwrap_or(f64::INFINITY));
        }
        self.offered_e2e.add(if done { e2e } else { f64::INFINITY });
        if !done {
            return;
        }
        let l = &mut self.latency;
        let tpot = r.tpot_ms();
        if let Some(t) = ttft {
            l.ttft.add(t);
            l.ttft_from_dispatch
                .add(ms(r.first_token_ns - r.dispatch_ns));
        }
        if let Some(t) = tpot {
            l.tpot.add(t);
        }
        l.e2e.add(e2e);
        l.e2e_from_dispatch.add(ms(r.terminal_ns - r.dispatch_ns));
        if r.tokens >= 2 && r.last_token_ns > r.first_token_ns {
            l.output_speed
                .add((r.tokens - 1) as f64 / ((r.last_token_ns - r.first_token_ns) as f64 * 1e-9));
        }
        l.dispatch_delay.add(ms(r.dispatch_ns - r.planned_ns));
        let sla = &self.sla;
        let ttft_sla = ms(r.first_token_ns.min(r.terminal_ns) - r.planned_ns);
        let met = [
            sla.ttft_ms.is_none_or(|t| ttft_sla <= t),
            sla.tpot_ms.is_none_or(|t| tpot.unwrap_or(0.0) <= t),
            sla.e2e_ms.is_none_or(|t| e2e <= t),
        ];
        self.sla_met.ttft += u64::from(met[0]);
        self.sla_met.tpot += u64::from(met[1]);
        self.sla_met.e2e += u64::from(met[2]);
        self.goodput += u64::from(met.iter().all(|&m| m));
        self.input_tokens += r.input_length as u64;
        self.output_tokens += r.tokens as u64;
    }

    /// Every distribution with the name the report gives it.
    pub fn distributions(&self) -> [(&'static str, &Distribution); 11] {
        let l = &self.latency;
        [
            ("latency.ttft_ms", &l.ttft),
            ("latency.ttft_from_dispatch_ms", &l.ttft_from_dispatch),
            ("latency.tpot_ms", &l.tpot),
            ("latency.e2e_ms", &l.e2e),
            ("latency.e2e_from_dispatch_ms", &l.e2e_from_dispatch),
            ("latency.output_speed_tok_s", &l.output_speed),
            ("latency.dispatch_delay_ms", &l.dispatch_delay),
            ("latency_offered.ttft_ms", &self.offered_ttft),
            ("latency_offered.e2e_ms", &self.offered_e2e),
            ("sessions.realized_gap_ms", &self.realized_gap_ms),
            ("sessions.trace_gap_ms", &self.trace_gap_ms),
        ]
    }

    /// Values each distribution keeps exactly.
    pub fn exact_limit(&self) -> usize {
        self.exact_limit
    }

    /// Heap bytes the totals hold (the distributions; the rest is fixed).
    pub fn heap_bytes(&self) -> usize {
        self.distributions()
            .iter()
            .map(|(_, d)| d.heap_bytes())
            .sum::<usize>()
            + self.input_lengths.heap_bytes()
            + self.output_lengths.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Counting lengths per distinct value summarizes as the values do.
        #[test]
        fn length_counts_summarize_as_the_lengths_themselves(
            v in prop::collection::vec(0u32..5000, 1..2000),
        ) {
            let mut counts = LengthCounts::default();
            for &x in &v {
                counts.add(x);
            }
            let mut values: Vec<f64> = v.iter().map(|&x| x as f64).collect();
            let (a, b) = (counts.summary(), Summary::of(&mut values));
            prop_assert_eq!((a.count, a.min, a.max, a.p50, a.p90, a.p99, a.p999), (b.count, b.min, b.max, b.p50, b.p90, b.p99, b.p999));
            let (ma, mb) = (a.mean.unwrap(), b.mean.unwrap());
            prop_assert!((ma - mb).abs() <= 1e-9 * mb.abs().max(1.0), "{} vs {}", ma, mb);
        }
    }
}
