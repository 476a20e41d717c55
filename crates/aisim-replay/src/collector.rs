//! `TraceCollector`: records what happened to each request, as it happens, and
//! nothing else; every metric is derived once at the end (`report.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use aisim_core::hashing::IntHashBuilder;
use aisim_core::{RejectReason, RequestId, SimTime};

use crate::call_log::CallLog;
use crate::distribution::EXACT_LIMIT;
use crate::gaps::GapCounts;
pub use crate::record::{Dispatch, Outcome, RequestRecord, UNPLACED};
use crate::record::{TraceRows, UNSET};
use crate::spec::SlaSpec;
use crate::tally::{reject_kind, Tally};
use aisim_core::id_window::IdWindow;

/// Records of the requests in flight, the running totals the report is
/// derived from (`Tally`), and the pooled inter-token gaps of completed cohort
/// requests. A record is folded into the totals when its request ends, and
/// kept afterwards only when per-request records were asked for: memory
/// follows the requests in flight, not the requests seen.
#[derive(Debug)]
pub struct TraceCollector {
    live: IdWindow<Live>,
    tally: Tally,
    itl: GapCounts,
    /// Token gaps of requests in flight, until their outcome is known (only
    /// when a request may end other than completed).
    pending_gaps: HashMap<u64, Vec<u64>, IntHashBuilder>,
    /// Ended requests' records, when asked for.
    kept: Option<Vec<RequestRecord>>,
    /// Every token-emitting request will complete: pool gaps as they come
    /// instead of holding them until the outcome is known.
    pool_gaps_at_once: bool,
    /// The trace rows kept records are joined to.
    trace_rows: Option<Arc<TraceRows>>,
    /// TTFTs (ns from planned arrival) of first tokens since the scaling
    /// policy last looked (only with a scaling policy that ticks).
    recent_ttft: Option<Vec<u64>>,
    /// TPOTs (ns a token after the first) of requests completed since the
    /// scaling policy last looked (likewise).
    recent_tpot: Option<Vec<u64>>,
    /// See `CollectorOptions::frontend_ns`.
    frontend_ns: u64,
    /// In a part of a split run: the calls go to this log instead, to be
    /// made on the run's collector in the single loop's order.
    log: Option<Box<CallLog>>,
}

/// A request in flight: what its tokens touch, packed beside its record's
/// place. A decode pass visits every request in it, and the fields it reads
/// and writes sat on three cache lines of the 200-byte record; 24 bytes a
/// request keep the requests in flight of a large run in the core's cache.
/// The record's `tokens` and `last_token_ns` are written when it ends.
#[derive(Debug)]
struct Live {
    /// Output tokens emitted so far.
    tokens: u32,
    in_cohort: bool,
    /// The client's time of the last token (the record's meaning).
    last_token_ns: u64,
    record: Box<RequestRecord>,
}

impl Live {
    /// The record, with what the tokens changed.
    fn into_record(self) -> RequestRecord {
        let mut r = *self.record;
        r.tokens = self.tokens;
        r.last_token_ns = self.last_token_ns;
        r
    }
}

/// What a collector hands over at the end.
#[derive(Debug)]
pub struct Collected {
    /// The totals.
    pub tally: Tally,
    /// The pooled inter-token gaps.
    pub itl: GapCounts,
    /// Every request's record by id, when asked for (empty otherwise).
    pub records: Vec<RequestRecord>,
}

/// How a collector is set up.
#[derive(Debug, Clone, Default)]
pub struct CollectorOptions {
    /// A promise from the runtime that no request that emits tokens can end
    /// other than completed (no timeout, drain or stop time), which lets the
    /// collector pool token gaps immediately.
    pub every_request_completes: bool,
    /// Keep every request's record for the caller.
    pub keep_records: bool,
    /// Values each distribution keeps exactly (`EXACT_LIMIT` by default).
    pub exact_limit: Option<usize>,
    /// The SLA goodput is measured against.
    pub sla: SlaSpec,
    /// The workload's trace rows, to join kept records to (by request id).
    pub trace_rows: Option<Arc<TraceRows>>,
    /// Time outside the engine per request, ns: a client sees every token,
    /// and the completion, this much after the engine (`FrontendSpec`).
    pub frontend_ns: u64,
}

