//! Tests of the radix cache, with each request's pages named as the
//! scheduler names them (`PageStore::identify`, in `store.rs`, which builds
//! on the cache): a child of `radix` for its private fields, in a file of its
//! own so that `radix.rs` does not import `store.rs` back.

use super::*;
use crate::block_hash::BlockHash;
use crate::kv::PageStore;
use crate::request::Request;
use crate::time::SimTime;

fn pages_of(req: &Request) -> Vec<Span> {
    let mut p = Default::default();
    <RadixCache as PageStore>::identify(&mut p, req, 1, true);
    p.0
}

/// The cost unit is the span: a prompt of 100 trace blocks of 512
/// tokens at one-token pages is 100 nodes, its decoded tokens one more,
/// and a prompt sharing part of it adds a split and its own spans.
#[test]
fn a_long_prompt_at_one_token_pages_is_one_node_per_trace_block() {
    let ids: Vec<u64> = (0..100).collect();
    let a = Request::new(0, SimTime::ZERO, 51_200, 1_000).with_hash_ids(ids.clone(), 512);
    let mut cache = RadixCache::new(1 << 20);
    let (pa, mut ha) = (pages_of(&a), RadixHold::default());
    assert!(cache.allocate(&mut ha, 51_200));
    cache.insert(&mut ha, &pa, 51_200);
    assert_eq!(cache.index.len(), 100);
    for _ in 0..999 {
        assert!(cache.allocate(&mut ha, 1)); // decode, a token at a time
    }
    cache.insert(&mut ha, &pa, 52_199);
    assert_eq!(cache.index.len(), 101, "decoded tokens are one span");
    cache.release(&mut ha);
    assert_eq!(cache.cached_pages(), 52_199);
    // 40 blocks and 100 tokens in common, then its own.
    let mut ids_b = ids[..41].to_vec();
    ids_b.extend(1000..1010);
    let b = Request::new(1, SimTime::ZERO, 20_480 + 100, 10).with_hash_ids(ids_b, 512);
    let pb = pages_of(&b);
    let hit = cache.longest_prefix(pb.iter().copied(), 20_580);
    assert_eq!((hit.blocks, hit.evictable), (20_480 + 100, 20_580));
    let mut hb = RadixHold::default();
    cache.lock_prefix(&mut hb, &pb, hit.blocks);
    assert_eq!(cache.index.len(), 102, "the 41st block split once");
    assert_eq!(cache.in_use_pages(), 20_580);
    cache.release(&mut hb);
    cache.check_invariants().unwrap();
    // Evicting the 999 decoded tokens and 50 more: the oldest leaf goes,
    // the next is shortened from its end.
    let mut hc = RadixHold::default();
    assert!(cache.allocate(&mut hc, (1 << 20) - 52_199 + 1_049));
    assert_eq!(cache.index.len(), 101);
    assert_eq!(
        cache.longest_prefix(pa.iter().copied(), u32::MAX).blocks,
        51_200 - 50
    );
    cache.check_invariants().unwrap();
}

/// KV events are one per run the tree files (a trace block's pages), and
/// name their pages as the block pool does: a stored prompt's pages are
/// its `prompt_block_hashes`, an eviction the pages taken from the end.
#[test]
fn events_are_runs_naming_each_page_by_its_block_hash() {
    let req = Request::new(0, SimTime::ZERO, 40, 4).with_hash_ids(vec![3, 4, 5], 16);
    let pages = pages_of(&req);
    let mut cache = RadixCache::new(40);
    cache.capture_events(true);
    let mut hold = RadixHold::default();
    assert!(cache.allocate(&mut hold, 40));
    cache.insert(&mut hold, &pages, 40);
    cache.release(&mut hold);
    let mut other = RadixHold::default();
    assert!(cache.allocate(&mut other, 3)); // evicts the last 3 pages
    let mut got = Vec::new();
    cache.drain_events(&mut got);
    let hashes = req.block_hashes(1);
    assert_eq!(hashes.len(), 40);
    let runs = |stored: bool| -> Vec<PageRun> {
        got.iter()
            .filter_map(|e| match *e {
                KvEvent::Stored(r) if stored => Some(r),
                KvEvent::Removed(r) if !stored => Some(r),
                _ => None,
            })
            .collect()
    };
    let (stored, removed) = (runs(true), runs(false));
    assert_eq!(
        stored.iter().map(|r| r.len()).collect::<Vec<_>>(),
        [16, 16, 8],
        "one run per trace block"
    );
    let named: Vec<BlockHash> = stored.iter().flat_map(|r| r.hashes()).collect();
    assert_eq!(named, hashes);
    assert_eq!(removed.len(), 1);
    assert_eq!((removed[0].key(), removed[0].first()), (stored[2].key(), 5));
    assert_eq!(removed[0].hashes().collect::<Vec<_>>(), hashes[37..]);
    assert!(got.len() == 4 && !stored[0].is_block());
}
