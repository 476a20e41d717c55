//! The cached-prefix query a placement makes per request and rank (`lpwl`,
//! the disaggregated `destination-missing` transfer) allocates nothing, on
//! either kind of pool: counted by a global allocator, in a test binary of
//! its own so that no other test's allocations are counted.

mod alloc_count;
mod common;

use aisim_core::{Backend, EngineConfig, Request, SimTime};
use alloc_count::allocations;
use common::*;

#[test]
fn a_cached_prefix_query_allocates_nothing_and_finds_the_prefix() {
    // SGLang at its one-token pages, vLLM at 16-token blocks.
    for (backend, block_size) in [(Backend::Sglang, 1u32), (Backend::Vllm, 16)] {
        let cfg = EngineConfig {
            backend,
            block_size: Some(block_size),
            num_gpu_blocks: Some(1 << 16),
            ..Default::default()
        };
        let mut e = engine(cfg);
        let mut now = SimTime::ZERO;
        // Four 512-token trace blocks, computed and cached.
        let a = Request::new(1, now, 2048, 2).with_hash_ids(vec![10, 11, 12, 13], 512);
        e.add_request(&a, 0).unwrap();
        drain(&mut e, &mut now);
        // Three blocks in common and one of its own; and one with nothing.
        let b = Request::new(2, now, 2048, 2).with_hash_ids(vec![10, 11, 12, 99], 512);
        let c = Request::new(3, now, 2048, 2).with_hash_ids(vec![7, 8], 512);
        let before = allocations();
        let found = [
            e.cached_prefix_tokens(&b, 0),
            e.cached_prefix_tokens(&a, 0),
            e.cached_prefix_tokens(&c, 0),
        ];
        let allocated = allocations() - before;
        assert_eq!(allocated, 0, "{backend:?}: the queries allocated");
        // `a` again: all but its last token, rounded down to pages.
        let all_but_last = (2047 / block_size) * block_size;
        assert_eq!(found, [3 * 512, all_but_last, 0], "{backend:?}");
    }
}
