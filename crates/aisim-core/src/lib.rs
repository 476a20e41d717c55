//! # aisim-core: the engines of aisim
//!
//! An [`Engine`] is one serving instance of a model: a scheduler core in the
//! manner of vLLM v1, SGLang or TensorRT-LLM, a paged KV cache with prefix
//! caching ([`kv::KvBlockPool`]), and a [`timing::TimingModel`]. A runtime drives
//! it pass by pass on a virtual clock; the engine never reads a clock of its own
//! and never expands a prompt into tokens: a request is lengths plus a chain of
//! block hashes.
//!
//! ```
//! use std::sync::Arc;
//! use aisim_core::{Engine, EngineConfig, EngineEvent, PassOutcome, Request, SimTime};
//! use aisim_core::timing::FixedTiming;
//!
//! let timing = Arc::new(FixedTiming::new(10.0, 5.0).unwrap());
//! let mut engine = Engine::new(EngineConfig::default(), timing).unwrap();
//! engine.add_request(&Request::new(1, SimTime::ZERO, 100, 3), 0).unwrap();
//! let mut now = SimTime::ZERO;
//! let mut out = PassOutcome::default();
//! while let Some(d) = engine.start_pass(now).unwrap() {
//!     now = now.after(d);
//!     engine.finish_pass(&mut out);
//! }
//! // One 10 ms prefill pass (first token), then two 5 ms decode passes.
//! assert_eq!(now.as_ms_f64(), 20.0);
//! assert!(out.events.contains(&EngineEvent::Completed { id: aisim_core::RequestId(1) }));
//! ```
//!
//! The [`profile`] module holds GPU profiles (hand-calibrated ones and profiles
//! computed from the hardware and model catalogs) with their iteration-model
//! constants and power models.

#![warn(missing_docs)]

pub mod block_hash;
pub mod cache_lab;
pub mod cancel;
mod config;
pub mod csv_records;
mod engine;
mod error;
pub mod hashing;
pub mod id_window;
pub mod kv;
pub mod number;
pub mod ordered;
pub mod out_file;
mod outcome;
pub mod prefetch;
pub mod profile;
mod request;
pub mod safe_text;
mod scheduler;
pub mod scratch;
pub mod sketch;
pub mod student_t;
pub mod summary;
pub mod text_file;
pub mod thread_pool;
mod time;
pub mod timing;
pub mod wall_clock;

pub use block_hash::BlockHash;
pub use config::{Backend, CapacityPolicy, EngineConfig, PreemptionMode, SchedulePolicy};
pub use engine::{Engine, PassOutcome};
pub use error::CoreError;
pub use outcome::{DecodeSink, EngineEvent, EngineStats, RankLoad, RejectReason};
pub use request::{Request, RequestId, SessionId};
pub use time::{SimDuration, SimTime};
