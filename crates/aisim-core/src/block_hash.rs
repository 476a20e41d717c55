//! Chained block hashes: engine blocks derived from trace block ids for any pair
//! of trace block size and engine block size.
//!
//! Engine block `j` covers prompt tokens `[j·B, (j+1)·B)`. Token `p` carries the id
//! `hash_ids[p / T]`, so the prefix a block ends is a run of complete trace
//! blocks and part of one more. Two prompts share block `j` exactly when they
//! agree on every token up to its end.
//!
//! A hash is a *group* (its high 61 bits) and a *lane* (its low 3 bits). The
//! engine blocks ending inside one trace block share a group: the chain of
//! trace ids up to and including that block. The lane says how far into the
//! trace block the engine block ends. (Past eight lanes, as with a 16-token
//! engine block in a 512-token trace block, each eight start a new group.)
//! The prefix index files a group's blocks under one entry, so registering a
//! long prompt costs one lookup per group, not one per block. Hashing costs one
//! mixing step per trace block and a few bit operations per engine block.

/// Lanes per group: the low bits of a hash.
pub(crate) const LANES: usize = 8;
const LANE_BITS: u64 = LANES as u64 - 1;

/// A chained hash identifying the content of one engine block (and everything
/// before it). Its group is never zero: zero means "no hash" inside the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlockHash(pub(crate) u64);

impl BlockHash {
    /// The hash as a number (for a caller's own index, e.g. a router's).
    #[inline]
    pub fn value(self) -> u64 {
        self.0
    }

    /// The hash of lane `lane` (below `LANES`) of group `group` (a mixed
    /// value; its low bits are dropped).
    #[inline]
    fn in_group(group: u64, lane: u64) -> BlockHash {
        debug_assert!(lane <= LANE_BITS);
        let g = group & !LANE_BITS;
        BlockHash(if g == 0 { LANE_BITS + 1 } else { g } | lane)
    }

    /// The group: shared by the blocks ending inside one trace block (up to
    /// `LANES` of them). Never 0. An index may file a group's blocks under
    /// one entry, as the pool and the kv router do.
    #[inline]
    pub fn group(self) -> u64 {
        self.0 & !LANE_BITS
    }

    /// The lane within the group, below 8.
    #[inline]
    pub fn lane(self) -> usize {
        (self.0 & LANE_BITS) as usize
    }
}

