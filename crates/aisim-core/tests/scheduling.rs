//! Scheduler behaviour: prefix reuse, preemption, chunked prefill, DP barrier,
//! bad configuration.

mod common;

use std::sync::Arc;

use aisim_core::profile::resolve_profile;
use aisim_core::timing::PolynomialTiming;
use aisim_core::{
    Backend, CapacityPolicy, Engine, EngineConfig, EngineEvent, PreemptionMode, RejectReason,
    Request, SimDuration, SimTime,
};
use common::*;

fn ids_for(input: u32, trace_block: u32, salt: u64) -> Vec<u64> {
    (0..input.div_ceil(trace_block) as u64)
        .map(|i| salt * 1_000_000 + i)
        .collect()
}

fn reused_at_admission(passes: &[Pass], id: u64) -> Vec<u32> {
    passes
        .iter()
        .flat_map(|p| &p.events)
        .filter_map(|e| match e {
            EngineEvent::Admitted {
                id: i,
                reused_tokens,
                ..
            } if i.0 == id => Some(*reused_tokens),
            _ => None,
        })
        .collect()
}

#[test]
fn fully_cached_prompt_reuses_all_but_the_last_token_rounded_to_blocks() {
    for backend in [Backend::Vllm, Backend::Sglang, Backend::Trtllm] {
        for trace_block in [512u32, 16] {
            for block_size in [16u32, 32, 64, 128, 512] {
                for input in [4096u32, 5000, 513, 1] {
                    let cfg = EngineConfig {
                        backend,
                        block_size: Some(block_size),
                        num_gpu_blocks: Some(4096),
                        ..Default::default()
                    };
                    let mut e = engine(cfg);
                    let ids = ids_for(input, trace_block, 7);
                    let mut now = SimTime::ZERO;
                    e.add_request(
                        &Request::new(1, now, input, 2).with_hash_ids(ids.clone(), trace_block),
                        0,
                    )
                    .unwrap();
                    drain(&mut e, &mut now);
                    e.add_request(
                        &Request::new(2, now, input, 2).with_hash_ids(ids, trace_block),
                        0,
                    )
                    .unwrap();
                    let passes = drain(&mut e, &mut now);
                    let expected = (input - 1) / block_size * block_size;
                    assert_eq!(
                        reused_at_admission(&passes, 2),
                        vec![expected],
                        "{backend:?} trace block {trace_block} block {block_size} input {input}"
                    );
                }
            }
        }
    }
}

#[test]
fn prefix_caching_off_reuses_nothing() {
    let cfg = EngineConfig {
        enable_prefix_caching: false,
        ..Default::default()
    };
    let mut e = engine(cfg);
    let mut now = SimTime::ZERO;
    for id in 1..=2 {
        e.add_request(
            &Request::new(id, now, 4096, 2).with_hash_ids(ids_for(4096, 512, 1), 512),
            0,
        )
        .unwrap();
        let passes = drain(&mut e, &mut now);
        assert_eq!(reused_at_admission(&passes, id), vec![0]);
    }
    assert_eq!(e.pool(0).cached_blocks(), 0);
}

/// Two long requests in a pool too small for both: A arrives first and runs a
/// while, then B arrives. Returns the passes.
fn two_long_requests(
    cfg: EngineConfig,
    a: (u32, u32),
    b: (u32, u32),
    b_after_tokens: usize,
) -> Vec<Pass> {
    let mut e = engine(cfg);
    let mut now = SimTime::ZERO;
    e.add_request(&Request::new(1, now, a.0, a.1), 0).unwrap();
    let mut passes = Vec::new();
    while tokens_of(&passes, 1) < b_after_tokens {
        passes.push(step(&mut e, &mut now).unwrap());
    }
    e.add_request(&Request::new(2, now, b.0, b.1), 0).unwrap();
    passes.extend(drain(&mut e, &mut now));
    assert_eq!(tokens_of(&passes, 1), a.1 as usize);
    assert_eq!(tokens_of(&passes, 2), b.1 as usize);
    let mut done = completed(&passes);
    done.sort();
    assert_eq!(done, vec![1, 2]);
    passes
}

