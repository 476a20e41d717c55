//! A fast, deterministic hasher for integer keys (block hashes, nanosecond
//! gaps): the SplitMix64 finalizer. std's SipHash defends against adversarial
//! keys, which a simulator's own integers are not, and costs several times more.

use std::hash::{BuildHasherDefault, Hasher};

use crate::block_hash::mix64;

/// Hashes integer keys with one SplitMix64 round.
#[derive(Debug, Default, Clone, Copy)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        mix64(self.0)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 ^= v;
    }
}

/// `BuildHasher` for [`IntHasher`], for `HashMap<u64, _, IntHashBuilder>`.
pub type IntHashBuilder = BuildHasherDefault<IntHasher>;
