//! The router queue: requests wait while every worker is at the threshold,
//! leave in arrival order, are rejected when the queue is full, and time out
//! while queued like anywhere else.

mod common;

use aisim_replay::spec::RouterQueueSpec;
use common::{json_without_host, record, run, temp_file, trace_spec, MS};

/// `n` single-token requests of 100 prompt tokens, one a millisecond.
fn trace(name: &str, n: u64) -> std::path::PathBuf {
    let rows: String = (0..n)
        .map(|i| {
            format!(
                r#"{{"timestamp": {i}, "input_length": 100, "output_length": 1, "hash_ids": []}}"#
            ) + "\n"
        })
        .collect();
    temp_file(name, &rows)
}

fn queued_spec(name: &str, n: u64, capacity: u32) -> aisim_replay::ReplaySpec {
    let mut spec = trace_spec(trace(name, n), 1, 10.0, 5.0);
    spec.router.queue = Some(RouterQueueSpec {
        threshold: 1,
        capacity,
    });
    spec
}

#[test]
fn a_request_waits_while_every_worker_is_busy_and_a_full_queue_rejects() {
    let out = run(queued_spec("rq_full.jsonl", 3, 1));
    // Request 0 runs 0..10 ms; request 1 waits in the router until then.
    assert_eq!(record(&out, 0).first_token_ns, 10 * MS);
    let r1 = record(&out, 1);
    assert_eq!(r1.dispatch_ns, MS, "it reached the router on arrival");
    assert_eq!(r1.first_admit_ns, 10 * MS);
    assert_eq!(r1.first_token_ns, 20 * MS);
    // Request 2 found the queue full.
    let r2 = record(&out, 2);
    assert_eq!(r2.outcome, aisim_replay::collector::Outcome::Rejected);
    assert!(r2
        .reject_reason
        .as_deref()
        .unwrap()
        .contains("router queue was full"));
    let rep = &out.report;
    assert_eq!(rep.rejections.get("router_queue_full"), Some(&1));
    assert_eq!((rep.outcomes.completed, rep.outcomes.rejected), (2, 1));
    let q = rep.router_queue.unwrap();
    assert_eq!((q.queued, q.peak), (1, 1));
}

#[test]
fn queued_requests_leave_in_arrival_order() {
    let out = run(queued_spec("rq_order.jsonl", 5, 10));
    let firsts: Vec<u64> = (0..5).map(|id| record(&out, id).first_token_ns).collect();
    assert_eq!(firsts, [10, 20, 30, 40, 50].map(|t| t * MS));
    let q = out.report.router_queue.unwrap();
    assert_eq!((q.queued, q.peak), (4, 4));
    assert_eq!(out.report.outcomes.completed, 5);
}

#[test]
fn a_queued_request_times_out_there() {
    let mut spec = queued_spec("rq_timeout.jsonl", 3, 10);
    spec.discipline.timeout_s = Some(0.015);
    let out = run(spec);
    // Request 1 leaves the queue at 10 ms; planned at 1 ms, its deadline
    // (16 ms) comes before its prefill ends (20 ms).
    let outcomes: Vec<_> = (0..3).map(|id| record(&out, id).outcome).collect();
    use aisim_replay::collector::Outcome::{Completed, TimedOut};
    assert_eq!(outcomes, [Completed, TimedOut, TimedOut]);
    // Request 2 waits until request 1 times out (16 ms), starts its
    // prefill then, and times out at 2 + 15 ms before that pass ends.
    let r2 = record(&out, 2);
    assert_eq!(r2.terminal_ns, 17 * MS);
    assert_eq!((r2.first_admit_ns, r2.tokens), (u64::MAX, 0));
    let again = {
        let mut spec = queued_spec("rq_timeout.jsonl", 3, 10);
        spec.discipline.timeout_s = Some(0.015);
        run(spec)
    };
    assert_eq!(json_without_host(&out), json_without_host(&again));
}

#[test]
fn a_request_can_time_out_without_leaving_the_queue() {
    // Both arrive at 0; the first holds the worker past their common
    // deadline (50 ms), so the second's deadline finds it still queued.
    let row = r#"{"timestamp": 0, "input_length": 100, "output_length": 20, "hash_ids": []}"#;
    let path = temp_file("rq_stuck.jsonl", &format!("{row}\n{row}\n"));
    let mut spec = trace_spec(path, 1, 10.0, 5.0);
    spec.router.queue = Some(RouterQueueSpec {
        threshold: 1,
        capacity: 4,
    });
    spec.discipline.timeout_s = Some(0.05);
    let out = run(spec);
    let r1 = record(&out, 1);
    assert_eq!(r1.outcome, aisim_replay::collector::Outcome::TimedOut);
    assert_eq!((r1.terminal_ns, r1.tokens), (50 * MS, 0));
    assert_eq!(out.report.outcomes.timed_out, 2);
    assert_eq!(out.report.router_queue.unwrap().queued, 1);
}
