//! `Engine::run_decode_passes` is an optimisation, not a model: over random
//! request mixes and configurations, an engine that takes every pure decode
//! pass through it shows exactly what one driven by `start_pass` /
//! `finish_pass` shows: the same passes at the same nanoseconds, the same KV
//! levels, tokens, completions and counters.

mod common;

use std::sync::Arc;

use aisim_core::timing::{PassShape, PassTime, PolynomialTiming, TimingModel};
use aisim_core::{
    Backend, DecodeSink, Engine, EngineConfig, EngineEvent, PassOutcome, Request, RequestId,
    SimTime,
};
use common::*;
use rand_core::SeedableRng;
use rand_pcg::Pcg64;

/// What an observer of the engine sees, in order: each pass's tokens and
/// completions, then the pass.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Token {
        id: u64,
        at: u64,
    },
    Completed {
        id: u64,
        at: u64,
    },
    /// Admissions and preemptions (never part of a pure decode pass).
    Other {
        event: String,
        at: u64,
    },
    Pass {
        start: u64,
        end: u64,
        kv_during: u32,
        kv_after: u32,
    },
}

#[derive(Default)]
struct Log {
    seen: Vec<Seen>,
    fast_passes: u64,
}

impl DecodeSink for Log {
    fn token(&mut self, id: RequestId, at: SimTime) {
        self.seen.push(Seen::Token { id: id.0, at: at.0 });
    }
    fn completed(&mut self, id: RequestId, at: SimTime) {
        self.seen.push(Seen::Completed { id: id.0, at: at.0 });
    }
    fn pass(&mut self, start: SimTime, end: SimTime, kv_during: u32, kv_after: u32) {
        self.fast_passes += 1;
        self.seen.push(Seen::Pass {
            start: start.0,
            end: end.0,
            kv_during,
            kv_after,
        });
    }
}

fn in_use(e: &Engine) -> u32 {
    (0..e.dp_size()).map(|r| e.pool(r).in_use_blocks()).sum()
}

/// Feeds `arrivals` (time-ordered, with their rank) to `e`, adding each one
/// between passes once its time has come, until everything has finished.
/// With `fast`, pure decode passes before the next arrival go through
/// `run_decode_passes`.
fn drive(e: &mut Engine, arrivals: &[(Request, usize)], fast: bool) -> Log {
    let mut log = Log::default();
    let mut now = SimTime::ZERO;
    let mut next = 0;
    let mut out = PassOutcome::default();
    loop {
        while next < arrivals.len() && arrivals[next].0.arrival <= now {
            let (req, rank) = &arrivals[next];
            let _ = e.add_request(req, *rank);
            next += 1;
        }
        if !e.has_work() {
            match arrivals.get(next) {
                Some((req, _)) => {
                    now = req.arrival;
                    continue;
                }
                None => break,
            }
        }
        if fast {
            let horizon = arrivals.get(next).map(|(r, _)| r.arrival);
            now = e.run_decode_passes(now, horizon, &mut log).unwrap();
            if !e.has_work() {
                continue;
            }
        }
        let d = e.start_pass(now).unwrap().expect("work to do");
        let (start, kv_during) = (now, in_use(e));
        now = now.after(d);
        e.finish_pass(&mut out);
        for ev in out.events.drain(..) {
            log.seen.push(match ev {
                EngineEvent::Token { id, .. } => Seen::Token {
                    id: id.0,
                    at: now.0,
                },
                EngineEvent::Completed { id } => Seen::Completed {
                    id: id.0,
                    at: now.0,
                },
                other => Seen::Other {
                    event: format!("{other:?}"),
                    at: now.0,
                },
            });
        }
        log.seen.push(Seen::Pass {
            start: start.0,
            end: now.0,
            kv_during,
            kv_after: in_use(e),
        });
        assert!(log.seen.len() < 10_000_000, "no progress");
    }
    log
}

/// Drives two engines of `cfg` through `arrivals`, one pass by pass and one
/// through the fast path, and checks that they saw the same. Returns the
/// passes the fast path carried, all passes, and the preemptions.
fn compare_drives(case: u32, cfg: &EngineConfig, arrivals: &[(Request, usize)]) -> (u64, u64, u64) {
    compare_drives_timed(case, cfg, arrivals, Arc::new(PolynomialTiming))
}

fn compare_drives_timed(
    case: u32,
    cfg: &EngineConfig,
    arrivals: &[(Request, usize)],
    timing: Arc<dyn TimingModel>,
) -> (u64, u64, u64) {
    let mut plain = Engine::new(cfg.clone(), timing.clone()).unwrap();
    let mut fast = Engine::new(cfg.clone(), timing).unwrap();
    let a = drive(&mut plain, arrivals, false);
    let b = drive(&mut fast, arrivals, true);
    assert_eq!(a.fast_passes, 0);
    if let Some(i) = (0..a.seen.len().min(b.seen.len())).find(|&i| a.seen[i] != b.seen[i]) {
        panic!(
            "case {case} with {cfg:?}: first difference at {i}: {:?} vs {:?}",
            a.seen[i], b.seen[i]
        );
    }
    assert_eq!(a.seen.len(), b.seen.len(), "case {case}");
    assert_eq!(plain.stats(), fast.stats(), "case {case}");
    assert_eq!(plain.passes(), fast.passes(), "case {case}");
    for r in 0..cfg.dp_size as usize {
        let (p, f) = (plain.pool(r), fast.pool(r));
        f.check_invariants().unwrap();
        assert_eq!(
            (p.in_use_blocks(), p.cached_blocks(), p.free_blocks()),
            (f.in_use_blocks(), f.cached_blocks(), f.free_blocks()),
            "case {case}"
        );
    }
    (b.fast_passes, fast.passes(), fast.stats().preemptions)
}