/// The SplitMix64 finalizer: a fast, well-mixed, deterministic 64-bit mix.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[inline]
pub(crate) fn combine(seed: u64, value: u64) -> u64 {
    mix64(
        seed ^ value
            .wrapping_add(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(seed << 6)
            .wrapping_add(seed >> 2),
    )
}

/// Chains one trace block of `len` tokens carrying id `id` onto `h`: one
/// mixing round per trace block (the hot part of hashing a long prompt).
#[inline]
fn combine_run(h: u64, id: u64, len: u64) -> u64 {
    mix64(
        h.rotate_left(29)
            ^ id.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ len.wrapping_mul(0xc2b2_ae3d_27d4_eb4f),
    )
}

/// Lane `n` (counting on past `LANES`) of `group`: the first eight in the
/// group itself, later ones in groups derived from it.
#[inline]
fn nth_lane(group: u64, n: u64) -> BlockHash {
    let lanes = LANES as u64;
    let g = if n < lanes {
        group
    } else {
        combine(group, n / lanes)
    };
    BlockHash::in_group(g, n % lanes)
}

/// Where every prompt's chain starts.
const CHAIN_SEED: u64 = 0x005e_ed0f_a151;

/// Hashes of the complete engine blocks of a prompt of `input_length` tokens whose
/// token ids come from `hash_ids` in trace blocks of `trace_block_size` tokens.
/// Blocks reaching past the tokens that `hash_ids` covers are not hashed (those
/// tokens have no identity), so the chain may be shorter than `input_length / B`.
pub fn prompt_block_hashes(
    hash_ids: &[u64],
    trace_block_size: u32,
    input_length: u32,
    block_size: u32,
) -> Vec<BlockHash> {
    let mut out = Vec::new();
    extend_prompt_block_hashes(
        &mut out,
        hash_ids,
        trace_block_size,
        input_length,
        block_size,
    );
    out
}

/// Appends the hashes of `prompt_block_hashes` to `out`. When engine blocks
/// tile a trace block into at most `LANES` (64-token blocks in 512-token
/// trace blocks, the usual case), each trace block's group is mixed once and
/// its lanes written in a row, with none of the iterator's per-block steps;
/// any other pair of sizes takes the iterator.
pub fn extend_prompt_block_hashes(
    out: &mut Vec<BlockHash>,
    hash_ids: &[u64],
    trace_block_size: u32,
    input_length: u32,
    block_size: u32,
) {
    let (t, b) = (trace_block_size as u64, block_size as u64);
    let tiles = b > 0 && t >= b && t % b == 0 && t / b <= LANES as u64;
    if !tiles || hash_ids.is_empty() {
        out.extend(prompt_block_hash_iter(
            hash_ids,
            trace_block_size,
            input_length,
            block_size,
        ));
        return;
    }
    let covered = (hash_ids.len() as u64 * t).min(input_length as u64);
    let mut left = (covered / b) as usize;
    let per = (t / b) as usize;
    out.reserve(left);
    let mut group = CHAIN_SEED;
    for &id in hash_ids {
        if left == 0 {
            break;
        }
        group = combine_run(group, id, t);
        let n = per.min(left);
        out.extend((0..n as u64).map(|lane| BlockHash::in_group(group, lane)));
        left -= n;
    }
}

/// The hashes of `prompt_block_hashes`, computed as they are taken: a
/// caller that stops at the first miss (a prefix lookup) hashes no further
/// and allocates nothing.
pub fn prompt_block_hash_iter<'a>(
    hash_ids: &'a [u64],
    trace_block_size: u32,
    input_length: u32,
    block_size: u32,
) -> impl Iterator<Item = BlockHash> + 'a {
    let hashable = !(hash_ids.is_empty() || trace_block_size == 0 || block_size == 0);
    let t = trace_block_size as u64;
    let b = (block_size as u64).max(1);
    let covered = (hash_ids.len() as u64 * t).min(input_length as u64);
    let full_blocks = if hashable { covered / b } else { 0 };
    // `group` chains the ids of trace blocks `0..=k`; trace block `k` holds
    // tokens `[k_start, k_start + t)`. A block ending inside trace block `k`
    // takes that group, and the lane of how far into `k` it ends: within one
    // trace block those ends differ by multiples of `b`, so `(end - k_start -
    // 1) / b` tells them apart. Every prompt whose tokens agree up to the
    // block's end computes the same pair, whatever the rest of it holds.
    let (mut k, mut k_start) = (0usize, 0u64);
    let mut group = hash_ids
        .first()
        .map_or(0, |&id| combine_run(CHAIN_SEED, id, t));
    // The lane number of the block ending at `end`, kept step by step: one
    // division per trace block entered, not per engine block.
    let mut lane = 0u64;
    (1..full_blocks + 1).map(move |j| {
        let end = j * b;
        if k_start + t < end {
            while k_start + t < end {
                k += 1;
                k_start += t;
                group = combine_run(group, hash_ids[k], t);
            }
            lane = (end - k_start - 1) / b;
        } else if j > 1 {
            lane += 1;
        }
        nth_lane(group, lane)
    })
}

/// A run of engine pages `[start, end)` with one source of identity: the
/// pages of a prompt ending inside one trace block (their identity is that
/// block's chain and their index), or a request's private pages. The radix
/// cache files and matches spans, never single pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    /// The chain of trace ids up to the span's trace block, or a request's
    /// private key: with a page index, it names one page's content.
    pub key: u64,
    pub start: u32,
    pub end: u32,
    /// The lane number of page `start` (see `nth_lane`); the next pages
    /// count on from it.
    pub lane: u32,
    pub private: bool,
}

impl Span {
    /// The `BlockHash` `prompt_block_hashes` (or `private_block_hash`) gives
    /// page `j` of this span: KV events name pages as the block pool does.
    #[cfg(test)]
    pub(crate) fn page_hash(&self, j: u32) -> BlockHash {
        page_hash(self.naming(), self.key, self.lane + (j - self.start))
    }

    /// How its pages are named.
    pub(crate) fn naming(&self) -> Naming {
        if self.private {
            Naming::Private
        } else {
            Naming::Prompt
        }
    }
}

/// How a run of pages under one key is named, page by page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Naming {
    /// A block pool's block: the key is its hash's group, the lane its lane.
    Block,
    /// The pages of a prompt ending inside one trace block: the key is the
    /// block's chain, lane `n` that of `nth_lane`.
    Prompt,
    /// A request's private pages: the key is its private key, lane `n` its
    /// page index.
    Private,
}

/// The `BlockHash` of lane number `n` under `key`, named as `naming` says:
/// what `prompt_block_hashes` or `private_block_hash` gives that page.
#[inline]
pub(crate) fn page_hash(naming: Naming, key: u64, n: u32) -> BlockHash {
    let (n, lanes) = (n as u64, LANES as u64);
    match naming {
        Naming::Block => BlockHash::in_group(key, n),
        Naming::Prompt => nth_lane(key, n),
        Naming::Private => BlockHash::in_group(combine(key, n / lanes), n % lanes),
    }
}

