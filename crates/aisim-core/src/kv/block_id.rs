//! `BlockId`, a block's index inside its pool. The pool hands blocks out
//! and the hash index (`index.rs`) files them; the pool builds on the index,
//! so the name both use lives below the two of them.

/// Index of a block inside its pool.
pub type BlockId = u32;
