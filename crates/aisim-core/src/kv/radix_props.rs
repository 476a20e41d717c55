//! Property test of the radix cache against a model that tracks every page
//! on its own: which pages are cached, who holds which, and the LRU order of
//! the unheld ones page by page. The cache works in spans; the model's
//! answers (counts, matches, evictions) are what it must give.

use std::collections::{HashMap, VecDeque};

use proptest::prelude::*;

use super::radix::{RadixCache, RadixHold};
use super::PageStore;
use crate::request::Request;
use crate::time::SimTime;

type PageId = (u64, u32);

#[derive(Debug, Clone)]
enum Op {
    /// Request `i` (if it holds nothing) takes its longest cached prefix.
    Admit(usize),
    /// Request `i` asks for `n` more pages.
    Grow(usize, u32),
    /// Request `i` files up to `n` more of its pages in the cache.
    Insert(usize, u32),
    Release(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0usize..4).prop_map(Op::Admit),
        3 => (0usize..4, 1u32..12).prop_map(|(i, n)| Op::Grow(i, n)),
        3 => (0usize..4, 1u32..12).prop_map(|(i, n)| Op::Insert(i, n)),
        2 => (0usize..4).prop_map(Op::Release),
    ]
}

/// Four requests whose trace ids share stems (ids from a small alphabet).
fn requests() -> impl Strategy<Value = Vec<Request>> {
    proptest::collection::vec(
        (proptest::collection::vec(0u64..3, 1..6), 1u32..30, 1u32..10),
        4,
    )
    .prop_map(|rs| {
        rs.into_iter()
            .enumerate()
            .map(|(i, (ids, input, output))| {
                Request::new(i as u64, SimTime::ZERO, input, output).with_hash_ids(ids, 4)
            })
            .collect()
    })
}

#[derive(Default)]
struct ModelHold {
    tree: Vec<PageId>,
    extra: u32,
}

struct Model {
    free: u32,
    /// Pages in the cache and how many requests hold each.
    refs: HashMap<PageId, u32>,
    /// Unheld cached pages, least recently released first.
    lru: VecDeque<PageId>,
}

impl Model {
    fn lock(&mut self, p: PageId) {
        let r = self.refs.get_mut(&p).unwrap();
        *r += 1;
        if *r == 1 {
            self.lru.retain(|&q| q != p);
        }
    }
}

proptest! {
    #[test]
    fn the_radix_cache_answers_as_a_page_by_page_model(
        capacity in 1u32..40,
        page in 1u32..4,
        reqs in requests(),
        ops in proptest::collection::vec(op(), 1..150),
    ) {
        let mut cache = RadixCache::new(capacity);
        let pages: Vec<_> = reqs
            .iter()
            .map(|r| {
                let mut p = Default::default();
                <RadixCache as PageStore>::identify(&mut p, r, page, true);
                p
            })
            .collect();
        // The model names page `j` of request `i` by its span's key.
        let name = |i: usize, j: u32| -> PageId {
            let spans = &pages[i].0;
            let s = spans.iter().find(|s| s.start <= j && j < s.end).unwrap();
            (s.key, j)
        };
        let max_pages = |i: usize| (reqs[i].input_length + reqs[i].output_length) / page;
        let mut holds = [RadixHold::default(); 4];
        let mut model_holds: Vec<ModelHold> = (0..4).map(|_| ModelHold::default()).collect();
        let mut m = Model { free: capacity, refs: HashMap::new(), lru: VecDeque::new() };
        let model_match = |m: &Model, i: usize, max: u32| {
            let (mut blocks, mut evictable) = (0, 0);
            while blocks < max {
                match m.refs.get(&name(i, blocks)) {
                    Some(&r) => {
                        blocks += 1;
                        evictable += (r == 0) as u32;
                    }
                    None => break,
                }
            }
            (blocks, evictable)
        };
        for op in ops {
            match op {
                Op::Admit(i) => {
                    if holds[i].pages() > 0 {
                        continue;
                    }
                    let max = max_pages(i).saturating_sub(1);
                    let hit = cache.longest_prefix(pages[i].0.iter().copied(), max);
                    prop_assert_eq!((hit.blocks, hit.evictable), model_match(&m, i, max));
                    cache.lock_prefix(&mut holds[i], &pages[i].0, hit.blocks);
                    for j in 0..hit.blocks {
                        let p = name(i, j);
                        m.lock(p);
                        model_holds[i].tree.push(p);
                    }
                }
                Op::Grow(i, n) => {
                    let got = cache.allocate(&mut holds[i], n);
                    prop_assert_eq!(got, n <= m.free + m.lru.len() as u32);
                    if got {
                        let from_free = n.min(m.free);
                        m.free -= from_free;
                        for _ in from_free..n {
                            let p = m.lru.pop_front().unwrap();
                            m.refs.remove(&p);
                        }
                        model_holds[i].extra += n;
                    }
                }
                Op::Insert(i, n) => {
                    let h = &mut model_holds[i];
                    let upto = (h.tree.len() as u32 + n).min(h.tree.len() as u32 + h.extra);
                    cache.insert(&mut holds[i], &pages[i].0, upto);
                    for j in h.tree.len() as u32..upto {
                        let p = name(i, j);
                        h.extra -= 1;
                        match m.refs.entry(p) {
                            std::collections::hash_map::Entry::Occupied(_) => {
                                // Already cached: its own copy is freed, it shares that one.
                                m.free += 1;
                                m.lock(p);
                            }
                            std::collections::hash_map::Entry::Vacant(v) => {
                                v.insert(1);
                            }
                        }
                        h.tree.push(p);
                    }
                }
                Op::Release(i) => {
                    cache.release(&mut holds[i]);
                    let h = std::mem::take(&mut model_holds[i]);
                    m.free += h.extra;
                    for p in h.tree.into_iter().rev() {
                        let r = m.refs.get_mut(&p).unwrap();
                        *r -= 1;
                        if *r == 0 {
                            m.lru.push_back(p);
                        }
                    }
                }
            }
            cache.check_invariants().map_err(TestCaseError::fail)?;
            prop_assert_eq!(cache.free_pages(), m.free);
            prop_assert_eq!(cache.cached_pages(), m.lru.len() as u32);
            for (i, h) in holds.iter().enumerate() {
                prop_assert_eq!(h.tree as usize, model_holds[i].tree.len());
                prop_assert_eq!(h.extra, model_holds[i].extra);
                let hit = cache.longest_prefix(pages[i].0.iter().copied(), u32::MAX);
                prop_assert_eq!((hit.blocks, hit.evictable), model_match(&m, i, u32::MAX));
            }
        }
        for h in holds.iter_mut() {
            cache.release(h);
        }
        prop_assert_eq!(cache.free_pages() + cache.cached_pages(), capacity);
    }
}
