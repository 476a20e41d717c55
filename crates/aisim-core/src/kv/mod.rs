//! The paged KV cache: vLLM's block pool and SGLang's radix cache, with
//! prefix caching and their events.

mod block_id;
mod cache;
mod event;
mod index;
mod pool;
#[cfg(test)]
mod pool_props;
mod radix;
#[cfg(test)]
mod radix_props;
mod store;

pub use block_id::BlockId;
pub use cache::KvCache;
pub use event::{KvEvent, PageRun};
pub use pool::{KvBlockPool, PrefixMatch};
pub use radix::RadixCache;
pub(crate) use radix::RadixHold;
pub(crate) use store::PageStore;