fn small_pool(backend: Backend) -> EngineConfig {
    // 100 blocks of 16 tokens; each request alone needs 63, both together 126.
    EngineConfig {
        backend,
        block_size: Some(16),
        num_gpu_blocks: Some(100),
        ..Default::default()
    }
}

#[test]
fn vllm_lifo_preempts_the_newer_and_fifo_the_older() {
    let passes = two_long_requests(small_pool(Backend::Vllm), (600, 400), (600, 400), 10);
    let p = preempted(&passes);
    assert!(
        !p.is_empty() && p.iter().all(|&id| id == 2),
        "lifo preempted {p:?}"
    );

    let cfg = EngineConfig {
        preemption: PreemptionMode::Fifo,
        ..small_pool(Backend::Vllm)
    };
    let passes = two_long_requests(cfg, (600, 400), (600, 400), 10);
    let p = preempted(&passes);
    assert_eq!(p.first(), Some(&1), "fifo preempted {p:?}");

    // A preempted request is admitted again and counted as a readmission.
    let readmitted = passes
        .iter()
        .flat_map(|p| &p.events)
        .any(|e| matches!(e, EngineEvent::Admitted { id, readmission: true, .. } if id.0 == 1));
    assert!(readmitted);
}

#[test]
fn preemptions_are_counted() {
    let mut e = engine(small_pool(Backend::Vllm));
    let mut now = SimTime::ZERO;
    e.add_request(&Request::new(1, now, 600, 400), 0).unwrap();
    e.add_request(&Request::new(2, now, 600, 400), 0).unwrap();
    let passes = drain(&mut e, &mut now);
    assert!(e.stats().preemptions > 0);
    assert_eq!(e.stats().preemptions as usize, preempted(&passes).len());
    assert_eq!(e.stats().completed, 2);
}

#[test]
fn trtllm_guaranteed_no_evict_never_preempts() {
    let passes = two_long_requests(small_pool(Backend::Trtllm), (600, 400), (600, 400), 10);
    assert!(preempted(&passes).is_empty());
    // B waited for A: its first token comes after A's last.
    let a_done = passes.iter().position(|p| {
        p.events.contains(&EngineEvent::Completed {
            id: aisim_core::RequestId(1),
        })
    });
    let b_first = passes.iter().position(|p| {
        p.events.contains(&EngineEvent::Token {
            id: aisim_core::RequestId(2),
            first: true,
        })
    });
    assert!(b_first > a_done);

    let cfg = EngineConfig {
        capacity_policy: CapacityPolicy::MaxUtilization,
        ..small_pool(Backend::Trtllm)
    };
    let passes = two_long_requests(cfg, (600, 400), (600, 400), 10);
    assert!(
        !preempted(&passes).is_empty(),
        "max_utilization pauses requests when blocks run out"
    );
}

#[test]
fn sglang_retracts_the_request_with_fewest_generated_tokens() {
    // 200 pages of 16 tokens. A (1200 + 1000) runs alone until the decaying
    // new_token_ratio lets the short-prompt B (400 + 1000) in; together they
    // outgrow the pool and the one with fewer generated tokens, B, is retracted.
    let cfg = EngineConfig {
        backend: Backend::Sglang,
        block_size: Some(16),
        num_gpu_blocks: Some(200),
        ..Default::default()
    };
    let passes = two_long_requests(cfg, (1200, 1000), (400, 1000), 300);
    let p = preempted(&passes);
    assert!(!p.is_empty(), "expected a retraction");
    // At the first retraction B had generated fewer tokens than A.
    let first = passes
        .iter()
        .position(|x| !preempted(std::slice::from_ref(x)).is_empty())
        .unwrap();
    assert!(tokens_of(&passes[..first], 2) < tokens_of(&passes[..first], 1));
    assert_eq!(p[0], 2);
}

