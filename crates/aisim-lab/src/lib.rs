//! # aisim-lab: studies over many replays
//!
//! A replay ([`aisim_replay`]) is one run. This crate holds what is built from
//! many of them:
//!
//! - [`seeds`]: the same run under several seeds, with the mean and 95 %
//!   interval of every figure (docs/seeds.md);
//! - [`sweep`]: grids of runs, planned, sharded, run and merged (docs/sweeps.md);
//! - [`saturate`]: the highest rate at which a run still holds its SLOs;
//! - [`compare`]: two replay reports figure by figure;
//! - [`fidelity`]: measured runs of real servers, their imports, validation
//!   of a replay against one and calibration of the timing model to them
//!   (docs/fidelity.md);
//! - [`jobs`]: one call per job, for every front end (see its module doc).
//!
//! It never prints and reads no file it was not given: rendering lives in
//! `aisim-report`, flags in the front ends.

#![warn(missing_docs)]

pub mod compare;
pub mod fidelity;
pub mod jobs;
pub mod saturate;
pub mod seeds;
pub mod sweep;
