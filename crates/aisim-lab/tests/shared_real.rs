//! Fidelity on the real vLLM runs in `../shared/real/llmservingsim` (not in
//! a fresh clone: run with `-- --ignored`; they fail loudly when absent).

use std::path::{Path, PathBuf};

use aisim_lab::fidelity::calibrate::{calibrate, physics_timing, CalibrateOptions};
use aisim_lab::fidelity::import::{imported, origin_of, read_llmservingsim, summarize};
use aisim_lab::fidelity::measured::{Measured, MeasuredRun};
use aisim_lab::fidelity::timed_request::trace_order;
use aisim_lab::fidelity::validate::{validate, ValidationReport};

const RUNS: [&str; 2] = ["RTX4090__Llama-3.1-8B", "RTXPRO6000__Llama-3.1-8B"];

fn shared(run: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/real/llmservingsim")
        .join(run);
    assert!(
        p.is_dir(),
        "missing {}: these tests need the shared real runs next to the project",
        p.display()
    );
    p
}

/// A folder per test thread: tests run in parallel and import the same
/// runs, and one must not read the trace another is rewriting.
fn work_dir() -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "aisim-shared-real-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Imports a run folder as `aisim measured import --from llmservingsim` does.
fn import(run: &str) -> MeasuredRun {
    let dir = work_dir();
    let (requests, spec) = read_llmservingsim(&shared(run), None).unwrap();
    let out = dir.join(format!("{run}.json"));
    imported(
        &out,
        run,
        spec,
        &requests,
        16,
        origin_of("llmservingsim", &requests),
    )
    .write(&out)
    .unwrap()
}

#[test]
#[ignore = "needs ../shared/real"]
fn imported_summaries_equal_the_published_truth() {
    for run in RUNS {
        let dir = shared(run);
        let (requests, _) = read_llmservingsim(&dir, None).unwrap();
        let m = summarize(&requests);
        let truth: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("truth_summary.json")).unwrap())
                .unwrap();
        assert_eq!(m.completed, truth["num_requests"].as_u64());
        for (metric, stats) in [
            ("ttft_ms", m.ttft_ms),
            ("tpot_ms", m.tpot_ms),
            ("e2e_ms", m.e2e_ms),
        ] {
            let s = stats.unwrap();
            for (stat, v) in ["mean", "p50", "p90", "p99"].iter().zip(s.values()) {
                let want = truth[metric][stat].as_f64().unwrap();
                let got = v.unwrap();
                assert!(
                    (got - want).abs() <= 1e-6 * want,
                    "{run} {metric} {stat}: {got} vs {want}"
                );
            }
        }
        let want = truth["output_tokens_per_s"].as_f64().unwrap();
        let got = m.output_tok_s.unwrap();
        assert!(
            (got - want).abs() <= 1e-6 * want,
            "{run} output tok/s: {got} vs {want}"
        );
    }
}

fn mean_error(v: &ValidationReport, metric: &str) -> f64 {
    stat_error(v, metric, "mean")
}

fn stat_error(v: &ValidationReport, metric: &str, stat: &str) -> f64 {
    v.runs[0]
        .metrics
        .iter()
        .find(|m| m.metric == metric && m.stat == stat)
        .and_then(|m| m.error_pct)
        .unwrap()
}

#[test]
#[ignore = "needs ../shared/real"]
fn zero_shot_and_calibrated_errors_on_the_real_runs() {
    for run in RUNS {
        let m = import(run);
        let zero = validate(std::slice::from_ref(&m), None).unwrap();
        let fit = calibrate(
            std::slice::from_ref(&m),
            &CalibrateOptions::for_runs(std::slice::from_ref(&m)),
        )
        .unwrap();
        let timing = physics_timing(&m, fit.coefficients).unwrap();
        let cal = validate(std::slice::from_ref(&m), Some(&timing)).unwrap();
        for metric in ["ttft_ms", "tpot_ms", "e2e_ms"] {
            println!(
                "{run} mean {metric}: zero-shot {:+.1} %, calibrated {:+.1} %",
                mean_error(&zero, metric),
                mean_error(&cal, metric)
            );
            assert!(
                mean_error(&cal, metric).abs() <= 10.0,
                "{run} calibrated mean {metric}: {cal:?}"
            );
        }
        // The zero-shot target on dense models: mean E2E and TPOT within 20 %.
        for metric in ["tpot_ms", "e2e_ms"] {
            let e = mean_error(&zero, metric);
            assert!(e.abs() <= 20.0, "{run} zero-shot mean {metric}: {e:+.1} %");
        }
        println!(
            "{run}: zero-shot MAPE {:.1} %, calibrated {:.1} % ({fit:?})",
            zero.mape_pct["overall"], cal.mape_pct["overall"]
        );
    }
}

