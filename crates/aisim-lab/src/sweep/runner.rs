//! `sweep run`: a shard of a plan on a bounded thread pool, one result file
//! per run, written under a temporary name and renamed, so a killed run
//! leaves no half file under a result's name and a rerun skips what is
//! done. Each trace is read once per process and shared by the runs.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::inputs::Fingerprints;
use super::merge::{self, MERGED_NAME};
use super::plan::{Plan, PlanLine};
use super::result::RunResult;
use super::shard::Shard;
use super::traces::Traces;
use super::SweepError;
use crate::seeds::run_seeds_on;
use aisim_replay::policy::SpecComposition;
use aisim_replay::Replayer;

/// How to run.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Threads (at least 1).
    pub threads: usize,
    /// Whether each result holds the full report.
    pub full_report: bool,
}

/// A shard's runs, split into those done before and those to do.
#[derive(Debug)]
pub struct Pending<'a> {
    plan: &'a Plan,
    plan_path: PathBuf,
    dir: PathBuf,
    /// Runs of the shard whose result is in `DIR` already.
    pub done: Vec<&'a PlanLine>,
    /// Runs still to do, by index.
    pub todo: Vec<&'a PlanLine>,
}

/// What a `sweep run` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    /// Runs replayed now.
    pub ran: u64,
    /// Runs skipped, their result in `DIR` from before.
    pub skipped: u64,
    /// The merged file, when `DIR` now holds every run of the plan.
    pub merged: Option<PathBuf>,
}

/// The file of run `id` in `dir`.
pub fn result_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.json"))
}

impl<'a> Pending<'a> {
    /// The runs of `shard` and which of them `dir` holds already (creating
    /// `dir`); a result of another plan there is an error, and a leftover
    /// temporary file of a run to do is removed. A result counts as done
    /// only when it holds the full report exactly when `full_report` asks
    /// for one: else it is run again and replaced, so `results.jsonl`
    /// follows the options given, not the folder's history.
    pub fn find(
        plan: &'a Plan,
        plan_path: &Path,
        dir: &Path,
        shard: Shard,
        full_report: bool,
    ) -> Result<Pending<'a>, SweepError> {
        std::fs::create_dir_all(dir).map_err(|e| SweepError::io("cannot create", dir, e))?;
        let (mut done, mut todo) = (Vec::new(), Vec::new());
        for line in plan.lines.iter().filter(|l| shard.holds(l.index)) {
            let path = result_path(dir, &line.id);
            if !path.exists() {
                todo.push(line);
                continue;
            }
            match merge::read_result(&path) {
                Ok(r) if r.belongs_to(line) && r.report.is_some() == full_report => {
                    done.push(line)
                }
                Ok(r) if r.belongs_to(line) => {
                    tracing::info!(
                        id = %line.id,
                        "a result with{} the full report is run again {} it",
                        if full_report { "out" } else { "" },
                        if full_report { "with" } else { "without" },
                    );
                    todo.push(line)
                }
                Ok(r) => {
                    return Err(SweepError::file(
                        &path,
                        format!(
                            "a result of plan {} (run {}), not of {} (plan {}): give each plan a folder of its own",
                            r.plan,
                            r.id,
                            plan_path.display(),
                            line.plan
                        ),
                    ))
                }
                Err(e) => {
                    tracing::warn!(error = %e, "a result that does not read is run again");
                    todo.push(line);
                }
            }
        }
        remove_leftovers(dir, &todo)?;
        Ok(Pending {
            plan,
            plan_path: plan_path.to_path_buf(),
            dir: dir.to_path_buf(),
            done,
            todo,
        })
    }

    /// Runs what is left on `options.threads` threads, calling `finished`
    /// with each result as it is written (from the pool's threads). The
    /// first failing run (by index) stops the others from starting; those
    /// finished keep their results. When `DIR` then holds every run of the
    /// plan, it writes `DIR/results.jsonl`, as `sweep merge` would.
    pub fn run(
        self,
        options: RunOptions,
        finished: &(dyn Fn(&RunResult) + Sync),
    ) -> Result<RunSummary, SweepError> {
        // Every input still as planned, before anything runs.
        let mut fingerprints = Fingerprints::default();
        for line in &self.todo {
            fingerprints.check(&self.plan_path, &line.plan, &line.id, &line.inputs)?;
        }
        let mut traces = Traces::default();
        for line in &self.todo {
            traces
                .get(&line.spec.workload)
                .map_err(|source| self.failed(line, source))?;
        }
        let stop = AtomicBool::new(false);
        let outcomes = run_seeds_on(options.threads, self.todo.len() as u64, 0, |k| {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let line = self.todo[k as usize];
            let done = self.run_one(line, traces.loaded(&line.spec.workload), options);
            match done {
                Ok(r) => {
                    finished(&r);
                    Ok(())
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    Err(e)
                }
            }
        });
        outcomes.into_iter().collect::<Result<(), _>>()?;
        Ok(RunSummary {
            ran: self.todo.len() as u64,
            skipped: self.done.len() as u64,
            merged: merge_if_complete(self.plan, &self.dir)?,
        })
    }

    fn failed(&self, line: &PlanLine, source: aisim_replay::ReplayError) -> SweepError {
        SweepError::Replay {
            plan: self.plan_path.clone(),
            id: line.id.clone(),
            source: Box::new(source),
        }
    }

    fn run_one(
        &self,
        line: &PlanLine,
        trace: Option<Arc<aisim_replay::trace::TraceData>>,
        options: RunOptions,
    ) -> Result<RunResult, SweepError> {
        let replayer = Replayer::new(line.spec.clone(), SpecComposition)
            .map_err(|e| self.failed(line, e))?
            .with_loaded_trace(trace);
        let out = replayer.run().map_err(|e| self.failed(line, e))?;
        let result = RunResult::of(line, &out.report, options.full_report);
        let text = format!(
            "{}\n",
            serde_json::to_string(&result).expect("results serialize")
        );
        write_atomically(&result_path(&self.dir, &line.id), &text)?;
        tracing::info!(id = %line.id, "run finished");
        Ok(result)
    }
}

