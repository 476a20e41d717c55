//! Results back into one file: every `DIR/*.json` of the folders given,
//! checked to come from one plan with each of its ids exactly once, sorted
//! by id. `sweep run` writes `DIR/results.jsonl` through the same code, so
//! a merge of shards is byte-for-byte that file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::grid::MAX_RUNS;
use super::result::RunResult;
use super::SweepError;

/// Name of the merged file `sweep run` leaves in a complete `DIR`.
pub const MERGED_NAME: &str = "results.jsonl";

/// Ids listed in full in an error; past that, how many more.
const LISTED: usize = 100;

/// Reads one result file. Its `runs` sizes the merge's table, so a count
/// past a plan's [`MAX_RUNS`] (a stray or edited file) is refused here,
/// naming the file, before anything is allocated from it.
pub fn read_result(path: &Path) -> Result<RunResult, SweepError> {
    // A FIFO or a device would block the read, or never end it.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Err(SweepError::file(
            path,
            "not a regular file (a FIFO, socket, device or broken link): a results folder holds only results; remove it",
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| SweepError::io("cannot read", path, e))?;
    let r: RunResult = serde_json::from_str(&text).map_err(|e| {
        SweepError::file(
            path,
            format!(
                "not a result of `aisim sweep run`: {}",
                aisim_core::text_file::json_error_text(&e)
            ),
        )
    })?;
    if r.runs > MAX_RUNS {
        return Err(SweepError::file(
            path,
            format!(
                "`runs` {}: more than a plan's {MAX_RUNS} runs, so not a result of `aisim sweep run`",
                r.runs
            ),
        ));
    }
    Ok(r)
}

/// The result files of `dir`: its `*.json`, by name (temporary files of
/// runs in flight start with a dot and are not results).
pub fn result_files(dir: &Path) -> Result<Vec<PathBuf>, SweepError> {
    let entries = std::fs::read_dir(dir).map_err(|e| SweepError::io("cannot read", dir, e))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| SweepError::io("cannot read", dir, e))?
            .path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".json") && !name.starts_with('.') {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Every result in `dirs`, with its file.
pub fn read_results(dirs: &[PathBuf]) -> Result<Vec<(PathBuf, RunResult)>, SweepError> {
    let mut out = Vec::new();
    for dir in dirs {
        for path in result_files(dir)? {
            let r = read_result(&path)?;
            if path.file_stem().and_then(|s| s.to_str()) != Some(r.id.as_str()) {
                return Err(SweepError::file(
                    &path,
                    format!("holds run {}, whose file is {}.json: renamed?", r.id, r.id),
                ));
            }
            out.push((path, r));
        }
    }
    Ok(out)
}

/// The results of one plan, each id once, by id; `dirs` names the folders
/// in errors.
pub fn merge(
    dirs: &[PathBuf],
    found: Vec<(PathBuf, RunResult)>,
) -> Result<Vec<RunResult>, SweepError> {
    let shown_dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let Some((_, first)) = found.first() else {
        return Err(SweepError::Incomplete {
            reason: format!(
                "no results in {}: run `aisim sweep run PLAN --out DIR` first",
                shown_dirs.join(", ")
            ),
        });
    };
    let (plan, runs) = (first.plan.clone(), first.runs);
    let mut plans: BTreeMap<(String, u64), (u64, &Path)> = BTreeMap::new();
    for (path, r) in &found {
        plans.entry((r.plan.clone(), r.runs)).or_insert((0, path)).0 += 1;
    }
    if plans.len() > 1 {
        let parts: Vec<String> = plans
            .iter()
            .map(|((p, n), (count, file))| {
                format!(
                    "plan {p} ({n} runs): {count} results, e.g. {}",
                    file.display()
                )
            })
            .collect();
        return Err(SweepError::Incomplete {
            reason: format!(
                "the results come from {} plans, where a merge takes one: {}",
                plans.len(),
                parts.join("; ")
            ),
        });
    }
    // One table keeps whole reports for every run or for none.
    let with = found.iter().find(|(_, r)| r.report.is_some());
    let without = found.iter().find(|(_, r)| r.report.is_none());
    if let (Some((a, _)), Some((b, _))) = (with, without) {
        return Err(SweepError::Incomplete {
            reason: format!(
                "the results mix runs with the full report ({}) and without ({}): run the shards alike, with or without --full-report",
                a.display(),
                b.display()
            ),
        });
    }
    let mut by_index: Vec<Vec<(PathBuf, RunResult)>> = (0..runs).map(|_| Vec::new()).collect();
    for (path, r) in found {
        match by_index.get_mut(r.index as usize) {
            Some(slot) => slot.push((path, r)),
            None => {
                return Err(SweepError::file(
                    &path,
                    format!("index {} beyond its plan's {runs} runs", r.index),
                ))
            }
        }
    }
    let width = runs.saturating_sub(1).to_string().len();
    let missing: Vec<String> = by_index
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_empty())
        .map(|(i, _)| format!("{i:0width$}"))
        .collect();
    let duplicated: Vec<String> = by_index
        .iter()
        .filter(|s| s.len() > 1)
        .map(|s| {
            let files: Vec<String> = s.iter().map(|(p, _)| p.display().to_string()).collect();
            format!("{} ({})", s[0].1.id, files.join(", "))
        })
        .collect();
    if !missing.is_empty() || !duplicated.is_empty() {
        let mut parts = Vec::new();
        if !missing.is_empty() {
            parts.push(format!(
                "{} of {runs} runs missing: {}",
                missing.len(),
                listed(&missing)
            ));
        }
        if !duplicated.is_empty() {
            parts.push(format!(
                "{} runs present more than once: {}",
                duplicated.len(),
                listed(&duplicated)
            ));
        }
        return Err(SweepError::Incomplete {
            reason: format!(
                "the results in {} are not plan {plan} whole: {}",
                shown_dirs.join(", "),
                parts.join("; ")
            ),
        });
    }
    Ok(by_index
        .into_iter()
        .map(|mut s| s.pop().expect("each run present once").1)
        .collect())
}

fn listed(ids: &[String]) -> String {
    let mut out = ids[..ids.len().min(LISTED)].join(", ");
    if ids.len() > LISTED {
        out.push_str(&format!(" and {} more", ids.len() - LISTED));
    }
    out
}

/// The merged file's text: one compact JSON line per run, by id.
pub fn to_jsonl(results: &[RunResult]) -> String {
    let mut out = String::new();
    for r in results {
        out.push_str(&serde_json::to_string(r).expect("results serialize"));
        out.push('\n');
    }
    out
}
