//! The search itself, over any probe: evenly spaced points over the range
//! (on a bounded thread pool, results in order), then bisection of the first
//! bracket they show (a holding point right below a failing one) until it is
//! within the tolerance or the probe budget is spent. Pure given the probe,
//! so the same probe gives the same search whatever the threads.

use serde::{Deserialize, Serialize};

use super::Range;
use crate::seeds::run_seeds_on;

/// How the search runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SearchSettings {
    /// Evenly spaced curve points, both ends included (at least 2).
    pub points: u32,
    /// Bisection stops once `fails − holds ≤ tolerance × holds`.
    pub tolerance: f64,
    /// Most bisection probes (the curve points not counted).
    pub max_probes: u32,
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The bracket narrowed to the tolerance: `holds` is the answer.
    Found,
    /// The probe budget ran out first: `holds` is a lower bound only.
    ProbeLimit,
    /// Even the low end fails.
    LoFails,
    /// Even the high end holds.
    HiHolds,
}

impl Status {
    /// Whether the range and budget answered the question (exit 0).
    pub fn answered(self) -> bool {
        self == Status::Found
    }
}

/// One probe: the value tried, what the probe returned, whether it held.
#[derive(Debug, Clone, PartialEq)]
pub struct Probed<P> {
    /// The value on the searched axis.
    pub value: f64,
    /// What the probe measured.
    pub outcome: P,
    /// Whether the condition held.
    pub holds: bool,
}

/// A finished search.
#[derive(Debug, Clone, PartialEq)]
pub struct Searched<P> {
    /// The evenly spaced points, low to high.
    pub curve: Vec<Probed<P>>,
    /// The bisection probes, in the order they ran.
    pub probes: Vec<Probed<P>>,
    /// How it ended.
    pub status: Status,
    /// The highest value seen to hold below the first failing one (`None`
    /// when even the low end fails).
    pub holds: Option<f64>,
    /// The lowest failing value above `holds` (`None` when even the high
    /// end holds).
    pub fails: Option<f64>,
    /// Curve points that hold above the first failing one: the condition is
    /// not monotone over the range, and the answer is its lowest edge.
    pub holds_again: Vec<f64>,
}

/// The `points` evenly spaced values from `lo` to `hi`, the ends exact.
pub fn curve_values(range: Range, points: u32) -> Vec<f64> {
    let last = points.max(2) - 1;
    (0..=last)
        .map(|k| match k {
            0 => range.lo,
            k if k == last => range.hi,
            k => range.lo + (range.hi - range.lo) * f64::from(k) / f64::from(last),
        })
        .collect()
}

/// Whether a bracket is narrow enough.
fn narrow(holds: f64, fails: f64, tolerance: f64) -> bool {
    fails - holds <= tolerance * holds
}

