//! Fidelity on the real vLLM runs in `../shared/real/llmservingsim` (not in
//! a fresh clone: run with `-- --ignored`; they fail loudly when absent).

use std::path::{Path, PathBuf};

use aisim_replay::fidelity::calibrate::{calibrate, physics_timing, CalibrateOptions};
use aisim_replay::fidelity::import::{imported, read_llmservingsim, summarize};
use aisim_replay::fidelity::measured::MeasuredRun;
use aisim_replay::fidelity::validate::{validate, ValidationReport};

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

/// Imports a run folder as `aisim measured import --from llmservingsim` does.
fn import(run: &str) -> MeasuredRun {
    // A folder per test thread: tests run in parallel and import the same
    // runs, and one must not read the trace another is rewriting.
    let dir = std::env::temp_dir().join(format!(
        "aisim-shared-real-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let (requests, spec) = read_llmservingsim(&shared(run), None).unwrap();
    let out = dir.join(format!("{run}.json"));
    imported(&out, run, spec, &requests, 16)
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
    v.runs[0]
        .metrics
        .iter()
        .find(|m| m.metric == metric && m.stat == "mean")
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
