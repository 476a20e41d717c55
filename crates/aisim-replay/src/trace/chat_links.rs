//! Checks of Bailian `chat_id` / `parent_chat_id` links, made once at read
//! time so the workload can chain turns without second-guessing them: a
//! repeated `chat_id` and a cycle of parents are errors (either would make
//! turns vanish or re-parent silently); a parent that is not in the trace is
//! counted, and its child is replayed as a first turn.

use std::collections::HashMap;
use std::path::Path;

use super::bad_row::row_error;
use super::record::TraceRecord;
use crate::error::ReplayError;

/// The number of rows whose parent is not in the trace, or the first problem.
pub(crate) fn check(records: &[TraceRecord], path: &Path) -> Result<u64, ReplayError> {
    let mut by_chat: HashMap<i64, u32> = HashMap::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        let Some(c) = r.chat_id else { continue };
        if let Some(&first) = by_chat.get(&c) {
            return Err(row_error(
                path,
                r.line,
                "chat_id",
                format!(
                    "chat_id {c} repeats line {}: each chat must have its own id",
                    records[first as usize].line
                ),
            ));
        }
        by_chat.insert(c, i as u32);
    }
    let mut orphans = 0;
    let parent: Vec<Option<u32>> = records
        .iter()
        .map(|r| {
            let p = r.parent_chat_id.filter(|&p| p >= 0)?;
            let found = by_chat.get(&p).copied();
            orphans += u64::from(found.is_none());
            found
        })
        .collect();
    find_cycle(&parent).map_or(Ok(orphans), |cycle| {
        let lines: Vec<String> = cycle
            .iter()
            .map(|&i| records[i as usize].line.to_string())
            .collect();
        let first = &records[cycle[0] as usize];
        Err(row_error(
            path,
            first.line,
            "parent_chat_id",
            format!(
                "the parents of lines {} form a cycle: no turn of it can be first",
                lines.join(" -> ")
            ),
        ))
    })
}

/// The rows of one cycle of `parent` links (in link order, starting at its
/// row that comes first in the file), if there is one. Linear in the rows.
fn find_cycle(parent: &[Option<u32>]) -> Option<Vec<u32>> {
    const NEW: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; parent.len()];
    let mut path = Vec::new();
    for start in 0..parent.len() as u32 {
        let mut cur = Some(start);
        while let Some(i) = cur.filter(|&i| state[i as usize] != DONE) {
            if state[i as usize] == ON_PATH {
                let at = path.iter().position(|&p| p == i).expect("on the path");
                let mut cycle: Vec<u32> = path[at..].to_vec();
                let min = (0..cycle.len())
                    .min_by_key(|&k| cycle[k])
                    .expect("non-empty");
                cycle.rotate_left(min);
                return Some(cycle);
            }
            state[i as usize] = ON_PATH;
            path.push(i);
            cur = parent[i as usize];
        }
        for &i in &path {
            state[i as usize] = DONE;
        }
        path.clear();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Whether `parent` has a cycle, by walking at most n steps from each row.
    fn has_cycle_slowly(parent: &[Option<u32>]) -> bool {
        (0..parent.len() as u32).any(|s| {
            let mut cur = parent[s as usize];
            for _ in 0..parent.len() {
                match cur {
                    Some(c) if c == s => return true,
                    Some(c) => cur = parent[c as usize],
                    None => return false,
                }
            }
            false
        })
    }

    #[test]
    fn finds_self_loops_and_longer_cycles() {
        assert_eq!(find_cycle(&[None, Some(1)]), Some(vec![1]));
        assert_eq!(
            find_cycle(&[Some(2), None, Some(3), Some(0)]),
            Some(vec![0, 2, 3])
        );
        assert_eq!(find_cycle(&[None, Some(0), Some(1), Some(1)]), None);
    }

    proptest! {
        #[test]
        fn a_cycle_is_found_exactly_when_there_is_one(
            links in proptest::collection::vec(proptest::option::of(0u32..12), 1..12)
        ) {
            let parent: Vec<Option<u32>> =
                links.iter().map(|l| l.filter(|&p| (p as usize) < links.len())).collect();
            let found = find_cycle(&parent);
            prop_assert_eq!(found.is_some(), has_cycle_slowly(&parent));
            if let Some(c) = found {
                // Each row's parent is the next one, round the cycle.
                for k in 0..c.len() {
                    prop_assert_eq!(parent[c[k] as usize], Some(c[(k + 1) % c.len()]));
                }
            }
        }
    }
}
