//! Property test: over many random request mixes and configurations, block
//! accounting always adds up, never exceeds capacity, and every admitted request
//! finishes with exactly `output_length` tokens (the first flagged once).

mod common;

use std::collections::HashMap;

use aisim_core::{EngineEvent, Request, SimTime};
use common::*;
use rand_core::SeedableRng;
use rand_pcg::Pcg64;

#[test]
fn accounting_holds_and_every_request_gets_exactly_its_tokens() {
    let mut rng = Pcg64::seed_from_u64(2026);
    let mut total_requests = 0;
    let mut total_preemptions = 0;
    for case in 0..300 {
        let cfg = random_config(&mut rng);
        let mut e = engine(cfg.clone());
        let mut now = SimTime::ZERO;
        let n = 1 + below(&mut rng, 40);
        let mut expected: HashMap<u64, u32> = HashMap::new();
        let mut tokens: HashMap<u64, u32> = HashMap::new();
        let mut firsts: HashMap<u64, u32> = HashMap::new();
        let mut done: HashMap<u64, u32> = HashMap::new();
        let mut next_id = 0u64;
        let mut passes = 0;
        loop {
            // Arrivals between passes.
            while next_id < n && below(&mut rng, 3) == 0 {
                let input = 1 + below(&mut rng, 3000) as u32;
                let output = below(&mut rng, 300) as u32;
                let group = below(&mut rng, 4);
                let ids: Vec<u64> = (0..input.div_ceil(16) as u64)
                    .map(|b| group * 10_000 + b)
                    .collect();
                let req = Request::new(next_id, now, input, output).with_hash_ids(ids, 16);
                let rank = below(&mut rng, cfg.dp_size as u64) as usize;
                if e.add_request(&req, rank).is_ok() {
                    expected.insert(next_id, output);
                }
                next_id += 1;
            }
            match step(&mut e, &mut now) {
                Some(p) => {
                    passes += 1;
                    assert!(passes < 200_000, "case {case}: no progress with {cfg:?}");
                    for ev in p.events {
                        match ev {
                            EngineEvent::Token { id, first } => {
                                *tokens.entry(id.0).or_default() += 1;
                                if first {
                                    *firsts.entry(id.0).or_default() += 1;
                                    assert_eq!(tokens[&id.0], 1, "first token flagged late");
                                }
                                assert!(!done.contains_key(&id.0), "token after completion");
                            }
                            EngineEvent::Completed { id } => *done.entry(id.0).or_default() += 1,
                            _ => {}
                        }
                    }
                }
                None if next_id >= n => break,
                None => {}
            }
        }
        for (id, out) in &expected {
            assert_eq!(
                tokens.get(id).copied().unwrap_or(0),
                *out,
                "case {case} request {id} with {cfg:?}"
            );
            assert_eq!(
                done.get(id),
                Some(&1),
                "case {case} request {id} completes exactly once"
            );
            assert_eq!(firsts.get(id).copied().unwrap_or(0), (*out > 0) as u32);
        }
        for r in 0..e.dp_size() {
            let pool = e.pool(r);
            assert_eq!(pool.in_use_blocks(), 0, "case {case}: blocks leaked");
            assert_eq!(pool.cached_blocks() + pool.free_blocks(), pool.capacity());
        }
        total_requests += expected.len();
        total_preemptions += e.stats().preemptions;
    }
    // The mixes really exercised the interesting paths.
    assert!(total_requests > 3000, "{total_requests}");
    assert!(total_preemptions > 100, "{total_preemptions}");
}
