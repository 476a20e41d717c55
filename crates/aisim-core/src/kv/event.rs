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

/// A pool's event log: `None` while capture is off, so nobody pays for
/// events nobody reads.
#[derive(Debug, Default)]
pub(crate) struct EventLog(Option<Vec<KvEvent>>);

impl EventLog {
    /// Starts (or stops) recording.
    pub fn capture(&mut self, on: bool) {
        self.0 = if on { Some(Vec::new()) } else { None };
    }

    /// Moves the events recorded since the last call into `out`.
    pub fn drain(&mut self, out: &mut Vec<KvEvent>) {
        if let Some(ev) = &mut self.0 {
            out.append(ev);
        }
    }

    /// The log to push to, while capture is on.
    #[inline]
    pub fn on(&mut self) -> Option<&mut Vec<KvEvent>> {
        self.0.as_mut()
    }
}