#[test]
fn sglang_passes_are_prefill_only_or_decode_only() {
    let cfg = EngineConfig {
        backend: Backend::Sglang,
        ..Default::default()
    };
    let mut e = Engine::new(cfg, fixed(10.0, 1.0)).unwrap();
    let mut now = SimTime::ZERO;
    e.add_request(&Request::new(1, now, 100, 5), 0).unwrap();
    step(&mut e, &mut now).unwrap(); // prefill of 1
    e.add_request(&Request::new(2, now, 100, 5), 0).unwrap();
    // The next pass is B's prefill alone (10 ms), not a mixed 11 ms pass.
    let p = step(&mut e, &mut now).unwrap();
    assert_eq!(p.end.since(p.start), SimDuration::from_millis(10));
    assert!(!p.events.contains(&EngineEvent::Token {
        id: aisim_core::RequestId(1),
        first: false
    }));
}

fn passes_before_first_token(passes: &[Pass], id: u64) -> usize {
    passes
        .iter()
        .position(|p| {
            p.events
                .iter()
                .any(|e| matches!(e, EngineEvent::Token { id: i, first: true } if i.0 == id))
        })
        .unwrap()
        + 1
}

#[test]
fn chunked_prefill_splits_a_long_prompt_over_passes() {
    for backend in [Backend::Vllm, Backend::Trtllm, Backend::Sglang] {
        let mut e = engine(EngineConfig {
            backend,
            ..Default::default()
        });
        let mut now = SimTime::ZERO;
        e.add_request(&Request::new(1, now, 20_000, 2), 0).unwrap();
        let passes = drain(&mut e, &mut now);
        assert_eq!(passes_before_first_token(&passes, 1), 3, "{backend:?}");
    }
}

#[test]
fn without_chunked_prefill_a_prompt_waits_for_a_pass_that_holds_it_whole() {
    let cfg = EngineConfig {
        enable_chunked_prefill: false,
        ..Default::default()
    };
    let mut e = engine(cfg.clone());
    let mut now = SimTime::ZERO;
    e.add_request(&Request::new(1, now, 100, 5), 0).unwrap();
    e.add_request(&Request::new(2, now, 8192, 1), 0).unwrap();
    let passes = drain(&mut e, &mut now);
    // A decodes for 5 passes, taking 1 token of the budget each time, so the
    // 8,192-token prompt only fits once A has finished.
    assert_eq!(passes_before_first_token(&passes, 2), 6);
    assert_eq!(tokens_of(&passes, 2), 1);

    // One longer than the budget is rejected at once, with the reason.
    let mut e = engine(cfg);
    let err = e
        .add_request(&Request::new(3, now, 9000, 1), 0)
        .unwrap_err();
    assert_eq!(
        err,
        RejectReason::PromptOverBatchBudget {
            input_length: 9000,
            budget: 8192
        }
    );
    assert!(err.to_string().contains("never fit"));
    assert!(!e.has_work());
}

#[test]
fn impossible_requests_are_rejected_with_a_reason() {
    let cfg = EngineConfig {
        num_gpu_blocks: Some(10),
        max_model_len: Some(500),
        ..Default::default()
    };
    let mut e = engine(cfg);
    assert!(matches!(
        e.add_request(&Request::new(1, SimTime::ZERO, 600, 1), 0),
        Err(RejectReason::LongerThanMaxModelLen {
            tokens: 601,
            max_model_len: 500
        })
    ));
    let mut e = engine(EngineConfig {
        num_gpu_blocks: Some(10),
        ..Default::default()
    });
    let e600 = e.add_request(&Request::new(1, SimTime::ZERO, 600, 100), 0);
    assert_eq!(
        e600,
        Err(RejectReason::LargerThanKvCache {
            tokens: 700,
            blocks: 11,
            block_size: 64,
            capacity: 10
        })
    );
    assert_eq!(
        e600.unwrap_err().to_string(),
        "prompt + output = 700 tokens needs 11 KV blocks of 64 tokens but the pool has only 10 (640 tokens)"
    );
    assert_eq!(
        e.add_request(&Request::new(1, SimTime::ZERO, 0, 1), 0),
        Err(RejectReason::EmptyPrompt)
    );
}

