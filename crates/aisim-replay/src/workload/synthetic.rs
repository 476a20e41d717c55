//! Generated workloads, produced lazily: memory does not grow with the request
//! count. Each session's later turns come from a generator seeded by the run
//! seed and the session, so they do not depend on when they are asked for.

use aisim_core::{Request, RequestId, SessionId, SimDuration, SimTime};
use rand_core::SeedableRng;
use rand_pcg::Pcg64;

use super::clock::{checked_ms, ms_to_duration, CLOCK_RANGE};
use super::random::{exponential, gamma, standard_normal, uniform_int};
use super::source::{Offer, Workload};
use crate::error::ReplayError;
use crate::spec::{ArrivalSpec, LengthSpec, SyntheticSpec, TotalLengthCdf};
use crate::trace::float;

/// Ids of shared prefixes live in their own range so they never collide with
/// the per-request ids.
const PREFIX_ID_BASE: u64 = 1 << 48;

/// A lazily generated workload.
#[derive(Debug)]
pub struct SyntheticWorkload {
    spec: SyntheticSpec,
    seed: u64,
    rng: Pcg64,
    speedup: f64,
    next_arrival_s: f64,
    /// Planned arrival of the next first turn; `None` once all are made, or
    /// when the next would be beyond the clock (then `failure` says so).
    next_at: Option<SimTime>,
    failure: Option<ReplayError>,
    roots_made: u64,
    ids_made: u64,
    turns_left: u64,
}

fn sample_len(rng: &mut Pcg64, l: &LengthSpec) -> u32 {
    match *l {
        LengthSpec::Fixed { tokens } => tokens,
        LengthSpec::Uniform { min, max } => uniform_int(rng, min as u64, max as u64) as u32,
        LengthSpec::Normal { mean, std } => (mean + std * standard_normal(rng))
            .round()
            .clamp(1.0, u32::MAX as f64) as u32,
    }
}

/// A total length from a CDF of total tokens: an interval with probability
/// `F_i − F_(i−1)`, then uniform over its integers within `lo ..= hi` (all at
/// `hi` when that range is empty).
pub fn sample_cdf_total(points: &[(u64, f64)], lo: u64, hi: u64, rng: &mut Pcg64) -> u64 {
    let u = super::random::uniform01(rng);
    let mut prev_t = 0u64;
    let last = points.last().map_or(0, |p| p.0);
    for &(t, f) in points {
        if u <= f || t == last {
            let a = lo.max(prev_t + 1);
            let b = hi.min(t);
            return if a > b { hi } else { uniform_int(rng, a, b) };
        }
        prev_t = t;
    }
    hi
}

/// The 80 / 20 split of a total: `l_in = max(1, floor(0.8 × total))`,
/// `l_out = max(1, total − l_in)`.
pub fn split_total(total: u64) -> (u32, u32) {
    let l_in = ((0.8 * total as f64).floor() as u64).max(1);
    let l_out = total.saturating_sub(l_in).max(1);
    (
        l_in.min(u32::MAX as u64) as u32,
        l_out.min(u32::MAX as u64) as u32,
    )
}

impl SyntheticWorkload {
    /// A workload from a validated spec.
    pub fn new(spec: SyntheticSpec, seed: u64, speedup: f64) -> SyntheticWorkload {
        let turns_left = spec.requests.saturating_mul(spec.turns as u64);
        SyntheticWorkload {
            rng: Pcg64::seed_from_u64(seed),
            seed,
            spec,
            speedup,
            next_arrival_s: 0.0,
            next_at: Some(SimTime::ZERO),
            failure: None,
            roots_made: 0,
            ids_made: 0,
            turns_left,
        }
    }

    fn gap_s(&mut self) -> f64 {
        match self.spec.arrival {
            ArrivalSpec::Constant { rate } => 1.0 / rate,
            ArrivalSpec::Poisson { rate } => exponential(&mut self.rng, rate),
            ArrivalSpec::Gamma { rate, burstiness } => {
                gamma(&mut self.rng, burstiness, 1.0 / (rate * burstiness))
            }
        }
    }

    /// Trace block ids of a prompt: the group's shared prefix, then fresh ids.
    fn hash_ids(&mut self, input: u32, group: Option<u64>, mut base: Vec<u64>) -> Vec<u64> {
        let tb = self.spec.trace_block_size as u64;
        let blocks = (input as u64).div_ceil(tb);
        if base.is_empty() {
            if let Some(g) = group {
                let shared = (self.spec.prefix_tokens as u64 / tb).min(blocks);
                base.extend((0..shared).map(|j| PREFIX_ID_BASE + g * (1 << 24) + j));
            }
        }
        base.truncate(blocks as usize);
        while (base.len() as u64) < blocks {
            // Unique per request and block: the request counter in the high bits.
            base.push(((self.ids_made + 1) << 20) + base.len() as u64);
        }
        base
    }

