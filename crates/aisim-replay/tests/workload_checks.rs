//! Workload loading: session links, times beyond the clock and counted
//! oddities fail or show up in the report, never vanish.

mod common;

use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{ArrivalSpec, WorkloadSpec};
use aisim_replay::trace::read_trace;
use aisim_replay::{ReplaySpec, Replayer};
use common::*;

fn bailian(rows: &[(i64, i64, f64)]) -> String {
    rows.iter()
        .map(|(c, p, t)| {
            format!(
                "{{\"chat_id\": {c}, \"parent_chat_id\": {p}, \"timestamp\": {t}, \"input_length\": 32, \"output_length\": 2}}\n"
            )
        })
        .collect()
}

fn read_error(name: &str, text: &str) -> String {
    read_trace(&temp_file(name, text), None, None)
        .unwrap_err()
        .to_string()
}

fn replay_error(spec: ReplaySpec) -> String {
    match Replayer::new(spec, SpecComposition).and_then(|r| r.run()) {
        Ok(_) => panic!("the replay must fail"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_cycle_of_parents_is_an_error_naming_its_lines() {
    let text = bailian(&[(1, -1, 0.0), (2, 3, 1.0), (3, 4, 2.0), (4, 2, 3.0)]);
    assert_eq!(
        read_error("cycle.jsonl", &text),
        format!(
            "{}:2: field `parent_chat_id`: the parents of lines 2 -> 3 -> 4 form a cycle: no turn of it can be first",
            temp_file("cycle.jsonl", &text).display()
        )
    );
    let e = read_error("self.jsonl", &bailian(&[(1, -1, 0.0), (2, 2, 1.0)]));
    assert!(
        e.contains("self.jsonl:2: field `parent_chat_id`") && e.contains("lines 2 form a cycle"),
        "{e}"
    );
}

#[test]
fn a_repeated_chat_id_is_an_error_naming_both_lines() {
    let e = read_error(
        "dup.jsonl",
        &bailian(&[(1, -1, 0.0), (2, 1, 1.0), (1, -1, 2.0)]),
    );
    assert!(
        e.contains("dup.jsonl:3: field `chat_id`: chat_id 1 repeats line 1"),
        "{e}"
    );
}

#[test]
fn orphan_turns_are_replayed_as_first_turns_and_counted() {
    let p = temp_file(
        "orphans.jsonl",
        &bailian(&[(1, -1, 0.0), (2, 1, 1.0), (3, 99, 2.0), (4, 98, 3.0)]),
    );
    assert_eq!(read_trace(&p, None, None).unwrap().notes.orphan_turns, 2);
    let out = run(trace_spec(p, 1, 5.0, 1.0));
    let v: serde_json::Value = serde_json::from_str(&json_without_host(&out)).unwrap();
    assert_eq!(v["workload"]["orphan_turns"], 2);
    assert_eq!(out.report.outcomes.offered, 4);
    assert_eq!(out.report.outcomes.completed, 4, "no row vanishes");
    let firsts = out.records.iter().filter(|r| r.turn == 0).count();
    assert_eq!(firsts, 3, "chat 1 and the two orphans start sessions");
}

#[test]
fn hash_ids_of_the_wrong_length_are_counted() {
    // Block size 512: 1000 tokens need 2 ids, 512 need 1, 0 need none.
    let rows = [
        (1000, "[1, 2]"),
        (1000, "[1]"),
        (1000, "[1, 2, 3]"),
        (512, "[7, 8]"),
        (512, "[7]"),
        (5, "[]"),
    ];
    let text: String = rows
        .iter()
        .enumerate()
        .map(|(i, (n, ids))| {
            format!("{{\"timestamp\": {i}, \"input_length\": {n}, \"output_length\": 1, \"hash_ids\": {ids}}}\n")
        })
        .collect();
    let p = temp_file("ids.jsonl", &text);
    let notes = read_trace(&p, None, None).unwrap().notes;
    assert_eq!((notes.hash_ids_short, notes.hash_ids_long), (1, 2));
    let v: serde_json::Value =
        serde_json::from_str(&json_without_host(&run(trace_spec(p, 1, 5.0, 1.0)))).unwrap();
    assert_eq!(v["workload"]["hash_ids_short"], 1);
    assert_eq!(v["workload"]["hash_ids_long"], 2);
}

#[test]
fn timestamps_beyond_the_clock_name_their_row_or_the_speedup() {
    let row =
        |t: &str| format!("{{\"timestamp\": {t}, \"input_length\": 8, \"output_length\": 1}}\n");
    let p = temp_file("far.jsonl", &format!("{}{}", row("0"), row("1e300")));
    let e = replay_error(trace_spec(p, 1, 5.0, 1.0));
    assert!(
        e.contains("far.jsonl:2: field `timestamp`") && e.contains("beyond aisim's clock"),
        "{e}"
    );

    // In range at speedup 1, out of range once stretched.
    let p = temp_file("stretch.jsonl", &format!("{}{}", row("0"), row("1000")));
    let mut spec = trace_spec(p, 1, 5.0, 1.0);
    spec.admission.speedup = 1e-300;
    let e = replay_error(spec);
    assert!(
        e.contains("`admission.speedup`") && e.contains("line 2 of") && e.contains("stretch.jsonl"),
        "{e}"
    );

    // Azure years 1 and 9999 are real dates, 9998 years apart.
    let p = temp_file(
        "years.csv",
        "TIMESTAMP,ContextTokens,GeneratedTokens\n0001-01-01 00:00:00,8,1\n9999-12-31 23:59:59,8,1\n",
    );
    let e = replay_error(trace_spec(p, 1, 5.0, 1.0));
    assert!(
        e.contains("years.csv:3: field `TIMESTAMP`") && e.contains("(line 2)"),
        "{e}"
    );

    // A think time beyond the clock, and think times that only add up beyond it.
    let turn = |t: u32, d: &str| {
        format!("{{\"timestamp\": {t}, \"input_length\": 8, \"output_length\": 1, \"session_id\": 1, \"delay_ms\": {d}}}\n")
    };
    let p = temp_file(
        "think.jsonl",
        &format!("{}{}", turn(0, "0"), turn(1, "1e300")),
    );
    let e = replay_error(trace_spec(p, 1, 5.0, 1.0));
    assert!(e.contains("think.jsonl:2: field `delay_ms`"), "{e}");
    let p = temp_file(
        "thinks.jsonl",
        &format!("{}{}{}", turn(0, "0"), turn(1, "5e12"), turn(2, "5e12")),
    );
    let e = replay_error(trace_spec(p, 1, 5.0, 1.0));
    assert!(
        e.contains("thinks.jsonl:3: field `delay_ms`") && e.contains("starts on line 1"),
        "{e}"
    );
}

#[test]
fn an_impossible_date_names_line_and_field() {
    let e = read_error(
        "date.csv",
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-02-28 00:00:00,8,1\n2023-02-30 00:00:00,8,1\n",
    );
    assert!(
        e.contains("date.csv:3: field `TIMESTAMP`")
            && e.contains("day 30 does not exist in February 2023"),
        "{e}"
    );
}

#[test]
fn synthetic_arrivals_beyond_the_clock_name_the_rate() {
    let spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(small_synthetic(
            3,
            ArrivalSpec::Constant { rate: 1e-300 },
        )),
        ..trace_spec(fixture("traces/mooncake_small.jsonl"), 1, 5.0, 1.0)
    };
    let e = replay_error(spec.clone());
    assert!(
        e.contains("`workload.arrival.rate`") && e.contains("first turn 2"),
        "{e}"
    );

    let mut long_thinks = spec;
    if let WorkloadSpec::Synthetic(s) = &mut long_thinks.workload {
        s.arrival = ArrivalSpec::Constant { rate: 1.0 };
        s.turns = 3;
        s.think_ms = 5e12;
    }
    let e = replay_error(long_thinks);
    assert!(
        e.contains("`workload.think_ms`") && e.contains("beyond aisim's clock"),
        "{e}"
    );
}

#[test]
fn spec_times_beyond_the_clock_name_their_field() {
    use aisim_replay::spec::DispatchMode;
    let base = || trace_spec(fixture("traces/mooncake_small.jsonl"), 1, 5.0, 1.0);
    let mut cases: Vec<(ReplaySpec, &str)> = Vec::new();
    let mut s = base();
    s.discipline.timeout_s = Some(1e300);
    cases.push((s, "`discipline.timeout_s`: 1e300 s is beyond aisim's clock"));
    let mut s = base();
    s.discipline.drain_s = Some(1e10);
    cases.push((s, "`discipline.drain_s`: 10000000000 s is beyond"));
    let mut s = base();
    s.discipline.max_sim_time_s = Some(1e300);
    cases.push((s, "`discipline.max_sim_time_s`"));
    let mut s = base();
    s.discipline.warmup_s = 1e300;
    cases.push((s, "`discipline.warmup_s`"));
    let mut s = base();
    s.dispatch = DispatchMode::Fixed(1000.0);
    s.admission.speedup = 1e-300;
    cases.push((
        s,
        "`dispatch`: fixed:1000 at admission.speedup 1e-300 is beyond",
    ));
    for (spec, says) in cases {
        let e = spec.validate().unwrap_err().to_string();
        assert!(e.contains(says), "{e}");
    }
    // The largest times that fit are accepted.
    let mut s = base();
    s.discipline.timeout_s = Some(9.2e9);
    s.validate().unwrap();
}