/// Searches `range` with `probe`, which returns its outcome and whether the
/// condition held; the curve points run on at most `threads` threads. The
/// first probe error (in curve order, then bisection order) ends the search.
pub fn search<P: Send, E: Send>(
    range: Range,
    settings: &SearchSettings,
    threads: usize,
    probe: impl Fn(f64) -> Result<(P, bool), E> + Sync,
) -> Result<Searched<P>, E> {
    let values = curve_values(range, settings.points);
    let run = |value: f64| {
        probe(value).map(|(outcome, holds)| Probed {
            value,
            outcome,
            holds,
        })
    };
    let curve = run_seeds_on(threads, values.len() as u64, 0, |k| run(values[k as usize]))
        .into_iter()
        .collect::<Result<Vec<_>, E>>()?;
    let first_fail = curve.iter().position(|p| !p.holds);
    let mut searched = Searched {
        holds_again: first_fail.map_or_else(Vec::new, |f| {
            curve[f..]
                .iter()
                .filter(|p| p.holds)
                .map(|p| p.value)
                .collect()
        }),
        curve,
        probes: Vec::new(),
        status: Status::Found,
        holds: None,
        fails: None,
    };
    let (mut holds, mut fails) = match first_fail {
        Some(0) => {
            searched.status = Status::LoFails;
            searched.fails = Some(range.lo);
            return Ok(searched);
        }
        None => {
            searched.status = Status::HiHolds;
            searched.holds = Some(range.hi);
            return Ok(searched);
        }
        Some(f) => (searched.curve[f - 1].value, searched.curve[f].value),
    };
    while !narrow(holds, fails, settings.tolerance)
        && searched.probes.len() < settings.max_probes as usize
    {
        let mid = holds + (fails - holds) / 2.0;
        if mid <= holds || mid >= fails {
            break; // adjacent floats: nothing lies between
        }
        let p = run(mid)?;
        if p.holds {
            holds = mid;
        } else {
            fails = mid;
        }
        searched.probes.push(p);
    }
    searched.status = if narrow(holds, fails, settings.tolerance) {
        Status::Found
    } else {
        Status::ProbeLimit
    };
    searched.holds = Some(holds);
    searched.fails = Some(fails);
    Ok(searched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn settings(points: u32, tolerance: f64, max_probes: u32) -> SearchSettings {
        SearchSettings {
            points,
            tolerance,
            max_probes,
        }
    }

    /// A threshold condition: holds at and below `edge`.
    fn below(edge: f64) -> impl Fn(f64) -> Result<((), bool), ()> + Sync {
        move |v| Ok(((), v <= edge))
    }

    #[test]
    fn curve_points_are_evenly_spaced_with_exact_ends() {
        let r = Range { lo: 1.0, hi: 9.0 };
        assert_eq!(curve_values(r, 5), vec![1.0, 3.0, 5.0, 7.0, 9.0]);
        assert_eq!(curve_values(r, 2), vec![1.0, 9.0]);
        let r = Range { lo: 0.1, hi: 0.7 };
        let v = curve_values(r, 7);
        assert_eq!((v[0], v[6]), (0.1, 0.7));
    }

    #[test]
    fn the_ends_of_the_range_are_reported_not_clamped() {
        let r = Range { lo: 2.0, hi: 4.0 };
        let s = search(r, &settings(3, 0.01, 20), 2, below(1.0)).unwrap();
        assert_eq!(
            (s.status, s.holds, s.fails),
            (Status::LoFails, None, Some(2.0))
        );
        assert!(s.probes.is_empty());
        let s = search(r, &settings(3, 0.01, 20), 2, below(5.0)).unwrap();
        assert_eq!(
            (s.status, s.holds, s.fails),
            (Status::HiHolds, Some(4.0), None)
        );
        assert!(!s.status.answered());
    }

    #[test]
    fn a_spent_budget_is_a_probe_limit_with_its_bracket() {
        let r = Range { lo: 1.0, hi: 101.0 };
        let s = search(r, &settings(2, 0.001, 3), 1, below(40.0)).unwrap();
        assert_eq!(s.status, Status::ProbeLimit);
        assert_eq!(s.probes.len(), 3);
        // 51 fails, 26 holds, 38.5 holds.
        assert_eq!((s.holds, s.fails), (Some(38.5), Some(51.0)));
    }

    #[test]
    fn a_condition_that_holds_again_higher_up_is_named() {
        let r = Range { lo: 1.0, hi: 5.0 };
        let odd = |v: f64| Ok::<_, ()>(((), !(2.5..=4.5).contains(&v)));
        let s = search(r, &settings(5, 0.01, 20), 1, odd).unwrap();
        assert_eq!(s.holds_again, vec![5.0]);
        assert!(s.holds.unwrap() < 2.5 && s.fails.unwrap() >= 2.5);
    }

    #[test]
    fn the_first_probe_error_ends_the_search() {
        let r = Range { lo: 1.0, hi: 5.0 };
        let failing = |v: f64| if v > 2.0 { Err(v) } else { Ok(((), true)) };
        assert_eq!(search(r, &settings(5, 0.01, 20), 2, failing), Err(3.0));
    }

    proptest! {
        /// Bisection's invariants on a threshold: the answer holds, a value
        /// the tolerance above it fails, and the work is bounded.
        #[test]
        fn the_answer_holds_and_one_tolerance_above_fails(
            // `at` past both ends: the edge below the range (the low end
            // fails) and above it (the high end holds) are drawn too.
            lo in 0.01f64..100.0, width in 0.01f64..1000.0, at in -0.25f64..1.25,
            points in 2u32..12, tolerance in 0.001f64..0.2, threads in 1usize..4,
        ) {
            let range = Range { lo, hi: lo + width };
            let edge = lo + width * at;
            let s = search(range, &settings(points, tolerance, 64), threads, below(edge)).unwrap();
            prop_assert_eq!(s.curve.len(), points as usize);
            if edge < lo {
                prop_assert_eq!(s.status, Status::LoFails);
                return Ok(());
            }
            if edge >= range.hi {
                prop_assert_eq!(s.status, Status::HiHolds);
                return Ok(());
            }
            prop_assert_eq!(s.status, Status::Found);
            let (holds, fails) = (s.holds.unwrap(), s.fails.unwrap());
            prop_assert!(holds <= edge && edge < fails);
            prop_assert!(fails <= holds * (1.0 + tolerance));
            prop_assert!(!below(edge)(holds * (1.0 + tolerance)).unwrap().1);
            // Each probe halves the bracket the curve left.
            let first = width / f64::from(points - 1);
            prop_assert!(s.probes.len() as f64 <= (first / (tolerance * lo)).log2().ceil().max(0.0) + 1.0);
            // The same search on one thread is the same search.
            let one = search(range, &settings(points, tolerance, 64), 1, below(edge)).unwrap();
            prop_assert_eq!(one, s);
        }
    }
}