#[test]
fn prefill_only_requests_complete_without_tokens() {
    let mut e = engine(EngineConfig::default());
    let mut now = SimTime::ZERO;
    e.add_request(&Request::new(1, now, 300, 0), 0).unwrap();
    let passes = drain(&mut e, &mut now);
    assert_eq!(passes.len(), 1);
    assert_eq!(tokens_of(&passes, 1), 0);
    assert_eq!(completed(&passes), vec![1]);
}

#[test]
fn dp_pass_ends_at_the_slowest_rank() {
    let cfg = EngineConfig {
        dp_size: 2,
        ..Default::default()
    };
    let mut e = Engine::new(cfg, Arc::new(PolynomialTiming)).unwrap();
    let mut now = SimTime::ZERO;
    e.add_request(&Request::new(1, now, 4096, 1), 0).unwrap();
    // Rank 1 idle: the pass takes rank 0's time.
    let p = step(&mut e, &mut now).unwrap();
    let busy = SimDuration::from_secs_f64(PolynomialTiming::prefill_ms(4096) * 1e-3).unwrap();
    assert_eq!(p.end.since(p.start), busy);
    // Both ranks busy, unequally: still the slower one.
    e.add_request(&Request::new(2, now, 4096, 1), 0).unwrap();
    e.add_request(&Request::new(3, now, 100, 1), 1).unwrap();
    let p = step(&mut e, &mut now).unwrap();
    assert_eq!(p.end.since(p.start), busy);
    assert_eq!(e.pool(1).cached_blocks() + e.pool(1).in_use_blocks(), 1);
}

#[test]
fn bad_configuration_is_a_clear_error() {
    let cfg = EngineConfig {
        block_size: Some(0),
        ..Default::default()
    };
    let e = Engine::new(cfg, fixed(1.0, 1.0)).unwrap_err().to_string();
    assert!(e.contains("block_size") && e.contains("at least 1"), "{e}");
    let cfg = EngineConfig {
        speedup_ratio: f64::NAN,
        ..Default::default()
    };
    assert!(Engine::new(cfg, fixed(1.0, 1.0))
        .unwrap_err()
        .to_string()
        .contains("speedup_ratio"));
    let cfg = EngineConfig {
        num_gpu_blocks: Some(u32::MAX),
        ..Default::default()
    };
    let e = Engine::new(cfg, fixed(1.0, 1.0)).unwrap_err().to_string();
    assert!(e.contains("num_gpu_blocks") && e.contains("at most"), "{e}");
    let e = resolve_profile("nonesuch").unwrap_err().to_string();
    assert!(e.contains("unknown profile `nonesuch`"), "{e}");
    assert!(aisim_core::timing::FixedTiming::new(-1.0, 1.0).is_err());
}

#[test]
fn speedup_ratios_divide_pass_times() {
    let cfg = EngineConfig {
        speedup_ratio: 2.0,
        decode_speedup_ratio: 5.0,
        ..Default::default()
    };
    let mut e = Engine::new(cfg, fixed(10.0, 5.0)).unwrap();
    let mut now = SimTime::ZERO;
    e.add_request(&Request::new(1, now, 10, 2), 0).unwrap();
    let passes = drain(&mut e, &mut now);
    let d: Vec<u64> = passes.iter().map(|p| p.end.since(p.start).0).collect();
    assert_eq!(d, vec![5_000_000, 500_000]);
}

#[derive(Debug)]
struct Broken;
impl aisim_core::timing::TimingModel for Broken {
    fn name(&self) -> &str {
        "broken"
    }
    fn pass_time(&self, _: &aisim_core::timing::PassShape<'_>) -> aisim_core::timing::PassTime {
        aisim_core::timing::PassTime {
            prefill_s: f64::NAN,
            decode_s: 0.0,
        }
    }
}

#[test]
fn a_user_timing_model_plugs_in_and_bad_durations_are_errors() {
    let mut e = Engine::new(EngineConfig::default(), Arc::new(Broken)).unwrap();
    e.add_request(&Request::new(1, SimTime::ZERO, 10, 1), 0)
        .unwrap();
    let err = e.start_pass(SimTime::ZERO).unwrap_err().to_string();
    assert!(
        err.contains("broken") && err.contains("invalid pass duration"),
        "{err}"
    );
}