impl TraceCollector {
    /// A collector.
    pub fn new(options: CollectorOptions) -> TraceCollector {
        let limit = options.exact_limit.unwrap_or(EXACT_LIMIT);
        TraceCollector::with_gaps(options, GapCounts::with_buffer(limit))
    }

    fn with_gaps(options: CollectorOptions, itl: GapCounts) -> TraceCollector {
        let limit = options.exact_limit.unwrap_or(EXACT_LIMIT);
        TraceCollector {
            live: IdWindow::default(),
            tally: Tally::new(options.sla, limit),
            itl,
            pending_gaps: HashMap::default(),
            kept: options.keep_records.then(Vec::new),
            pool_gaps_at_once: options.every_request_completes,
            trace_rows: options.trace_rows,
            recent_ttft: None,
            recent_tpot: None,
            frontend_ns: options.frontend_ns,
            log: None,
        }
    }

    /// A collector that records its calls in `log` (a part of a split run).
    pub(crate) fn recording(log: CallLog) -> TraceCollector {
        // Its calls are made on the run's collector: no room for gaps.
        TraceCollector {
            log: Some(Box::new(log)),
            ..TraceCollector::with_gaps(CollectorOptions::default(), GapCounts::default())
        }
    }

    /// The call log, in a part of a split run.
    #[inline]
    pub(crate) fn log(&mut self) -> Option<&mut CallLog> {
        self.log.as_deref_mut()
    }

    /// Keeps the TTFT of every first token for `take_recent_ttft`, and the
    /// TPOT of every completed request for `take_recent_tpot`.
    pub fn track_recent_latency(&mut self) {
        self.recent_ttft = Some(Vec::new());
        self.recent_tpot = Some(Vec::new());
    }

    /// The TPOTs (ns) of the requests completed since the last call (those
    /// with two tokens or more), in no order.
    pub fn take_recent_tpot(&mut self, into: &mut Vec<u64>) {
        into.clear();
        if let Some(v) = &mut self.recent_tpot {
            std::mem::swap(v, into);
        }
    }

    /// The TTFTs (ns) of the first tokens since the last call, in no order.
    pub fn take_recent_ttft(&mut self, into: &mut Vec<u64>) {
        into.clear();
        if let Some(v) = &mut self.recent_ttft {
            std::mem::swap(v, into);
        }
    }

    /// The record of a request in flight. Events for one that already ended
    /// are ignored: a pass under way when it timed out still reports it.
    #[inline]
    fn get(&mut self, id: u64) -> Option<&mut RequestRecord> {
        self.live.get_mut(id).map(|l| &mut *l.record)
    }

    /// A request was offered (planned) and dispatched to the router.
    pub fn dispatched(&mut self, d: Dispatch) {
        if let Some(log) = self.log() {
            return log.dispatched(d);
        }
        let mut r = RequestRecord::new(d.id);
        r.session = d.session;
        r.turn = d.turn;
        r.planned_ns = d.planned.0;
        r.dispatch_ns = d.dispatch.0;
        r.trace_gap_ns = d.trace_gap.map_or(UNSET, |g| g.0);
        r.input_length = d.input_length;
        r.output_length = d.output_length;
        r.in_cohort = d.in_cohort;
        let gap = d.previous_end.map(|e| d.dispatch.0.saturating_sub(e.0));
        self.tally.dispatched(&r, gap);
        let live = Live {
            tokens: r.tokens,
            in_cohort: r.in_cohort,
            last_token_ns: r.last_token_ns,
            record: Box::new(r),
        };
        self.live.insert(d.id, live);
    }

    /// Requests dispatched so far (the warm-up count is taken against this).
    pub fn dispatched_count(&self) -> u64 {
        if let Some(log) = &self.log {
            return log.dispatched_count();
        }
        self.tally.dispatched
    }

