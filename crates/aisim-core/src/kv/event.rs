//! KV events a pool publishes at the end of the pass that caused them, so a
//! cache-aware router can track what each worker holds.

use crate::block_hash::BlockHash;

/// One change to the set of blocks a pool can serve by hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvEvent {
    /// A complete block with this hash became findable.
    Stored(BlockHash),
    /// The block with this hash was evicted and is no longer findable.
    Removed(BlockHash),
}
