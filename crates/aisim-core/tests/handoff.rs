//! The disaggregated handoff entry points: a prefill job that holds its
//! blocks, a request admitted with its prompt's KV present.

mod common;

use aisim_core::{Backend, EngineConfig, EngineEvent, Request, RequestId, SimTime};
use common::*;

fn config(backend: Backend) -> EngineConfig {
    EngineConfig {
        backend,
        block_size: Some(16),
        ..EngineConfig::default()
    }
}

fn prompt(id: u64, input: u32, output: u32) -> Request {
    Request::new(id, SimTime::ZERO, input, output).with_hash_ids(vec![1, 2, 3, 4], 16)
}

#[test]
fn a_prefill_job_holds_its_blocks_until_released() {
    for backend in [Backend::Vllm, Backend::Trtllm] {
        let mut e = engine(config(backend));
        e.add_prefill_job(&prompt(1, 64, 40), 0).unwrap().unwrap();
        let mut now = SimTime::ZERO;
        let passes = drain(&mut e, &mut now);
        // One prefill pass: the prompt and its hidden token, then done.
        assert_eq!(passes.len(), 1);
        assert_eq!(completed(&passes), [1]);
        assert_eq!(tokens_of(&passes, 1), 1);
        assert!(!e.has_work());
        // 64 prompt tokens in 16-token blocks, still held.
        assert_eq!(e.pool(0).in_use_blocks(), 4);
        assert!(e.release_held(RequestId(1)));
        assert_eq!(e.pool(0).in_use_blocks(), 0);
        assert!(!e.release_held(RequestId(1)), "released once");
        // The blocks went into the cache: the same prompt reuses them.
        assert_eq!(e.cached_prefix_tokens(&prompt(2, 64, 1), 0), 48);
    }
}

#[test]
fn a_timeout_frees_a_held_job() {
    let mut e = engine(config(Backend::Vllm));
    e.add_prefill_job(&prompt(1, 64, 5), 0).unwrap().unwrap();
    let mut now = SimTime::ZERO;
    drain(&mut e, &mut now);
    assert_eq!(e.pool(0).in_use_blocks(), 4);
    assert!(e.abort(RequestId(1)));
    assert_eq!(e.pool(0).in_use_blocks(), 0);
}

#[test]
fn a_transferred_request_decodes_from_its_first_pass() {
    let mut e = engine(config(Backend::Vllm));
    e.add_transferred(&prompt(1, 64, 3), 0).unwrap().unwrap();
    let mut now = SimTime::ZERO;
    let passes = drain(&mut e, &mut now);
    // Three decode passes of 5 ms (the fixed model's decode time): the
    // prompt is not computed again, only its last token with the first pass.
    assert_eq!(passes.len(), 3);
    for (k, p) in passes.iter().enumerate() {
        assert_eq!(p.end.0 - p.start.0, 5_000_000, "pass {k} is a decode pass");
    }
    let first = passes[0]
        .events
        .iter()
        .find_map(|ev| match ev {
            EngineEvent::Token { id, first } if id.0 == 1 => Some(*first),
            _ => None,
        })
        .unwrap();
    assert!(first, "the first decode pass emits the first token");
    assert_eq!(tokens_of(&passes, 1), 3);
    assert_eq!(completed(&passes), [1]);
}

#[test]
fn a_transferred_request_takes_its_own_prefix_hits() {
    let mut e = engine(config(Backend::Vllm));
    let mut now = SimTime::ZERO;
    e.add_request(&prompt(1, 64, 1), 0).unwrap();
    drain(&mut e, &mut now);
    e.add_transferred(&prompt(2, 64, 2), 0).unwrap().unwrap();
    let passes = drain(&mut e, &mut now);
    let reused = passes
        .iter()
        .flat_map(|p| &p.events)
        .find_map(|ev| match ev {
            EngineEvent::Admitted {
                id, reused_tokens, ..
            } if id.0 == 2 => Some(*reused_tokens),
            _ => None,
        });
    assert_eq!(reused, Some(48));
    assert_eq!(tokens_of(&passes, 2), 2);
}

#[test]
fn sglang_refuses_the_handoff() {
    let mut e = engine(config(Backend::Sglang));
    let err = e.add_transferred(&prompt(1, 64, 3), 0).unwrap_err();
    assert!(err.to_string().contains("sglang"), "{err}");
    let err = e.add_prefill_job(&prompt(1, 64, 3), 0).unwrap_err();
    assert!(err.to_string().contains("sglang"), "{err}");
}