/// Writes `text` to `path` under a temporary name (`.NAME.tmp-HOST~PID~N`,
/// a leading dot: never read as a result), renamed when whole, as every
/// output is (`aisim_core::out_file`).
fn write_atomically(path: &Path, text: &str) -> Result<(), SweepError> {
    aisim_core::out_file::write_atomic(path, text.as_bytes())
        .map_err(|e| SweepError::write("cannot write", path, e))
}

/// Removes the temporary files a killed process left for the runs to do
/// (and of a merge): only those, and only when their writer is provably
/// gone (`aisim_core::out_file::stale_temp`: this host, a dead process), so
/// a live `sweep run` in the same folder, on any machine, keeps its own.
fn remove_leftovers(dir: &Path, todo: &[&PlanLine]) -> Result<(), SweepError> {
    let entries = std::fs::read_dir(dir).map_err(|e| SweepError::write("cannot read", dir, e))?;
    let mut prefixes: std::collections::HashSet<String> = todo
        .iter()
        .map(|l| format!(".{}.json.tmp-", l.id))
        .collect();
    prefixes.insert(format!(".{MERGED_NAME}.tmp-"));
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = name
            .find(".tmp-")
            .is_some_and(|i| prefixes.contains(&name[..i + ".tmp-".len()]));
        if ours && aisim_core::out_file::stale_temp(&name) {
            std::fs::remove_file(entry.path())
                .map_err(|e| SweepError::write("cannot remove", entry.path(), e))?;
        }
    }
    Ok(())
}

/// Writes `DIR/results.jsonl` when `dir` holds every run of `plan`.
fn merge_if_complete(plan: &Plan, dir: &Path) -> Result<Option<PathBuf>, SweepError> {
    if !plan.lines.iter().all(|l| result_path(dir, &l.id).exists()) {
        return Ok(None);
    }
    let dirs = [dir.to_path_buf()];
    let results = merge::merge(&dirs, merge::read_results(&dirs)?)?;
    let path = dir.join(MERGED_NAME);
    write_atomically(&path, &merge::to_jsonl(&results))?;
    Ok(Some(path))
}
