//! The paged KV cache: a block pool with prefix caching and its events.

mod event;
mod index;
mod pool;
#[cfg(test)]
mod pool_props;

pub use event::KvEvent;
pub use pool::{BlockId, KvBlockPool, PrefixMatch};
