//! Fidelity benchmarks (release, single thread):
//! `cargo bench -p aisim-lab --bench fidelity`.
//!
//! On the shared LLMServingSim runs (`../shared/real/llmservingsim`, 300
//! requests each): `validate` of one run, `calibrate` on one run, and
//! `calibrate` on four runs (the two runs, each twice: the work of four).
//! On the heaviest shared H100 stage (`../shared/real/inference-perf`,
//! CodeLlama-34B general, stage 1: 12,000 requests after 4,800 of warm-up,
//! a summary only): `validate` and `calibrate` of that one run.

use std::path::Path;
use std::time::Instant;

use aisim_lab::fidelity::calibrate::{calibrate, CalibrateOptions};
use aisim_lab::fidelity::import::{imported, origin_of, read_llmservingsim};
use aisim_lab::fidelity::inference_perf::{read_inference_perf, Stage};
use aisim_lab::fidelity::measured::MeasuredRun;
use aisim_lab::fidelity::validate::validate;

fn import(dir: &Path, tmp: &Path) -> MeasuredRun {
    let (requests, spec) = read_llmservingsim(dir, None).unwrap();
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let out = tmp.join(format!("{name}.json"));
    imported(
        &out,
        &name,
        spec,
        &requests,
        16,
        origin_of("llmservingsim", &requests),
    )
    .write(&out)
    .unwrap()
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/real/llmservingsim");
    if !root.is_dir() {
        println!("fidelity: skipped, {} not found", root.display());
        return;
    }
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("aisim-bench-fidelity-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let runs: Vec<MeasuredRun> = ["RTX4090__Llama-3.1-8B", "RTXPRO6000__Llama-3.1-8B"]
        .iter()
        .map(|r| import(&root.join(r), &tmp))
        .collect();
    let t = Instant::now();
    validate(&runs[..1], None).unwrap();
    println!(
        "validate, 1 run of 300 requests: {:.3} s",
        t.elapsed().as_secs_f64()
    );
    for (what, set) in [
        ("1 run", runs[..1].to_vec()),
        ("4 runs", [runs.clone(), runs.clone()].concat()),
    ] {
        let t = Instant::now();
        let fit = calibrate(&set, &CalibrateOptions::for_runs(&set)).unwrap();
        println!(
            "calibrate, {what}: {:.2} s, {} evaluations, objective {:.2e}",
            t.elapsed().as_secs_f64(),
            fit.evaluations,
            fit.objective
        );
    }
    let ip = root.join("../inference-perf");
    let stage = ip.join("20260218-150304-codellama-34b-tp2-general");
    let spec = aisim_replay::ReplaySpec {
        timing: aisim_core::timing::TimingSpec::Physics {
            profile: format!(
                "h100/{}/tp2",
                ip.join("models/codellama-34b-instruct-hf/config.json")
                    .display()
            ),
            coefficients: Default::default(),
            fitted_on: Vec::new(),
        },
        ..Default::default()
    };
    let out = tmp.join("codellama-general-1.json");
    let run = read_inference_perf(&stage, Stage::One(1), spec, &out, "stage 1", 16)
        .unwrap()
        .write(&out)
        .unwrap();
    let one = [run];
    let t = Instant::now();
    validate(&one, None).unwrap();
    println!(
        "validate, 1 H100 stage (16,800 requests): {:.3} s",
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let fit = calibrate(&one, &CalibrateOptions::for_runs(&one)).unwrap();
    println!(
        "calibrate, 1 H100 stage, summary only: {:.2} s, {} evaluations",
        t.elapsed().as_secs_f64(),
        fit.evaluations
    );
    std::fs::remove_dir_all(&tmp).ok();
}