    /// Where it was placed.
    pub fn placed(&mut self, id: u64, worker: u32, rank: u32) {
        if let Some(log) = self.log() {
            return log.placed(id, worker, rank);
        }
        if let Some(r) = self.get(id) {
            r.worker = worker;
            r.rank = rank;
        }
    }

    /// The placement policy expected `tokens` of its prompt to be cached there.
    pub fn expected_cached(&mut self, id: u64, tokens: u32) {
        debug_assert!(self.log.is_none(), "not recorded in a split run's part");
        if let Some(r) = self.get(id) {
            r.expected_cached_tokens = Some(tokens);
        }
    }

    /// Its prefill ended and its KV (`tokens` prompt tokens of it) is sent
    /// to decode worker `worker`.
    pub fn handed_off(&mut self, id: u64, worker: u32, tokens: u32) {
        debug_assert!(self.log.is_none(), "not recorded in a split run's part");
        if let Some(r) = self.get(id) {
            r.decode_worker = Some(worker);
            r.kv_transfer_tokens = Some(tokens);
        }
    }

    /// An engine scheduled it (first time or again after preemption).
    pub fn admitted(&mut self, id: u64, at: SimTime, reused_tokens: u32, readmission: bool) {
        if let Some(log) = self.log() {
            return log.admitted(id, at, reused_tokens, readmission);
        }
        if let Some(r) = self.get(id) {
            if !readmission && r.first_admit_ns == UNSET {
                r.first_admit_ns = at.0;
                r.reused_first = reused_tokens;
            }
            r.reused_total += reused_tokens as u64;
        }
    }

    /// It was preempted.
    pub fn preempted(&mut self, id: u64) {
        if let Some(log) = self.log() {
            return log.preempted(id);
        }
        if let Some(r) = self.get(id) {
            r.preemptions += 1;
        }
    }

    /// One output token at `at`.
    #[inline]
    pub fn token(&mut self, id: u64, at: SimTime) {
        self.tokens(id, std::slice::from_ref(&at));
    }

    /// Output tokens at each of `ends` (in time order): the same as a
    /// `token` for each, with the record looked up once.
    pub fn tokens(&mut self, id: u64, ends: &[SimTime]) {
        let Some(&SimTime(last_end)) = ends.last() else {
            return;
        };
        let direct = self.pool_gaps_at_once;
        let Some(r) = self.live.get_mut(id) else {
            return; // ended already (see `get`)
        };
        let mut rest = ends;
        // The client's clock: the front end's time after the engine's. Gaps
        // between tokens are the engine's.
        let fe = self.frontend_ns;
        if r.tokens == 0 {
            let first = ends[0].0.saturating_add(fe);
            if let Some(v) = &mut self.recent_ttft {
                v.push(first.saturating_sub(r.record.planned_ns));
            }
            r.record.first_token_ns = first;
            r.last_token_ns = first;
            rest = &ends[1..];
        }
        let mut last = r.last_token_ns.saturating_sub(fe);
        if direct {
            if r.in_cohort {
                self.itl.add_steps(last, rest);
            }
        } else if !rest.is_empty() {
            let pending = self.pending_gaps.entry(id).or_default();
            for &SimTime(at) in rest {
                pending.push(at - last);
                last = at;
            }
        }
        r.last_token_ns = last_end.saturating_add(fe);
        r.tokens += ends.len() as u32;
    }