#[test]
#[ignore = "needs ../shared/real"]
fn layer_profiles_replay_the_real_runs() {
    // Zero-shot with each GPU's own per-layer profile (LLMServingSim's),
    // mixed prefill-and-decode passes from the mixed attention rows: the
    // 4090 run within 2 % on the means (0.6 % measured), the PRO 6000 run
    // within 15 % (4 to 12 % fast: the real run is slower than its own
    // kernels, see docs/fidelity.md).
    for (run, tolerance) in [(RUNS[0], 2.0), (RUNS[1], 15.0)] {
        let m = import(run);
        let timing = aisim_core::timing::TimingSpec::Layers {
            dir: shared(run).join("profile/tp1"),
            layers: None,
        };
        let v = validate(std::slice::from_ref(&m), Some(&timing)).unwrap();
        for metric in ["ttft_ms", "tpot_ms", "e2e_ms"] {
            let e = mean_error(&v, metric);
            println!("{run} layers: mean {metric} {e:+.1} %");
            assert!(e.abs() <= tolerance, "{run} mean {metric}: {e} %");
        }
    }
}

/// Held out: calibrated on the first 150 requests of a run (their own
/// trace, starting on an idle server as the real run did), predicting the
/// last 150 (the whole trace replayed, the first 150 as warm-up), against
/// issue 11's targets: mean and p90 E2E within 5 %, mean TTFT within 10 %,
/// mean TPOT within 5 %. Prints the rows of docs/fidelity.md's table.
#[test]
#[ignore = "needs ../shared/real"]
fn held_out_prediction_on_the_real_runs() {
    let dir = work_dir();
    for run in RUNS {
        let (requests, spec) = read_llmservingsim(&shared(run), None).unwrap();
        let order: Vec<_> = trace_order(&requests).into_iter().cloned().collect();
        let (first, last) = order.split_at(150);
        let write = |name: &str, part: &[_]| {
            let out = dir.join(format!("{name}.json"));
            imported(
                &out,
                name,
                spec.clone(),
                part,
                16,
                origin_of("llmservingsim", part),
            )
            .write(&out)
            .unwrap()
        };
        let full = write(run, &order);
        let first = write(&format!("{run}_first"), first);
        let mut held = full.clone();
        held.name = format!("{run}, last 150");
        // Output tokens per second is left out: over the last 150's own
        // span, it is not the rate the replay reports for its cohort.
        held.measured = Measured {
            output_tok_s: None,
            ..summarize(last)
        };
        held.spec.discipline.warmup_requests = 150;
        let held = [held];
        let zero = validate(&held, None).unwrap();
        let firsts = [first];
        let fit = calibrate(&firsts, &CalibrateOptions::for_runs(&firsts)).unwrap();
        let timing = physics_timing(&held[0], fit.coefficients).unwrap();
        let cal = validate(&held, Some(&timing)).unwrap();
        for (what, v) in [("zero-shot", &zero), ("fit on the first 150", &cal)] {
            println!(
                "| {run}, {what} | {:+.1} | {:+.1} | {:+.1} | {:+.1} | {:.1} |",
                mean_error(v, "ttft_ms"),
                mean_error(v, "tpot_ms"),
                mean_error(v, "e2e_ms"),
                stat_error(v, "e2e_ms", "p90"),
                v.mape_pct["overall"]
            );
        }
        for (metric, stat, target) in [
            ("e2e_ms", "mean", 5.0),
            ("e2e_ms", "p90", 5.0),
            ("ttft_ms", "mean", 10.0),
            ("tpot_ms", "mean", 5.0),
        ] {
            let e = stat_error(&cal, metric, stat);
            assert!(
                e.abs() <= target,
                "{run} held-out {stat} {metric}: {e:+.1} % ({fit:?})"
            );
        }
    }
}
