//! Sweeps (docs/sweeps.md): a grid of replay specs planned into one line
//! per run, run on a bounded thread pool in shards (one process, a Slurm
//! job array or a Kubernetes Indexed Job), and the results merged back
//! into one file, byte for byte the same however the runs were split.
//!
//! `grid.rs` reads grid files, `plan.rs` expands them (checking every run
//! with `preflight.rs`), `shard.rs` says which runs a process does,
//! `runner.rs` runs them (each trace read once, `traces.rs`), `result.rs`
//! is one run's result and the SLO test, `inputs.rs` the files runs read
//! (recorded in the plan by content, checked before each run), `merge.rs` puts results back
//! together and `columns.rs` flattens them for CSV and tables.

mod columns;
mod error;
mod grid;
mod inputs;
mod merge;
mod plan;
mod preflight;
mod result;
mod runner;
mod shard;
mod traces;

pub use columns::{cell, columns, columns_with, to_csv};
pub use error::SweepError;
pub use grid::{Axis, Base, Grid, Ordered, MAX_RUNS};
pub use inputs::{Fingerprints, InputFile};
pub use merge::{merge, read_result, read_results, result_files, to_jsonl, MERGED_NAME};
pub use plan::{Plan, PlanLine};
pub use result::{best, CostBasis, Headline, RunResult, Slo, Stat};
pub use runner::{result_path, Pending, RunOptions, RunSummary};
pub use shard::{Shard, K8S_INDEX, SLURM_COUNT, SLURM_ID, SLURM_MIN};
