//! What the deploy tests share about a sweep's files: a plan made from the CI
//! grid, its ids in plan order, and the ids whose results a DIR holds.
#![allow(dead_code)] // each test binary uses its own part

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

/// Writes the plan of fixtures/sweep/ci-grid.toml to `plan` and returns its
/// ids in plan order (line k is run k of the round robin).
pub fn ci_plan(plan: &Path) -> Vec<String> {
    std::fs::create_dir_all(plan.parent().unwrap()).unwrap();
    let grid = super::common::fixture("sweep/ci-grid.toml");
    let out = super::common::command()
        .args(["sweep", "plan", &grid, "--out"])
        .arg(plan)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "sweep plan {grid}: {}",
        super::common::stderr(&out)
    );
    std::fs::read_to_string(plan)
        .unwrap()
        .lines()
        .map(|line| {
            let run: serde_json::Value = serde_json::from_str(line).unwrap();
            run["id"]
                .as_str()
                .unwrap_or_else(|| panic!("a plan line without an id: {line}"))
                .to_string()
        })
        .collect()
}

/// The ids of the runs whose result (`DIR/<id>.json`) is in `dir`.
fn result_ids(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeSet::new();
    };
    entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// A plan's runs while its `n` shards run into one DIR, one after another.
pub struct Shards {
    ids: Vec<String>,
    n: usize,
    done: BTreeSet<String>,
}

impl Shards {
    /// `ids` in plan order.
    pub fn new(ids: Vec<String>, n: usize) -> Self {
        assert!(
            ids.len() >= n,
            "the plan gives each of the {n} shards a run"
        );
        Shards {
            ids,
            n,
            done: BTreeSet::new(),
        }
    }

    /// Checks the process `who` that ran shard `i` into `dir`: it succeeded,
    /// added exactly the ids at the plan lines k with k % n == i, and
    /// removed no result.
    pub fn ran(&mut self, i: usize, who: &str, out: &Output, dir: &Path) {
        assert!(
            out.status.success(),
            "{who}: {}",
            super::common::stderr(out)
        );
        let now = result_ids(dir);
        assert!(self.done.is_subset(&now), "{who} removed results");
        let added: BTreeSet<String> = now.difference(&self.done).cloned().collect();
        let share: BTreeSet<String> = self
            .ids
            .iter()
            .enumerate()
            .filter(|(k, _)| k % self.n == i)
            .map(|(_, id)| id.clone())
            .collect();
        assert_eq!(added, share, "{who} ran its share of the plan, no more");
        self.done = now;
    }

    /// Checks the shards together ran every run of the plan.
    pub fn ran_all(&self) {
        assert_eq!(self.done, self.ids.iter().cloned().collect::<BTreeSet<_>>());
    }
}
