//! Chained block hashes: engine blocks derived from trace block ids for any pair
//! of trace block size and engine block size.
//!
//! Engine block `j` covers prompt tokens `[j·B, (j+1)·B)`. Token `p` carries the id
//! `hash_ids[p / T]`, so the prefix a block ends is a run of complete trace
//! blocks and part of one more. Its hash chains the complete trace blocks' ids,
//! then mixes in the last id and how many of its tokens the prefix holds: two
//! prompts share block `j` exactly when they agree on every token up to its end.
//! The work is one step per trace block plus one per engine block, never
//! O(tokens), and only the trace-block steps depend on one another.

/// A chained hash identifying the content of one engine block (and everything
/// before it). Never zero: zero means "no hash" inside the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlockHash(pub u64);

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

/// Chains one run of `len` tokens carrying trace id `id` onto `h`: one mixing
/// round per run (the hot part of hashing a long prompt).
#[inline]
fn combine_run(h: u64, id: u64, len: u64) -> u64 {
    mix64(
        h.rotate_left(29)
            ^ id.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ len.wrapping_mul(0xc2b2_ae3d_27d4_eb4f),
    )
}

#[inline]
fn nonzero(h: u64) -> BlockHash {
    BlockHash(if h == 0 { 1 } else { h })
}

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
    if hash_ids.is_empty() || trace_block_size == 0 || block_size == 0 {
        return Vec::new();
    }
    let t = trace_block_size as u64;
    let b = block_size as u64;
    let covered = (hash_ids.len() as u64 * t).min(input_length as u64);
    let full_blocks = covered / b;
    let mut out = Vec::with_capacity(full_blocks as usize);
    // `chain` covers the complete trace blocks before `done`. A block ending
    // inside trace block `k` hashes that chain (advanced to `k`) with `k`'s id
    // and how many of its tokens the block reaches: the same prefix gives the
    // same hash whatever the block size, and the blocks inside one trace block
    // hash independently of one another (no serial chain through them).
    let mut chain = 0x005e_ed0f_a151_u64;
    // Trace block `k` holds tokens `[k_start, k_start + t)`.
    let (mut k, mut k_start) = (0usize, 0u64);
    for j in 1..=full_blocks {
        let end = j * b;
        while k_start + t < end {
            chain = combine_run(chain, hash_ids[k], t);
            k += 1;
            k_start += t;
        }
        out.push(nonzero(combine_run(chain, hash_ids[k], end - k_start)));
    }
    out
}

/// Hash of a block that only one request can ever hold (its generated tokens, or a
/// prompt without identity): unique per request and block index, so a preempted
/// request finds its own blocks again and nobody else does.
#[inline]
pub fn private_block_hash(request_salt: u64, block_index: u32) -> BlockHash {
    nonzero(combine(
        mix64(request_salt ^ 0xa5a5_5a5a_dead_beef),
        block_index as u64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
