//! The front end: time outside the engine adds to what a client measures
//! (TTFT, E2E) and to nothing the engine does.

mod common;

use aisim_replay::frontend::{FrontendSpec, Served};
use aisim_replay::spec::DisciplineSpec;
use common::*;

fn served(spec: &aisim_replay::ReplaySpec, frontend: FrontendSpec) -> aisim_replay::ReplayOutput {
    let mut s = spec.clone();
    s.frontend = frontend;
    run(s)
}

#[test]
fn time_outside_the_engine_adds_to_ttft_and_e2e_and_nothing_else() {
    // The built-in demo: multi-turn sessions, so later turns follow the
    // engine's completions.
    let base = aisim_replay::ReplaySpec::default();
    let engine = served(&base, FrontendSpec::default());
    let http = FrontendSpec {
        served: Served::HttpStreaming,
        request_ms: Some(7.25),
    };
    let client = served(&base, http);
    let shift = 7_250_000u64;
    assert_eq!(engine.records.len(), client.records.len());
    let mut checked = 0;
    for (e, c) in engine.records.iter().zip(&client.records) {
        assert_eq!((e.id, e.outcome, e.tokens), (c.id, c.outcome, c.tokens));
        assert_eq!(e.planned_ns, c.planned_ns);
        assert_eq!(e.first_admit_ns, c.first_admit_ns, "the engine's timeline");
        if e.tokens > 0 {
            assert_eq!(
                c.first_token_ns,
                e.first_token_ns + shift,
                "request {}",
                e.id
            );
            assert_eq!(c.last_token_ns, e.last_token_ns + shift);
            assert_eq!(c.tpot_ms(), e.tpot_ms());
            assert_eq!(c.terminal_ns, e.terminal_ns + shift);
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
    let (le, lc) = (&engine.report.latency, &client.report.latency);
    assert!((lc.ttft_ms.mean.unwrap() - le.ttft_ms.mean.unwrap() - 7.25).abs() < 1e-9);
    assert!((lc.e2e_ms.p50.unwrap() - le.e2e_ms.p50.unwrap() - 7.25).abs() < 1e-9);
    assert_eq!(lc.tpot_ms, le.tpot_ms);
    assert_eq!(lc.itl_ms, le.itl_ms, "gaps between tokens are the engine's");
    assert_eq!(
        client.report.throughput.output_tok_s,
        engine.report.throughput.output_tok_s
    );
    // The spec says so, and an in-process spec keeps its bytes.
    let json = json_without_host(&client);
    assert!(json.contains("\"http_streaming\""), "{json}");
    assert!(!json_without_host(&engine).contains("\"frontend\""));
}

#[test]
fn a_streaming_server_defaults_to_its_measured_time_outside_the_engine() {
    let base = trace_spec(fixture("traces/mooncake_small.jsonl"), 2, 30.0, 4.0);
    let engine = served(&base, FrontendSpec::default());
    let http = served(
        &base,
        FrontendSpec {
            served: Served::HttpStreaming,
            request_ms: None,
        },
    );
    let d = http.report.latency.ttft_ms.mean.unwrap() - engine.report.latency.ttft_ms.mean.unwrap();
    assert!(
        (d - aisim_replay::frontend::HTTP_STREAMING_FRONTEND_MS).abs() < 1e-9,
        "{d}"
    );
}

#[test]
fn the_timeout_is_the_clients_and_nothing_reaches_it_later() {
    // A client gives up 0.5 s after sending: with 30 ms outside the engine,
    // the engine has 470 ms, and every request ends for its client by 0.5 s.
    let mut base = trace_spec(fixture("traces/mooncake_small.jsonl"), 1, 400.0, 40.0);
    base.discipline = DisciplineSpec {
        timeout_s: Some(0.5),
        ..DisciplineSpec::default()
    };
    for frontend in [
        FrontendSpec::default(),
        FrontendSpec {
            served: Served::HttpStreaming,
            request_ms: Some(30.0),
        },
    ] {
        let out = served(&base, frontend);
        let timeout_ns = 500_000_000u64;
        let mut cut = 0;
        for r in &out.records {
            match r.outcome {
                aisim_replay::collector::Outcome::TimedOut => {
                    cut += 1;
                    assert_eq!(r.terminal_ns, r.planned_ns + timeout_ns, "{frontend:?}");
                    if r.tokens > 0 {
                        assert!(r.last_token_ns <= r.terminal_ns, "{frontend:?} {r:?}");
                    }
                }
                aisim_replay::collector::Outcome::Completed => {
                    assert!(
                        r.terminal_ns - r.planned_ns <= timeout_ns,
                        "{frontend:?} {r:?}"
                    );
                }
                _ => {}
            }
        }
        assert!(cut > 0, "the fixture times requests out");
    }
    // A front end as long as the timeout leaves the engine no time: refused.
    let mut spec = base.clone();
    spec.frontend = FrontendSpec {
        served: Served::HttpStreaming,
        request_ms: Some(500.0),
    };
    let e = spec.validate().unwrap_err().to_string();
    assert!(
        e.contains("discipline.timeout_s") && e.contains("500"),
        "{e}"
    );
}

#[test]
fn an_engine_in_process_has_no_time_outside_it() {
    let e = FrontendSpec {
        served: Served::InProcess,
        request_ms: Some(5.0),
    }
    .validate()
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("frontend.request_ms") && e.contains("in_process"),
        "{e}"
    );
    // 0 is what in process means, and is accepted.
    FrontendSpec {
        served: Served::InProcess,
        request_ms: Some(0.0),
    }
    .validate()
    .unwrap();
}
