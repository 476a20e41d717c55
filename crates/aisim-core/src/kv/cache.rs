//! `KvCache`: what the engine and its callers read of a rank's KV pool,
//! whichever kind it is (vLLM's block pool, SGLang's radix cache).

use crate::kv::KvEvent;

/// A rank's KV pool as seen from outside its scheduler, in blocks (pages).
pub trait KvCache: std::fmt::Debug + Send {
    /// Total blocks.
    fn capacity(&self) -> u32;
    /// Blocks held by requests.
    fn in_use_blocks(&self) -> u32;
    /// Unreferenced blocks still findable by prefix (evictable).
    fn cached_blocks(&self) -> u32;
    /// Blocks holding nothing.
    fn free_blocks(&self) -> u32;
    /// Blocks an allocation can get: free plus evictable.
    fn available_blocks(&self) -> u32 {
        self.free_blocks() + self.cached_blocks()
    }
    /// Checks the accounting; a description of the first violation.
    fn check_invariants(&self) -> Result<(), String>;
    /// Starts (or stops) recording KV events: off by default.
    fn capture_events(&mut self, on: bool);
    /// Moves the events recorded since the last call into `out`.
    fn drain_events(&mut self, out: &mut Vec<KvEvent>);
}
