//! The data folder: one folder per trace (`traces/ID/`) and per job
//! (`jobs/ID/`), each file committed atomically, and the lock that keeps a
//! second service out.

pub mod atomic;
pub mod ids;
pub mod lock;