/// The spans of `prompt_block_hashes`' pages, one per trace block a page
/// ends in (so O(trace blocks) whatever the page size), made as they are
/// taken: a prefix lookup allocates nothing and names nothing past its
/// first miss.
pub(crate) fn prompt_span_iter(
    hash_ids: &[u64],
    trace_block_size: u32,
    input_length: u32,
    block_size: u32,
) -> impl Iterator<Item = Span> + '_ {
    let hashable = !(hash_ids.is_empty() || trace_block_size == 0 || block_size == 0);
    let (t, b) = (trace_block_size as u64, (block_size as u64).max(1));
    let covered = if hashable {
        (hash_ids.len() as u64 * t).min(input_length as u64)
    } else {
        0
    };
    let full_blocks = covered / b;
    hash_ids
        .iter()
        .enumerate()
        .take_while(move |&(k, _)| (k as u64 * t) < covered)
        .scan(CHAIN_SEED, move |group, (k, &id)| {
            *group = combine_run(*group, id, t);
            Some((k as u64 * t, *group))
        })
        .filter_map(move |(k_start, group)| {
            // Pages ending in `(k_start, k_start + t]`.
            let start = k_start / b;
            let end = ((k_start + t) / b).min(full_blocks);
            (start < end).then(|| Span {
                key: group,
                start: start as u32,
                end: end as u32,
                lane: (((start + 1) * b - k_start - 1) / b) as u32,
                private: false,
            })
        })
}

/// The span of every page of request `request_salt` from `start` on: what
/// `private_block_hash` names.
pub(crate) fn private_span(request_salt: u64, start: u32) -> Span {
    Span {
        key: mix64(request_salt ^ PRIVATE_SALT),
        start,
        end: u32::MAX,
        lane: start,
        private: true,
    }
}

const PRIVATE_SALT: u64 = 0xa5a5_5a5a_dead_beef;

