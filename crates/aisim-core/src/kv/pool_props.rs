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
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Allocate),
        3 => (any::<usize>(), 0u64..12).prop_map(|(i, h)| Op::Register(i, h)),
        2 => (0u64..12).prop_map(Op::Acquire),
        3 => any::<usize>().prop_map(Op::Release),
        1 => (0u64..12, 1u32..8).prop_map(|(h, n)| Op::Prefix(h, n)),
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