    /// The next first turn's planned arrival, if one is due and on the clock.
    fn planned_next(&mut self) -> Option<SimTime> {
        if self.roots_made >= self.spec.requests {
            return None;
        }
        let at = checked_ms(self.next_arrival_s * 1e3 / self.speedup).map(|d| SimTime(d.0));
        if at.is_none() {
            let rate = self.spec.arrival.rate();
            self.failure = Some(ReplayError::spec(
                "workload.arrival.rate",
                format!(
                    "{} per second plans first turn {} at {} s (speedup {}), beyond aisim's clock ({CLOCK_RANGE})",
                    float(rate),
                    self.roots_made + 1,
                    float(self.next_arrival_s),
                    float(self.speedup)
                ),
            ));
        }
        at
    }

    fn make(
        &mut self,
        input: u32,
        output: u32,
        arrival: SimTime,
        session: Option<u64>,
        hash_ids: Vec<u64>,
    ) -> Request {
        let id = self.ids_made;
        self.ids_made += 1;
        self.turns_left = self.turns_left.saturating_sub(1);
        Request {
            id: RequestId(id),
            arrival,
            input_length: input,
            output_length: output,
            hash_ids,
            trace_block_size: self.spec.trace_block_size,
            session: session.map(SessionId),
        }
    }
}

impl Workload for SyntheticWorkload {
    fn peek_root(&self) -> Option<SimTime> {
        self.next_at
    }

    fn next_root(&mut self) -> Option<Offer> {
        let at = self.next_at?;
        let session = self.roots_made;
        self.roots_made += 1;
        let gap = self.gap_s();
        self.next_arrival_s += gap;
        self.next_at = self.planned_next();
        let (input, output) = match &self.spec.total_cdf {
            Some(TotalLengthCdf {
                pairs: Some(pairs), ..
            }) => pairs[uniform_int(&mut self.rng, 0, pairs.len() as u64 - 1) as usize],
            Some(c) => split_total(sample_cdf_total(
                &c.points,
                c.min_tokens,
                c.max_tokens,
                &mut self.rng,
            )),
            None => (
                sample_len(&mut self.rng, &self.spec.input),
                sample_len(&mut self.rng, &self.spec.output),
            ),
        };
        let group = (self.spec.prefix_groups > 0)
            .then(|| uniform_int(&mut self.rng, 0, self.spec.prefix_groups as u64 - 1));
        let ids = self.hash_ids(input, group, Vec::new());
        let multi = self.spec.turns > 1;
        let request = self.make(input, output, at, multi.then_some(session), ids);
        Some(Offer {
            request,
            turn: 0,
            trace_at: None,
            think: None,
            trace_gap: None,
        })
    }

    fn next_turn(&mut self, prev: Offer) -> Option<Offer> {
        let session = prev.request.session?.0;
        if prev.turn + 1 >= self.spec.turns {
            return None;
        }
        // Per-session generator: independent of the order in which turns end.
        let mut rng = Pcg64::seed_from_u64(
            self.seed ^ (session.wrapping_mul(0x9e37_79b9_7f4a_7c15)) ^ (prev.turn as u64 + 1),
        );
        let new_input = sample_len(&mut rng, &self.spec.input);
        let output = sample_len(&mut rng, &self.spec.output);
        // The next prompt is the whole conversation so far plus the new
        // message: one too long for a length is refused, never clamped.
        let whole =
            prev.request.input_length as u64 + prev.request.output_length as u64 + new_input as u64;
        let Ok(input) = u32::try_from(whole) else {
            self.failure = Some(ReplayError::spec(
                "workload.turns",
                format!(
                    "turn {} of session {session} would send the conversation so far, {whole} tokens, more than a prompt can hold (4294967295): lower the turns or the lengths",
                    prev.turn + 2
                ),
            ));
            return None;
        };
        // The conversation so far keeps its ids (its tokens are the same
        // tokens), moved from the ended turn, not copied.
        let ids = self.hash_ids(input, None, prev.request.hash_ids);
        let think = ms_to_duration(self.spec.think_ms / self.speedup);
        let request = self.make(input, output, SimTime::ZERO, Some(session), ids);
        Some(Offer {
            request,
            turn: prev.turn + 1,
            trace_at: None,
            think: Some(think),
            trace_gap: Some(SimDuration::ZERO),
        })
    }

    fn may_have_sessions(&self) -> bool {
        self.spec.turns > 1
    }

    fn take_failure(&mut self) -> Option<ReplayError> {
        self.failure.take()
    }

    fn remaining(&self) -> u64 {
        self.turns_left
    }
}
