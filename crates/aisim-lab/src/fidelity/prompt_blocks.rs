//! Trace block ids of prompts, as the Mooncake trace expects them: one id
//! a block of the trace's block size, two prompts sharing a block's id at
//! a position exactly when they share everything up to that block's end.
//! From a prefix group and its length (BLIS), from token ids (exact), or
//! from text (blocks of the file's mean characters per token: the text's
//! tokens are not known).

use aisim_core::block_hash::mix64;

/// A stable 64-bit hash of a text (FNV-1a, then mixed): the same group
/// name gives the same ids in every run.
fn text_hash(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    mix64(h)
}

/// The trace block ids of a prompt of `input` tokens whose first `prefix`
/// tokens every prompt of prefix group `group` shares (none with an empty
/// group): the complete blocks of `block` tokens within the prefix take
/// the group's ids, every later block an id of this prompt alone (`own`,
/// different for every prompt of the file). A block the prefix ends inside
/// is the prompt's own: only whole blocks are shared.
pub(crate) fn prefix_group_ids(
    group: &str,
    prefix: u32,
    input: u32,
    block: u32,
    own: u64,
) -> Vec<u64> {
    let block = block.max(1) as u64;
    let blocks = (input as u64).div_ceil(block);
    let shared = if group.is_empty() {
        0
    } else {
        (prefix.min(input) as u64 / block).min(blocks)
    };
    let g = text_hash(group);
    let mine = mix64(own ^ 0x5eed_0f0c_ba5e_b10c);
    (0..blocks)
        .map(|j| {
            if j < shared {
                mix64(g.wrapping_add(j))
            } else {
                mix64(mine.wrapping_add(j))
            }
        })
        .collect()
}

/// Chained ids of `chunks`, one a block: each id hashes its block and the
/// id before it, so equal ids at a position mean equal prompts up to there.
fn chained<I: IntoIterator<Item = u64>>(chunks: I) -> Vec<u64> {
    let mut h = 0x6a09_e667_f3bc_c908_u64;
    chunks
        .into_iter()
        .map(|c| {
            h = mix64(h ^ mix64(c.wrapping_add(0x9e37_79b9_7f4a_7c15)));
            h
        })
        .collect()
}

/// The ids of a prompt given as token ids, in blocks of `block` tokens.
pub(crate) fn token_ids_blocks(tokens: &[u64], block: u32) -> Vec<u64> {
    chained(tokens.chunks(block.max(1) as usize).map(|c| {
        c.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, t| {
            mix64(h ^ t.wrapping_add(1))
        })
    }))
}

/// The ids of a prompt of `input` tokens given as `text`, in blocks of
/// `block` tokens, each `chars_per_token` characters of the text (the
/// file's mean): `ceil(input / block)` ids (a block past the text's end
/// hashes nothing new, its id still chained to its place).
pub(crate) fn text_blocks(text: &str, input: u32, block: u32, chars_per_token: f64) -> Vec<u64> {
    let chars: Vec<char> = text.chars().collect();
    let blocks = (input as usize).div_ceil(block.max(1) as usize);
    let width = block.max(1) as f64 * chars_per_token.max(f64::MIN_POSITIVE);
    let at = |j: usize| ((j as f64 * width).round() as usize).min(chars.len());
    chained((0..blocks).map(|j| {
        let piece: String = chars[at(j)..at(j + 1)].iter().collect();
        text_hash(&piece)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many leading ids two prompts share.
    fn shared(a: &[u64], b: &[u64]) -> usize {
        a.iter().zip(b).take_while(|(x, y)| x == y).count()
    }

    #[test]
    fn token_ids_share_exactly_their_common_whole_blocks() {
        let a: Vec<u64> = (0..40).collect();
        let mut b = a.clone();
        b[35] = 999;
        let (x, y) = (token_ids_blocks(&a, 16), token_ids_blocks(&b, 16));
        assert_eq!((x.len(), y.len()), (3, 3));
        assert_eq!(shared(&x, &y), 2);
        // A change in the first block changes every id after it.
        b[0] = 7;
        assert_eq!(shared(&x, &token_ids_blocks(&b, 16)), 0);
        assert_eq!(token_ids_blocks(&a, 16), x, "deterministic");
    }

    #[test]
    fn a_prefix_group_shares_its_whole_blocks_and_nothing_else() {
        let a = prefix_group_ids("sys", 40, 100, 16, 1);
        let b = prefix_group_ids("sys", 40, 70, 16, 2);
        assert_eq!((a.len(), b.len()), (7, 5));
        // 40 tokens: two whole 16-token blocks; the third is the prompt's own.
        assert_eq!(shared(&a, &b), 2);
        assert_eq!(shared(&a, &prefix_group_ids("other", 40, 100, 16, 3)), 0);
        assert_eq!(shared(&a, &prefix_group_ids("", 0, 100, 16, 4)), 0);
        // A prefix longer than the prompt shares the prompt's whole blocks.
        assert_eq!(prefix_group_ids("sys", 500, 40, 16, 5)[..2], a[..2]);
    }

    #[test]
    fn texts_share_the_blocks_their_common_text_covers() {
        // 4 characters a token, 4 tokens a block: 16 characters a block.
        let common = "0123456789abcdef".repeat(4);
        let a = format!("{common}xxxxxxxxxxxxxxxx");
        let b = format!("{common}yyyyyyyyyyyyyyyy");
        let (x, y) = (text_blocks(&a, 20, 4, 4.0), text_blocks(&b, 20, 4, 4.0));
        assert_eq!((x.len(), y.len()), (5, 5));
        assert_eq!(shared(&x, &y), 4);
        // Past the text's end the ids go on, chained to their place.
        let short = text_blocks(&common, 24, 4, 4.0);
        assert_eq!(short.len(), 6);
        assert_eq!(shared(&short, &x), 4);
        assert_ne!(short[4], short[5]);
    }
}