    /// Output tokens of each of `ids` at each of `ends` (in time order), in
    /// passes from `start`: the same as `tokens(id, ends)` for each id. The
    /// gaps of a pass are the same for every request that was in the
    /// previous one (which ended at `start` for the first pass) and are
    /// counted once per pass.
    pub fn tokens_of_passes(&mut self, ids: &[RequestId], start: SimTime, ends: &[SimTime]) {
        if let Some(log) = self.log() {
            return log.tokens_of_passes(ids, start, ends);
        }
        let n = ends.len();
        // At most this many gaps: when they may not fit before the gaps'
        // buffer folds, one request at a time, so that it folds where it
        // would have.
        let most = ids.len().saturating_mul(n);
        // One request has nothing to share: the plain way costs less.
        if n == 0 || ids.len() < 2 || !self.pool_gaps_at_once || most > self.itl.room() {
            for id in ids {
                self.tokens(id.0, ends);
            }
            return;
        }
        let (SimTime(first), SimTime(last_end)) = (ends[0], ends[n - 1]);
        let fe = self.frontend_ns;
        // Cohort requests with a token in every pass, and those of them
        // whose previous token ended at `start`.
        let (mut sharing, mut from_start) = (0u64, 0u64);
        for id in ids {
            let Some(r) = self.live.get_mut(id.0) else {
                continue; // ended already (see `get`)
            };
            if r.tokens == 0 {
                let t = first.saturating_add(fe);
                if let Some(v) = &mut self.recent_ttft {
                    v.push(t.saturating_sub(r.record.planned_ns));
                }
                r.record.first_token_ns = t;
            } else if r.in_cohort {
                let last = r.last_token_ns.saturating_sub(fe);
                if last == start.0 {
                    from_start += 1;
                } else {
                    self.itl.add(first - last);
                }
            }
            sharing += u64::from(r.in_cohort);
            r.last_token_ns = last_end.saturating_add(fe);
            r.tokens += n as u32;
        }
        if from_start > 0 {
            self.itl.add_n(first - start.0, from_start);
        }
        if sharing > 0 {
            for w in ends.windows(2) {
                self.itl.add_n(w[1].0 - w[0].0, sharing);
            }
        }
    }

    /// It ended with `outcome` at `at`. Returns false when it was not in
    /// flight (it had already ended).
    pub fn terminal(&mut self, id: u64, at: SimTime, outcome: Outcome) -> bool {
        if let Some(log) = self.log() {
            // A split run has no timeout, so nothing ends twice.
            log.terminal(id, at, outcome);
            return true;
        }
        let Some(mut r) = self.live.remove(id).map(Live::into_record) else {
            return false;
        };
        // Every end reaches the client the front end's time later: a
        // completion with its last token, a refusal with its answer, and a
        // timeout, armed that much early on the engine's clock, at the
        // client's own deadline.
        r.terminal_ns = at.0.saturating_add(self.frontend_ns);
        r.outcome = outcome;
        if let (Some(v), Outcome::Completed, 2..) = (&mut self.recent_tpot, outcome, r.tokens) {
            v.push((r.last_token_ns - r.first_token_ns) / u64::from(r.tokens - 1));
        }
        let measured = outcome == Outcome::Completed && r.in_cohort;
        let gaps = self.pending_gaps.remove(&id).unwrap_or_default();
        if measured {
            for g in gaps {
                self.itl.add(g);
            }
        }
        self.tally.ended(&r, at.0);
        self.keep(r);
        true
    }

    /// It can never be served.
    pub fn rejected(&mut self, id: u64, at: SimTime, reason: &RejectReason) {
        if let Some(log) = self.log() {
            return log.rejected(id, at, reason);
        }
        self.refused(id, at, reject_kind(reason), || reason.to_string());
    }

    /// It was rejected, counted as `kind`, for the reason `message` says.
    pub fn refused(
        &mut self,
        id: u64,
        at: SimTime,
        kind: &'static str,
        message: impl FnOnce() -> String,
    ) {
        let keep = self.kept.is_some();
        if let Some(r) = self.get(id) {
            r.reject_kind = Some(kind);
            // The message only for a record that is kept.
            r.reject_reason = keep.then(message);
        }
        self.terminal(id, at, Outcome::Rejected);
    }

    /// The worker a request in flight was placed on.
    pub fn worker_of(&self, id: u64) -> Option<u32> {
        debug_assert!(self.log.is_none(), "not recorded in a split run's part");
        self.live.get(id).and_then(|l| l.record.worker())
    }

    /// The decode worker a request in flight was handed to, if any.
    pub fn decode_worker_of(&self, id: u64) -> Option<u32> {
        debug_assert!(self.log.is_none(), "not recorded in a split run's part");
        self.live.get(id).and_then(|l| l.record.decode_worker)
    }

