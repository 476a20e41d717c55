//! Property test of the pool's accounting against a small model of it: which
//! blocks are held, which hold which content, and the LRU order of the cached.

use std::collections::{HashMap, VecDeque};

use proptest::prelude::*;

use super::pool::{KvBlockPool, PrefixMatch};
use super::BlockId;
use crate::block_hash::BlockHash;

#[derive(Debug, Clone)]
enum Op {
    Allocate,
    /// Register the `i`-th held reference (mod their count) as content `h`.
    Register(usize, u64),
    Acquire(u64),
    /// Release the `i`-th held reference (mod their count).
    Release(usize),
    /// The longest run of contents `h`, `h + 1`, ... (at most `n`) present:
    /// consecutive contents share groups, as a prompt's blocks do.
    Prefix(u64, u32),
    /// `n` blocks at once (`allocate_into`).
    AllocateMany(u32),
    /// Register the held references from the `i`-th (mod their count), up
    /// to `n` of them, as contents `h`, `h + 1`, ... at once (`register_all`).
    RegisterRun(usize, u64, usize),
    /// Release the last `n` held references at once, last first
    /// (`release_each_from_last`).
    ReleaseLast(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Allocate),
        3 => (any::<usize>(), 0u64..12).prop_map(|(i, h)| Op::Register(i, h)),
        2 => (0u64..12).prop_map(Op::Acquire),
        3 => any::<usize>().prop_map(Op::Release),
        1 => (0u64..12, 1u32..8).prop_map(|(h, n)| Op::Prefix(h, n)),
        1 => (0u32..6).prop_map(Op::AllocateMany),
        2 => (any::<usize>(), 0u64..12, 1usize..10).prop_map(|(i, h, n)| Op::RegisterRun(i, h, n)),
        1 => (1usize..6).prop_map(Op::ReleaseLast),
    ]
}

/// Contents spread over groups and lanes, as prompt chains make them.
fn content(h: u64) -> BlockHash {
    BlockHash(((h / 3 + 1) << 3) | (h % 3))
}

#[derive(Default)]
struct Model {
    /// One entry per reference held.
    held: Vec<BlockId>,
    content: HashMap<BlockId, BlockHash>,
    /// Cached blocks, least recently released first.
    lru: VecDeque<BlockId>,
}

proptest! {
    #[test]
    fn accounting_matches_a_model_of_the_pool(
        capacity in 1u32..12,
        ops in proptest::collection::vec(op(), 1..200),
    ) {
        let mut pool = KvBlockPool::new(capacity);
        let mut m = Model::default();
        for op in ops {
            match op {
                Op::Allocate => {
                    let (available, free) = (pool.available_blocks(), pool.free_blocks());
                    let got = pool.allocate();
                    prop_assert_eq!(got.is_some(), available > 0);
                    if let Some(b) = got {
                        if free == 0 {
                            // Evicts the least recently used cached block.
                            prop_assert_eq!(m.lru.pop_front(), Some(b));
                            let old = m.content.remove(&b).unwrap();
                            prop_assert!(!pool.contains(old));
                        }
                        prop_assert!(!m.content.contains_key(&b));
                        m.held.push(b);
                    }
                }
                Op::Register(i, h) if !m.held.is_empty() => {
                    let b = m.held[i % m.held.len()];
                    let h = content(h);
                    let known = pool.contains(h);
                    pool.register(b, h);
                    // A block keeps its first content; one already held
                    // elsewhere leaves it anonymous.
                    if !m.content.contains_key(&b) && !known {
                        m.content.insert(b, h);
                    }
                    prop_assert_eq!(pool.contains(h), known || m.content.get(&b) == Some(&h));
                }
                Op::Register(..) => {}
                Op::Acquire(h) => {
                    let h = content(h);
                    let known = pool.contains(h);
                    let got = pool.acquire_cached(h);
                    prop_assert_eq!(got.is_some(), known);
                    if let Some(b) = got {
                        prop_assert_eq!(m.content.get(&b), Some(&h));
                        m.lru.retain(|&c| c != b);
                        m.held.push(b);
                    }
                }
                Op::Release(i) if !m.held.is_empty() => {
                    let b = m.held.swap_remove(i % m.held.len());
                    pool.release(b);
                    if !m.held.contains(&b) && m.content.contains_key(&b) {
                        m.lru.push_back(b);
                    }
                }
                Op::Release(_) => {}
                Op::AllocateMany(n) => {
                    let (available, free) = (pool.available_blocks(), pool.free_blocks());
                    let mut got = Vec::new();
                    prop_assert_eq!(pool.allocate_into(n, &mut got), n <= available);
                    if n > available {
                        prop_assert!(got.is_empty());
                        continue;
                    }
                    prop_assert_eq!(got.len(), n as usize);
                    // Free blocks first, then the least recently used
                    // cached ones, in that order, their contents forgotten.
                    let evicted = (n as usize).saturating_sub(free as usize);
                    for &b in &got[got.len() - evicted..] {
                        prop_assert_eq!(m.lru.pop_front(), Some(b));
                        let old = m.content.remove(&b).unwrap();
                        prop_assert!(!pool.contains(old));
                    }
                    for &b in &got {
                        prop_assert!(!m.content.contains_key(&b));
                    }
                    m.held.extend(got);
                }
                Op::RegisterRun(i, h, n) if !m.held.is_empty() => {
                    let from = i % m.held.len();
                    let blocks: Vec<BlockId> = m.held.iter().skip(from).take(n).copied().collect();
                    let hashes: Vec<BlockHash> = (0..blocks.len()).map(|k| content(h + k as u64)).collect();
                    pool.register_all(&blocks, &hashes);
                    // One at a time, as `register` does each.
                    for (k, &b) in blocks.iter().enumerate() {
                        let c = content(h + k as u64);
                        let known = m.content.values().any(|&v| v == c);
                        if !m.content.contains_key(&b) && !known {
                            m.content.insert(b, c);
                        }
                    }
                    for k in 0..blocks.len() {
                        let c = content(h + k as u64);
                        prop_assert_eq!(pool.contains(c), m.content.values().any(|&v| v == c));
                    }
                }
                Op::RegisterRun(..) => {}
                Op::ReleaseLast(n) => {
                    let mut batch = m.held.split_off(m.held.len().saturating_sub(n));
                    pool.release_each_from_last(&batch);
                    while let Some(b) = batch.pop() {
                        let held = m.held.contains(&b) || batch.contains(&b);
                        if !held && m.content.contains_key(&b) {
                            m.lru.push_back(b);
                        }
                    }
                }
                Op::Prefix(h, n) => {
                    let got = pool.longest_prefix((h..).map(content), n);
                    let mut want = PrefixMatch::default();
                    for c in (h..).map(content).take(n as usize) {
                        let Some((b, _)) = m.content.iter().find(|&(_, &v)| v == c) else {
                            break;
                        };
                        want.blocks += 1;
                        want.evictable += u32::from(m.lru.contains(b));
                    }
                    prop_assert_eq!(got, want);
                }
            }
            pool.check_invariants().map_err(TestCaseError::fail)?;
            let mut distinct = m.held.clone();
            distinct.sort_unstable();
            distinct.dedup();
            prop_assert_eq!(pool.in_use_blocks() as usize, distinct.len());
            prop_assert_eq!(pool.cached_blocks() as usize, m.lru.len());
            prop_assert_eq!(
                pool.in_use_blocks() + pool.cached_blocks() + pool.free_blocks(),
                capacity
            );
        }
    }
}
