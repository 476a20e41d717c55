//! `aisim cache-lab`: report.md's figures, the JSON shape, the playback cap,
//! and bad values refused with the flag named (exit 2).

mod common;

use common::{aisim, stderr, stdout};

fn lab_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["cache-lab", "--format", "json"];
    all.extend_from_slice(args);
    let o = aisim(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn four_entries_four_sessions_give_12_hits_at_16_and_14_at_18_after_two_steps() {
    let v = lab_json(&["-C", "4", "-s", "4", "--steps", "2"]);
    assert_eq!(
        v,
        serde_json::json!({
            "capacity": 4, "sessions": 4, "requests": 16, "hits": 12,
            "steps": [{"requests": 17, "hits": 13}, {"requests": 18, "hits": 14}],
        })
    );
    // The defaults are that lab; every run starts from an empty cache, so
    // starting at 18 reproduces the end of the steps.
    assert_eq!(lab_json(&["--steps", "2"]), v);
    let at_18 = lab_json(&["--requests", "18"]);
    assert_eq!(
        (at_18["requests"].as_u64(), at_18["hits"].as_u64()),
        (Some(18), Some(14))
    );
    assert_eq!(at_18["steps"], serde_json::json!([]));
}

#[test]
fn the_table_shows_the_start_and_each_step() {
    let o = aisim(&["cache-lab", "-C", "4", "-s", "4", "--steps", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(3)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            ["start", "16", "12", "75.0%"],
            ["+1", "17", "13", "76.5%"],
            ["+2", "18", "14", "77.8%"]
        ]
    );
}

#[test]
fn playback_is_capped_at_4096_requests() {
    let full = lab_json(&["-C", "1", "-s", "1", "--requests", "4000", "--steps", "96"]);
    assert_eq!(
        full["steps"][95],
        serde_json::json!({"requests": 4096, "hits": 4095})
    );
    let o = aisim(&["cache-lab", "--requests", "4000", "--steps", "97"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: --steps 97: playback stops at 4096 requests: from 4000, at most 96 steps\n"
    );
    let o = aisim(&["cache-lab", "--requests", "4097"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: --requests 4097: playback stops at 4096 requests\n"
    );
}

#[test]
fn bad_values_exit_2_naming_the_flag() {
    for (args, flag) in [
        (&["-C", "0"][..], "--capacity 0"),
        (&["--capacity", "-1"], "'--capacity <CAPACITY>'"),
        (&["-s", "0"], "--sessions 0"),
        (&["--sessions", "2.5"], "'--sessions <SESSIONS>'"),
        (&["--requests", "1e300"], "'--requests <REQUESTS>'"),
        (&["--steps", "x"], "'--steps <STEPS>'"),
        (&["--steps", "99999999999"], "--steps 99999999999"),
    ] {
        let mut all = vec!["cache-lab"];
        all.extend_from_slice(args);
        let o = aisim(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(flag), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{args:?}");
    }
}