/// Hash of a block that only one request can ever hold (its generated tokens, or a
/// prompt without identity): unique per request and block index, so a preempted
/// request finds its own blocks again and nobody else does. Eight consecutive
/// blocks share a group.
#[inline]
pub fn private_block_hash(request_salt: u64, block_index: u32) -> BlockHash {
    let lanes = LANES as u64;
    let j = block_index as u64;
    BlockHash::in_group(
        combine(mix64(request_salt ^ PRIVATE_SALT), j / lanes),
        j % lanes,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extending_gives_the_iterators_hashes_for_every_pair_of_sizes() {
        // Tiling pairs take the fast path, the rest the iterator; both must
        // give the chain block for block, whatever the lengths and ids.
        let ids: Vec<u64> = (0..40).map(|i| mix64(i) % 7).collect();
        for t in [1, 16, 64, 100, 128, 512, 1024] {
            for b in [1, 8, 16, 32, 64, 100, 128, 512, 4096] {
                for n_ids in [0, 1, 3, 40] {
                    for input in [0, 1, 63, 64, 65, 511, 512, 513, 4000, 20_000, 40_000] {
                        let ids = &ids[..n_ids];
                        let expected: Vec<BlockHash> =
                            prompt_block_hash_iter(ids, t, input, b).collect();
                        let mut got = vec![BlockHash(1)];
                        extend_prompt_block_hashes(&mut got, ids, t, input, b);
                        assert_eq!(got[0], BlockHash(1), "kept what was there");
                        assert_eq!(got[1..], expected, "t {t} b {b} ids {n_ids} input {input}");
                    }
                }
            }
        }
        // A zero block size hashes nothing either way.
        let mut got = Vec::new();
        extend_prompt_block_hashes(&mut got, &ids, 512, 4096, 0);
        assert!(got.is_empty());
    }

    #[test]
    fn prompts_share_blocks_exactly_while_their_tokens_agree() {
        // Trace block 512, engine block 64: the first 8 engine blocks come from id 7.
        let a = prompt_block_hashes(&[7, 8], 512, 1024, 64);
        let b = prompt_block_hashes(&[7, 9], 512, 1024, 64);
        assert_eq!(a.len(), 16);
        assert_eq!(a[..8], b[..8]);
        assert!(a[8..].iter().zip(&b[8..]).all(|(x, y)| x != y));
    }

    #[test]
    fn engine_blocks_larger_than_trace_blocks_span_several_ids() {
        // Trace block 16, engine block 64: each engine block covers 4 trace ids.
        let ids: Vec<u64> = (0..8).collect();
        let a = prompt_block_hashes(&ids, 16, 128, 64);
        let mut other = ids.clone();
        other[5] = 99; // differs inside the second engine block
        let b = prompt_block_hashes(&other, 16, 128, 64);
        assert_eq!(a.len(), 2);
        assert_eq!(a[0], b[0]);
        assert_ne!(a[1], b[1]);
    }

    #[test]
    fn partial_last_trace_block_and_uncovered_tokens() {
        // 600 tokens over two trace blocks of 512: 9 full engine blocks of 64.
        assert_eq!(prompt_block_hashes(&[1, 2], 512, 600, 64).len(), 9);
        // Only one id for 1000 tokens: tokens past 512 have no identity.
        assert_eq!(prompt_block_hashes(&[1], 512, 1000, 64).len(), 8);
        // A shorter prompt with the same ids shares every full block of the longer.
        let long = prompt_block_hashes(&[1, 2], 512, 1024, 64);
        let short = prompt_block_hashes(&[1, 2], 512, 600, 64);
        assert_eq!(short[..], long[..9]);
        assert!(prompt_block_hashes(&[], 512, 1000, 64).is_empty());
    }

    #[test]
    fn non_dividing_block_sizes() {
        // Engine block 48 against trace block 32: runs straddle block edges.
        let ids: Vec<u64> = (0..6).collect();
        let a = prompt_block_hashes(&ids, 32, 192, 48);
        assert_eq!(a.len(), 4);
        let mut other = ids.clone();
        other[2] = 77; // tokens 64..96: inside engine block 1 (48..96)
        let b = prompt_block_hashes(&other, 32, 192, 48);
        assert_eq!(a[0], b[0]);
        assert_ne!(a[1], b[1]);
        assert_ne!(a[3], b[3]);
    }

    #[test]
    fn blocks_of_one_trace_block_share_a_group_in_distinct_lanes() {
        // Trace block 512, engine block 64: eight blocks per trace block.
        let a = prompt_block_hashes(&[7, 8], 512, 1024, 64);
        for (j, h) in a.iter().enumerate() {
            assert_eq!(h.group(), a[j / 8 * 8].group());
            assert_eq!(h.lane(), j % 8);
        }
        assert_ne!(a[0].group(), a[8].group());
        // Engine block 16: 32 per trace block, a fresh group every eight.
        let b = prompt_block_hashes(&[7], 512, 512, 16);
        let groups: std::collections::BTreeSet<u64> = b.iter().map(|h| h.group()).collect();
        assert_eq!(groups.len(), 4);
        assert!(b.iter().enumerate().all(|(j, h)| h.lane() == j % 8));
        // Engine blocks spanning trace blocks: one block per group.
        let c = prompt_block_hashes(&[1, 2, 3, 4], 16, 64, 32);
        assert_eq!(c.len(), 2);
        assert_ne!(c[0].group(), c[1].group());
    }

    #[test]
    fn private_hashes_group_eight_blocks_of_one_request() {
        let a: Vec<BlockHash> = (0..16).map(|j| private_block_hash(3, j)).collect();
        assert!(a[..8].iter().all(|h| h.group() == a[0].group()));
        assert_ne!(a[0].group(), a[8].group());
        assert!(a.iter().enumerate().all(|(j, h)| h.lane() == j % 8));
        assert_ne!(private_block_hash(4, 0).group(), a[0].group());
        assert!(a.iter().all(|h| h.group() != 0));
    }

    #[test]
    fn step_by_step_lanes_match_the_direct_formula() {
        // Block `j` ends at `j·b`, inside trace block `k = (j·b - 1) / t`: its
        // group chains ids `0..=k` and its lane counts `b`-steps into `k`.
        fn direct(ids: &[u64], t: u64, len: u64, b: u64) -> Vec<BlockHash> {
            let mut chain = Vec::new();
            let mut g = CHAIN_SEED;
            for &id in ids {
                g = combine_run(g, id, t);
                chain.push(g);
            }
            let covered = (ids.len() as u64 * t).min(len);
            (1..=covered / b)
                .map(|j| {
                    let k = (j * b - 1) / t;
                    nth_lane(chain[k as usize], (j * b - k * t - 1) / b)
                })
                .collect()
        }
        let ids: Vec<u64> = (0..40).map(|i| i * 31 + 5).collect();
        for t in [1u32, 7, 16, 32, 48, 64, 100, 512, 1000] {
            for b in [1u32, 3, 16, 32, 48, 64, 128, 1000] {
                for len in [1u32, 63, 64, 65, 999, 4096, 20_000] {
                    assert_eq!(
                        prompt_block_hashes(&ids, t, len, b),
                        direct(&ids, t as u64, len as u64, b as u64),
                        "t {t} b {b} len {len}"
                    );
                }
            }
        }
    }

    #[test]
    fn spans_name_the_pages_prompt_block_hashes_names() {
        let ids: Vec<u64> = (0..12).map(|i| i * 17 + 3).collect();
        for t in [1u32, 7, 16, 48, 512] {
            for b in [1u32, 3, 16, 48, 64, 1000] {
                for len in [1u32, 15, 16, 17, 500, 4096, 9_000] {
                    let want = prompt_block_hashes(&ids, t, len, b);
                    let spans: Vec<Span> = prompt_span_iter(&ids, t, len, b).collect();
                    let mut got = Vec::new();
                    let mut next = 0;
                    for s in &spans {
                        assert_eq!(s.start, next, "spans are contiguous from page 0");
                        got.extend((s.start..s.end).map(|j| s.page_hash(j)));
                        next = s.end;
                    }
                    assert_eq!(got, want, "t {t} b {b} len {len}");
                    // At most one span per trace block.
                    assert!(spans.len() <= ids.len());
                }
            }
        }
        let p = private_span(9, 5);
        for j in 5..40 {
            assert_eq!(p.page_hash(j), private_block_hash(9, j));
        }
    }

    mod props {
        use proptest::prelude::*;

        use super::*;

        /// Trace ids from a small alphabet, so that prompts often agree for a
        /// while: a shared stem, then each prompt's own tail.
        fn two_prompts() -> impl Strategy<Value = (Vec<u64>, Vec<u64>)> {
            let ids = || proptest::collection::vec(0u64..3, 0..6);
            (proptest::collection::vec(0u64..3, 1..6), ids(), ids())
                .prop_map(|(stem, a, b)| ([stem.clone(), a].concat(), [stem, b].concat()))
        }

        /// The trace block engine block `j` ends in, and its lane number there.
        fn place(j: u64, b: u64, t: u64) -> (u64, u64) {
            let end = (j + 1) * b;
            let k = (end - 1) / t;
            (k, (end - k * t - 1) / b)
        }

        proptest! {
            /// Two prompts share engine block `j` exactly when their trace ids
            /// agree on every trace block up to the one it ends in.
            #[test]
            fn blocks_are_shared_exactly_while_the_ids_agree(
                (a, b) in two_prompts(),
                t in 1u32..40,
                bs in 1u32..40,
                len_a in 1u32..300,
                len_b in 1u32..300,
            ) {
                let ha = prompt_block_hashes(&a, t, len_a, bs);
                let hb = prompt_block_hashes(&b, t, len_b, bs);
                for (j, (x, y)) in ha.iter().zip(&hb).enumerate() {
                    let (k, _) = place(j as u64, bs as u64, t as u64);
                    let agree = a[..=k as usize] == b[..=k as usize];
                    prop_assert_eq!(x == y, agree, "block {} ends in trace block {}", j, k);
                }
                // Only complete blocks covered by ids are hashed.
                let covered = |ids: &[u64], len: u32| (ids.len() as u64 * t as u64).min(len as u64);
                prop_assert_eq!(ha.len() as u64, covered(&a, len_a) / bs as u64);
            }

            /// Whatever the block size, a block's group is fixed by the trace
            /// block it ends in and which eight of its lanes it falls among, and
            /// its lane by how far into that trace block it ends: blocks of
            /// different sizes ending in the same place of a trace block have
            /// the same group.
            #[test]
            fn groups_and_lanes_agree_across_block_sizes(
                ids in proptest::collection::vec(0u64..1000, 1..8),
                t in 1u32..200,
                b1 in 1u32..100,
                b2 in 1u32..100,
            ) {
                let len = ids.len() as u32 * t;
                let h1 = prompt_block_hashes(&ids, t, len, b1);
                let h2 = prompt_block_hashes(&ids, t, len, b2);
                let (t, b1, b2) = (t as u64, b1 as u64, b2 as u64);
                for (j1, x) in h1.iter().enumerate() {
                    let (k1, n1) = place(j1 as u64, b1, t);
                    prop_assert_eq!(x.lane() as u64, n1 % 8);
                    prop_assert!(x.group() != 0);
                    for (j2, y) in h2.iter().enumerate() {
                        let (k2, n2) = place(j2 as u64, b2, t);
                        let same_group = (k1, n1 / 8) == (k2, n2 / 8);
                        prop_assert_eq!(x.group() == y.group(), same_group,
                            "b {} block {} vs b {} block {}", b1, j1, b2, j2);
                    }
                }
            }
        }
    }
}