#[test]
fn long_quiet_stretches_match_too() {
    // Blocks of 4,096 tokens and outputs of thousands: stretches of quiet
    // passes (nothing but tokens) longer than the engine takes in one go.
    let mut rng = Pcg64::seed_from_u64(78);
    let mut fast_passes = 0;
    for case in 0..20 {
        let cfg = EngineConfig {
            backend: pick(&mut rng, &[Backend::Vllm, Backend::Trtllm]),
            block_size: Some(4096),
            num_gpu_blocks: Some(16),
            enable_prefix_caching: below(&mut rng, 2) == 0,
            ..Default::default()
        };
        let mut t = SimTime::ZERO;
        let arrivals: Vec<(Request, usize)> = (0..1 + below(&mut rng, 4))
            .map(|id| {
                t = t.after(aisim_core::SimDuration::from_millis(below(
                    &mut rng, 20_000,
                )));
                let input = 1 + below(&mut rng, 3000) as u32;
                let output = 1000 + below(&mut rng, 6000) as u32;
                let ids = (0..input.div_ceil(16) as u64).collect();
                (Request::new(id, t, input, output).with_hash_ids(ids, 16), 0)
            })
            .collect();
        fast_passes += compare_drives(case, &cfg, &arrivals).0;
    }
    assert!(fast_passes > 50_000, "{fast_passes}");
}

/// The polynomial, answering at most three passes of a stretch at a time.
#[derive(Debug)]
struct ShortAnswers;

impl TimingModel for ShortAnswers {
    fn name(&self) -> &str {
        "short-answers"
    }
    fn pass_time(&self, shape: &PassShape<'_>) -> PassTime {
        PolynomialTiming.pass_time(shape)
    }
    fn decode_pass_times(
        &self,
        requests: u32,
        context_tokens: u64,
        kv_capacity_tokens: u64,
        n: u32,
        out: &mut Vec<PassTime>,
    ) {
        let n = n.min(3);
        PolynomialTiming.decode_pass_times(requests, context_tokens, kv_capacity_tokens, n, out);
    }
}

#[test]
fn a_model_answering_part_of_a_stretch_changes_nothing() {
    // The engine then takes the rest of the stretch as it takes a horizon.
    let mut rng = Pcg64::seed_from_u64(79);
    let mut fast_passes = 0;
    for case in 0..10 {
        let cfg = EngineConfig {
            block_size: Some(64),
            num_gpu_blocks: Some(256),
            ..Default::default()
        };
        let mut t = SimTime::ZERO;
        let arrivals: Vec<(Request, usize)> = (0..1 + below(&mut rng, 6))
            .map(|id| {
                t = t.after(aisim_core::SimDuration::from_millis(below(&mut rng, 3_000)));
                let input = 1 + below(&mut rng, 2000) as u32;
                let output = 1 + below(&mut rng, 500) as u32;
                (Request::new(id, t, input, output), 0)
            })
            .collect();
        fast_passes += compare_drives_timed(case, &cfg, &arrivals, Arc::new(ShortAnswers)).0;
    }
    assert!(fast_passes > 500, "{fast_passes}");
}

#[test]
fn decode_runs_match_pass_by_pass_exactly() {
    let mut rng = Pcg64::seed_from_u64(77);
    let (mut fast_passes, mut all_passes, mut preemptions) = (0, 0, 0);
    for case in 0..200 {
        let cfg = random_config(&mut rng);
        let mut t = SimTime::ZERO;
        let arrivals: Vec<(Request, usize)> = (0..1 + below(&mut rng, 30))
            .map(|id| {
                t = t.after(aisim_core::SimDuration::from_millis(below(&mut rng, 400)));
                let input = 1 + below(&mut rng, 3000) as u32;
                let output = below(&mut rng, 300) as u32;
                let group = below(&mut rng, 3);
                let ids = (0..input.div_ceil(16) as u64)
                    .map(|b| group * 10_000 + b)
                    .collect();
                let req = Request::new(id, t, input, output).with_hash_ids(ids, 16);
                (req, below(&mut rng, cfg.dp_size as u64) as usize)
            })
            .collect();
        let (fast, passes, preempted) = compare_drives(case, &cfg, &arrivals);
        fast_passes += fast;
        all_passes += passes;
        preemptions += preempted;
    }
    // The fast path carried many passes (only single-rank vLLM / TensorRT-LLM
    // engines with nothing waiting qualify, a third of these mixes at most),
    // and the mixes came close enough to full pools for it to have to step
    // aside for preemptions.
    assert!(
        fast_passes > 10_000 && fast_passes * 20 > all_passes,
        "{fast_passes} of {all_passes}"
    );
    assert!(preemptions > 50, "{preemptions}");
}