    /// Values each distribution keeps exactly.
    pub fn exact_limit(&self) -> usize {
        self.tally.exact_limit()
    }

    /// Whether it is in flight (dispatched, not ended).
    pub fn in_flight(&self, id: u64) -> bool {
        debug_assert!(self.log.is_none(), "not recorded in a split run's part");
        self.live.get(id).is_some()
    }

    /// Heap bytes held by what grows with the run: the records in flight,
    /// the totals' distributions and the gaps.
    pub fn heap_bytes(&mut self) -> usize {
        self.live.heap_bytes()
            + self.live.len() * std::mem::size_of::<RequestRecord>()
            + self.tally.heap_bytes()
            + self.itl.heap_bytes()
            + self
                .kept
                .as_ref()
                .map_or(0, |k| k.capacity() * std::mem::size_of::<RequestRecord>())
    }

    /// Records of requests ended since the last call (kept ones only), in
    /// the order they ended.
    pub fn take_ended(&mut self) -> Vec<RequestRecord> {
        self.kept.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// How many ended requests' records are held.
    #[inline]
    pub fn ended_held(&self) -> usize {
        self.kept.as_ref().map_or(0, Vec::len)
    }

    /// Keeps an ended request's record, when records are asked for, joined
    /// to its trace row.
    fn keep(&mut self, mut r: RequestRecord) {
        if let Some(kept) = &mut self.kept {
            r.trace = self
                .trace_rows
                .as_ref()
                .and_then(|rows| rows.get(r.id))
                .map(|row| Box::new(row.clone()));
            kept.push(r);
        }
    }

    /// Ends the run at `end_ns`: requests still in flight are folded in as
    /// incomplete.
    pub fn finish(mut self, end_ns: u64) -> Collected {
        for (_, live) in self.live.drain_in_order() {
            let r = live.into_record();
            self.tally.ended(&r, end_ns);
            self.keep(r);
        }
        let mut records = self.kept.unwrap_or_default();
        records.sort_unstable_by_key(|r| r.id);
        Collected {
            tally: self.tally,
            itl: self.itl,
            records,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Request `id` (8 prompt tokens) dispatched at time 0.
    fn dispatched_at_zero(c: &mut TraceCollector, id: u64, output_length: u32, in_cohort: bool) {
        c.dispatched(Dispatch {
            id,
            session: None,
            turn: 0,
            planned: SimTime::ZERO,
            dispatch: SimTime::ZERO,
            trace_gap: None,
            input_length: 8,
            output_length,
            in_cohort,
            previous_end: None,
        });
    }

    #[test]
    fn tokens_in_bulk_record_what_tokens_one_by_one_do() {
        let ns = |v: &[u64]| v.iter().map(|&t| SimTime(t)).collect::<Vec<_>>();
        // Request 0 and 2 in the cohort, 1 not; 2 gets its first token in bulk.
        let series = [
            (0u64, ns(&[10, 15, 30])),
            (1, ns(&[12, 20])),
            (2, ns(&[40, 41, 47, 60])),
        ];
        for pool_at_once in [true, false] {
            let options = CollectorOptions {
                every_request_completes: pool_at_once,
                keep_records: true,
                ..CollectorOptions::default()
            };
            let mut one = TraceCollector::new(options.clone());
            let mut bulk = TraceCollector::new(options);
            for c in [&mut one, &mut bulk] {
                for id in 0..3 {
                    dispatched_at_zero(c, id, 4, id != 1);
                }
            }
            // One by one, interleaved in time; in bulk, a request at a time
            // and its first token apart from the rest for request 0.
            let mut all: Vec<(SimTime, u64)> = series
                .iter()
                .flat_map(|(id, ts)| ts.iter().map(move |&t| (t, *id)))
                .collect();
            all.sort();
            for (t, id) in all {
                one.token(id, t);
            }
            bulk.tokens(0, &series[0].1[..1]);
            bulk.tokens(0, &series[0].1[1..]);
            bulk.tokens(0, &[]);
            bulk.tokens(1, &series[1].1);
            bulk.tokens(2, &series[2].1);
            for c in [&mut one, &mut bulk] {
                for id in 0..3 {
                    assert!(c.terminal(id, SimTime(100), Outcome::Completed));
                }
            }
            let (one, bulk) = (one.finish(100), bulk.finish(100));
            let (a, b) = (one.records, bulk.records);
            assert_eq!(
                serde_json::to_string(&a).unwrap(),
                serde_json::to_string(&b).unwrap()
            );
            let (ga, gb) = (one.itl.into_sorted(), bulk.itl.into_sorted());
            let runs: Vec<(u64, u64)> = gb.runs().collect();
            assert_eq!(ga.runs().collect::<Vec<_>>(), runs);
            // Cohort gaps only: 5, 15 from request 0; 1, 6, 13 from request 2.
            assert_eq!(runs, vec![(1, 1), (5, 1), (6, 1), (13, 1), (15, 1)]);
            let seen = |r: &RequestRecord| (r.first_token_ns, r.last_token_ns, r.tokens);
            assert_eq!(
                [seen(&b[0]), seen(&b[1]), seen(&b[2])],
                [(10, 30, 3), (12, 20, 2), (40, 60, 4)]
            );
        }
    }

    #[test]
    fn tokens_of_passes_fold_the_gaps_where_tokens_one_request_at_a_time_do() {
        // Over two million gaps, so the gaps' buffer folds inside some
        // stretches; with a limit of 64 distinct gaps they are sketched from
        // the first fold, and the sketch's float sums must see the same folds.
        for exact_limit in [Some(64), None] {
            let options = CollectorOptions {
                every_request_completes: true,
                exact_limit,
                ..CollectorOptions::default()
            };
            let mut one = TraceCollector::new(options.clone());
            let mut bulk = TraceCollector::new(options);
            let requests = 400u64;
            for c in [&mut one, &mut bulk] {
                for id in 0..requests {
                    dispatched_at_zero(c, id, u32::MAX, id % 7 != 0);
                }
            }
            let (mut t, mut x) = (0u64, 1u64);
            let mut next = || {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                x >> 33
            };
            let mut gaps = 0u64;
            while gaps < 2_300_000 {
                let first = next() % requests;
                let len = 1 + next() % 200.min(requests - first);
                let ids: Vec<RequestId> = (first..first + len).map(RequestId).collect();
                // Mostly right after the previous stretch, as in a decode run.
                let start = SimTime(t.saturating_sub(next() % 2 * 1_000));
                let ends: Vec<SimTime> = (0..1 + next() % 40)
                    .map(|_| {
                        t += 5_000_000 + next() % 5_000;
                        SimTime(t)
                    })
                    .collect();
                for id in &ids {
                    one.tokens(id.0, &ends);
                }
                bulk.tokens_of_passes(&ids, start, &ends);
                gaps += len * ends.len() as u64;
            }
            for c in [&mut one, &mut bulk] {
                for id in 0..requests {
                    assert!(c.terminal(id, SimTime(t), Outcome::Completed));
                }
            }
            let (mut one, mut bulk) = (one.finish(t), bulk.finish(t));
            assert_eq!(one.itl.is_sketched(), exact_limit.is_some());
            assert_eq!(bulk.itl.is_sketched(), exact_limit.is_some());
            let (a, b) = (one.itl.summary(), bulk.itl.summary());
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            assert_eq!(format!("{:?}", one.tally), format!("{:?}", bulk.tally));
        }
    }

    fn request(c: &mut TraceCollector, id: u64, at: u64) {
        c.dispatched(Dispatch {
            id,
            session: None,
            turn: 0,
            planned: SimTime(at),
            dispatch: SimTime(at),
            trace_gap: None,
            input_length: 8,
            output_length: 3,
            in_cohort: true,
            previous_end: None,
        });
        let first = at + 1 + id % 97;
        c.tokens(
            id,
            &[SimTime(first), SimTime(first + 5), SimTime(first + 9)],
        );
    }

    #[test]
    fn memory_does_not_grow_with_ended_requests_past_the_exact_limit() {
        let mut c = TraceCollector::new(CollectorOptions {
            every_request_completes: true,
            exact_limit: Some(64),
            ..CollectorOptions::default()
        });
        let mut held = Vec::new();
        for id in 0..20_000u64 {
            let at = id * 1000;
            request(&mut c, id, at);
            assert!(c.terminal(id, SimTime(at + 200), Outcome::Completed));
            if id == 999 || id == 19_999 {
                held.push(c.heap_bytes());
            }
        }
        assert_eq!(
            held[0], held[1],
            "state size after 1,000 and 20,000 requests"
        );
        let out = c.finish(20_000_000);
        assert!(
            out.records.is_empty(),
            "records are kept only when asked for"
        );
        assert!(out.tally.latency.ttft.is_sketched());
        assert_eq!(out.tally.completed, 20_000);
        let ttft = out.tally.latency.ttft.clone().summary();
        assert_eq!(
            (ttft.count, ttft.min, ttft.max),
            (20_000, Some(1e-6), Some(97e-6))
        );
    }

    #[test]
    fn requests_in_flight_at_the_end_are_incomplete_and_kept_when_asked() {
        let mut c = TraceCollector::new(CollectorOptions {
            keep_records: true,
            ..CollectorOptions::default()
        });
        for id in [5u64, 3, 4] {
            request(&mut c, id, 0);
        }
        assert!(c.terminal(4, SimTime(500), Outcome::Completed));
        assert!(
            !c.terminal(4, SimTime(600), Outcome::Completed),
            "ended once"
        );
        assert_eq!(c.worker_of(3), None, "not placed yet");
        c.placed(3, 2, 1);
        assert_eq!(c.worker_of(3), Some(2));
        assert_eq!(c.worker_of(4), None, "ended");
        let out = c.finish(1000);
        let ids: Vec<(u64, Outcome)> = out.records.iter().map(|r| (r.id, r.outcome)).collect();
        assert_eq!(
            ids,
            [
                (3, Outcome::Incomplete),
                (4, Outcome::Completed),
                (5, Outcome::Incomplete)
            ]
        );
        // Each got three tokens, 5 and 4 ns apart, from `1 + id` ns on:
        // the records of those still in flight carry them too.
        let tokens: Vec<(u32, u64, u64)> = out
            .records
            .iter()
            .map(|r| (r.tokens, r.first_token_ns, r.last_token_ns))
            .collect();
        assert_eq!(tokens, [(3, 4, 13), (3, 5, 14), (3, 6, 15)]);
        assert_eq!((out.tally.completed, out.tally.incomplete), (1, 2));
        assert_eq!(out.tally.in_flight.peak(), 3);
    }

    #[test]
    fn a_request_never_placed_has_no_worker_in_its_records() {
        use crate::per_request::RequestRow;
        let mut c = TraceCollector::new(CollectorOptions {
            keep_records: true,
            ..CollectorOptions::default()
        });
        // 0 times out in the router queue, 1 is refused by it, 2 runs on
        // worker 0 rank 0.
        for id in 0..3 {
            request(&mut c, id, 0);
        }
        assert!(c.terminal(0, SimTime(100), Outcome::TimedOut));
        c.refused(1, SimTime(0), "router_queue_full", || "full".into());
        c.placed(2, 0, 0);
        assert!(c.terminal(2, SimTime(50), Outcome::Completed));
        let out = c.finish(100);
        let placed: Vec<(Option<u32>, Option<u32>)> = out
            .records
            .iter()
            .map(|r| {
                let row = RequestRow::of(r);
                (row.worker, row.rank)
            })
            .collect();
        assert_eq!(placed, [(None, None), (None, None), (Some(0), Some(0))]);
        let json = serde_json::to_value(&out.records[1]).unwrap();
        assert!(json["worker"].is_null() && json["rank"].is_null(), "{json}");
        assert_eq!(serde_json::to_value(&out.records[2]).unwrap()["worker"], 0);
    }
}
