//! A run of llm-d's `inference-perf` client as a measured run
//! (`measured import --from inference-perf DIR --stage N|summary`).
//!
//! What the folder holds (the client's layout): `results/config.yaml` (what
//! ran; `profile.yaml`, what was asked, only when it is absent),
//! `results/stage_N_lifecycle_metrics.json` per constant-rate stage and
//! `summary_lifecycle_metrics.json`, and beside them `exp-config.yaml` (the
//! serving limits). The metrics are summaries, so the run is summary-only.
//!
//! The trace is rebuilt from what the client sent, after inference-perf's
//! `SharedPrefixDataGenerator` (`inference_perf/datagen/shared_prefix_datagen.py`,
//! kubernetes-sigs/inference-perf, read at 0ba9aceb): `num_groups ×
//! num_prompts_per_group` prompts, each group's random system prompt before
//! each prompt's random question, shuffled once; request `i` sends prompt
//! `i mod` their count, one index running on across stages; constant-rate
//! stages send evenly spaced requests back to back. The client's shuffle is
//! the unseeded global `random.shuffle`, so which prompt request `i` sent
//! cannot be known: a fixed permutation stands for it (the cache sees the
//! same pattern: after the first pass every prompt repeats whole). Lengths
//! are what the client measured (`prompt_len`: the server's tokenization of
//! the decoded text, a few percent above the configured tokens), the system
//! prompt's share scaled alike; outputs are `output_len` (`ignore_eos`).
//! Earlier stages are replayed as warm-up, so a stage starts with the
//! server's cache as warm as it was.

use std::path::{Path, PathBuf};

use aisim_replay::spec::WorkloadSpec;
use aisim_replay::trace::{write_mooncake_row, TraceFormat};
use aisim_replay::ReplaySpec;
use serde_json::Value as Json;
use serde_yaml_ng::Value as Yaml;

use super::import::{trace_path, Imported};
use super::measured::{Measured, MeasuredRun, Served, MEASURED_VERSION};
use super::stats::Stats;
use super::FidelityError;

/// Which part of the run to import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// One constant-rate stage, 0-based.
    One(usize),
    /// Every stage, summarized together.
    Summary,
}

impl std::str::FromStr for Stage {
    type Err = String;

    fn from_str(s: &str) -> Result<Stage, String> {
        if s == "summary" {
            return Ok(Stage::Summary);
        }
        s.parse::<usize>()
            .map(Stage::One)
            .map_err(|_| format!("`{s}`: a stage is its 0-based index or `summary`"))
    }
}

/// What the client sent in one stage.
#[derive(Debug, Clone, Copy, PartialEq)]
struct StageLoad {
    rate: f64,
    duration_s: f64,
}

/// The shared-prefix prompt set.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PromptSet {
    groups: u64,
    per_group: u64,
    system_len: u64,
    question_len: u64,
    output_len: u32,
}

fn read_yaml(path: &Path) -> Result<Yaml, FidelityError> {
    let text = aisim_core::text_file::read_text_file(path)
        .map_err(|e| FidelityError::field(path, "(file)", e.to_string()))?;
    serde_yaml_ng::from_str(&text).map_err(|e| FidelityError::field(path, "(file)", e.to_string()))
}

fn read_json(path: &Path) -> Result<Json, FidelityError> {
    let text = aisim_core::text_file::read_text_file(path)
        .map_err(|e| FidelityError::field(path, "(file)", e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| {
        FidelityError::field(path, "(file)", aisim_core::text_file::json_error_text(&e))
    })
}

/// The value at a dotted `field` of a YAML document.
fn yaml_at<'a>(v: &'a Yaml, field: &str) -> Option<&'a Yaml> {
    field.split('.').try_fold(v, |v, k| v.get(k))
}

/// A number above 0 at `field`.
fn yaml_positive(path: &Path, v: &Yaml, field: &str) -> Result<f64, FidelityError> {
    let x = yaml_at(v, field)
        .ok_or_else(|| FidelityError::field(path, field, "missing"))?
        .as_f64()
        .ok_or_else(|| FidelityError::field(path, field, "not a number"))?;
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(FidelityError::field(
            path,
            field,
            format!("{x}: must be above 0"),
        ))
    }
}

/// A whole number above 0 at `field`.
fn yaml_count(path: &Path, v: &Yaml, field: &str) -> Result<u64, FidelityError> {
    let x = yaml_positive(path, v, field)?;
    if x.fract() != 0.0 || x > u32::MAX as f64 {
        return Err(FidelityError::field(
            path,
            field,
            format!("{x}: must be a whole number"),
        ));
    }
    Ok(x as u64)
}

fn prompt_set(path: &Path, config: &Yaml) -> Result<PromptSet, FidelityError> {
    match yaml_at(config, "data.type").and_then(Yaml::as_str) {
        Some("shared_prefix") => {}
        other => {
            return Err(FidelityError::field(
                path,
                "data.type",
                format!(
                    "{}: only shared_prefix prompts can be rebuilt as a trace (the prompts of other data types are not in the run's files)",
                    other.unwrap_or("missing")
                ),
            ))
        }
    }
    let p = "data.shared_prefix";
    Ok(PromptSet {
        groups: yaml_count(path, config, &format!("{p}.num_groups"))?,
        per_group: yaml_count(path, config, &format!("{p}.num_prompts_per_group"))?,
        system_len: yaml_count(path, config, &format!("{p}.system_prompt_len"))?,
        question_len: yaml_count(path, config, &format!("{p}.question_len"))?,
        output_len: yaml_count(path, config, &format!("{p}.output_len"))? as u32,
    })
}

fn stages(path: &Path, config: &Yaml) -> Result<Vec<StageLoad>, FidelityError> {
    match yaml_at(config, "load.type").and_then(Yaml::as_str) {
        Some("constant") => {}
        other => {
            return Err(FidelityError::field(
                path,
                "load.type",
                format!(
                    "{}: only constant-rate stages are rebuilt (evenly spaced arrivals)",
                    other.unwrap_or("missing")
                ),
            ))
        }
    }
    let list = yaml_at(config, "load.stages")
        .and_then(Yaml::as_sequence)
        .filter(|l| !l.is_empty())
        .ok_or_else(|| FidelityError::field(path, "load.stages", "missing or empty"))?;
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            Ok(StageLoad {
                rate: yaml_positive(path, s, "rate").map_err(|_| {
                    FidelityError::field(
                        path,
                        format!("load.stages[{i}].rate"),
                        "must be a number above 0",
                    )
                })?,
                duration_s: yaml_positive(path, s, "duration").map_err(|_| {
                    FidelityError::field(
                        path,
                        format!("load.stages[{i}].duration"),
                        "must be a number above 0",
                    )
                })?,
            })
        })
        .collect()
}

/// The number at a dotted `field` of a metrics file.
fn json_number(path: &Path, v: &Json, field: &str) -> Result<f64, FidelityError> {
    field
        .split('.')
        .try_fold(v, |v, k| v.get(k))
        .and_then(Json::as_f64)
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| FidelityError::field(path, field, "missing, or not a number of 0 or more"))
}

/// A latency distribution (seconds) as statistics in ms.
fn stats_ms(path: &Path, metrics: &Json, field: &str) -> Result<Stats, FidelityError> {
    let at = |stat: &str| -> Result<Option<f64>, FidelityError> {
        Ok(Some(
            json_number(path, metrics, &format!("{field}.{stat}"))? * 1e3,
        ))
    };
    Ok(Stats {
        mean: at("mean")?,
        p50: at("median")?,
        p90: at("p90")?,
        p99: at("p99")?,
    })
}

/// Reads an inference-perf run folder: the measured run to be written at
/// `out` (named `name`), on `spec` but for its workload, discipline and
/// engine limits; its trace, in blocks of `block_size` tokens.
pub fn read_inference_perf(
    dir: &Path,
    stage: Stage,
    mut spec: ReplaySpec,
    out: &Path,
    name: &str,
    block_size: u32,
) -> Result<Imported, FidelityError> {
    let results = dir.join("results");
    let config_path = results.join("config.yaml");
    let config_path = if config_path.is_file() {
        config_path
    } else {
        let asked = dir.join("profile.yaml");
        tracing::warn!(
            "{} is absent: reading {}, the workload that was asked, which the client may not have run as written",
            config_path.display(),
            asked.display()
        );
        asked
    };
    let config = read_yaml(&config_path)?;
    let prompts = prompt_set(&config_path, &config)?;
    let loads = stages(&config_path, &config)?;
    let metrics_path = match stage {
        Stage::One(n) if n >= loads.len() => {
            return Err(FidelityError::field(
                &config_path,
                "load.stages",
                format!(
                    "--stage {n}: the run has {} stage(s), 0 to {}",
                    loads.len(),
                    loads.len() - 1
                ),
            ))
        }
        Stage::One(n) => results.join(format!("stage_{n}_lifecycle_metrics.json")),
        Stage::Summary => results.join("summary_lifecycle_metrics.json"),
    };
    let metrics = read_json(&metrics_path)?;
    // Requests of every stage (what the client sent), the imported ones last.
    let (first, last) = match stage {
        Stage::One(n) => (n, n),
        Stage::Summary => (0, loads.len() - 1),
    };
    let sent = |s: usize| -> Result<u64, FidelityError> {
        if s == first && first == last {
            return Ok(json_number(&metrics_path, &metrics, "load_summary.count")? as u64);
        }
        let p = results.join(format!("stage_{s}_lifecycle_metrics.json"));
        match read_json(&p) {
            Ok(m) => Ok(json_number(&p, &m, "load_summary.count")? as u64),
            // Without the file, what the stage's rate and duration send.
            Err(_) => Ok((loads[s].rate * loads[s].duration_s).round() as u64),
        }
    };
    let counts: Vec<u64> = (0..=last).map(sent).collect::<Result<_, _>>()?;
    let warmup: u64 = counts[..first].iter().sum();
    let measured_sent: u64 = counts[first..].iter().sum();
    let completed = json_number(&metrics_path, &metrics, "successes.count")? as u64;
    // Lengths as the server counted them.
    let prompt_len = json_number(&metrics_path, &metrics, "successes.prompt_len.mean")?;
    let configured = (prompts.system_len + prompts.question_len) as f64;
    let input = prompt_len.round().max(1.0) as u32;
    let system = ((prompts.system_len as f64) * prompt_len / configured).round() as u32;
    let trace = shared_prefix_trace(
        &prompts,
        &loads,
        &counts,
        input,
        system.min(input),
        block_size,
    );
    let ttft = stats_ms(
        &metrics_path,
        &metrics,
        "successes.latency.time_to_first_token",
    )?;
    let e2e = stats_ms(&metrics_path, &metrics, "successes.latency.request_latency")?;
    // The per-token time from the means (the client's own TPOT and ITL count
    // server-sent events, about two a token: kept out).
    let tpot = match (ttft.mean, e2e.mean) {
        (Some(t), Some(e)) if prompts.output_len > 1 => Some(Stats {
            mean: Some((e - t) / (prompts.output_len - 1) as f64),
            ..Stats::default()
        }),
        _ => None,
    };
    let measured = Measured {
        offered: (completed < measured_sent).then_some(measured_sent),
        completed: Some(completed),
        ttft_ms: Some(ttft),
        e2e_ms: Some(e2e),
        tpot_ms: tpot,
        ..Measured::default()
    };
    if completed < measured_sent {
        tracing::warn!(
            "{}: {} of {measured_sent} requests failed: the run was overloaded",
            metrics_path.display(),
            measured_sent - completed
        );
    }
    apply_exp_config(dir, &mut spec)?;
    let trace_path = trace_path(out);
    spec.workload = WorkloadSpec::Trace {
        path: PathBuf::from(trace_path.file_name().unwrap_or_default()),
        format: Some(TraceFormat::Mooncake),
        trace_block_size: Some(block_size),
    };
    spec.discipline.warmup_requests = warmup;
    Ok(Imported {
        run: MeasuredRun {
            version: MEASURED_VERSION,
            name: name.to_string(),
            spec,
            measured,
            requests: None,
            served: Served::HttpStreaming,
        },
        trace_path,
        trace,
        requests: None,
    })
}

/// The serving limits of `exp-config.yaml`, when there is one: tensor
/// parallelism (checked against the profile's) and vLLM's three limits.
fn apply_exp_config(dir: &Path, spec: &mut ReplaySpec) -> Result<(), FidelityError> {
    let path = dir.join("exp-config.yaml");
    if !path.is_file() {
        return Ok(());
    }
    let exp = read_yaml(&path)?;
    let limit = |field: &str| -> Result<Option<u32>, FidelityError> {
        match yaml_at(&exp, field) {
            None => Ok(None),
            Some(_) => Ok(Some(yaml_count(&path, &exp, field)? as u32)),
        }
    };
    if let Some(n) = limit("max_num_seqs")? {
        spec.engine.max_num_seqs = n;
    }
    if let Some(n) = limit("max_num_batched_tokens")? {
        spec.engine.max_num_batched_tokens = n;
    }
    if let Some(n) = limit("max_model_len")? {
        spec.engine.max_model_len = Some(n);
    }
    if let Some(tp) = limit("tensor_parallelism")? {
        let key = spec.timing.profile_key().map(str::to_string);
        if let (Some(key), Some(timing)) = (key, profile_timing_mut(spec)) {
            let given = key
                .split('/')
                .find_map(|p| p.strip_prefix("tp").and_then(|n| n.parse::<u32>().ok()));
            match given {
                Some(t) if t != tp => {
                    return Err(FidelityError::field(
                        &path,
                        "tensor_parallelism",
                        format!("{tp}, but --profile {key} says tp{t}"),
                    ))
                }
                Some(_) => {}
                None => *timing = format!("{key}/tp{tp}"),
            }
        }
    }
    Ok(())
}

/// The profile key a physics or iteration timing carries, to be set.
fn profile_timing_mut(spec: &mut ReplaySpec) -> Option<&mut String> {
    use aisim_core::timing::TimingSpec;
    match &mut spec.timing {
        TimingSpec::Physics { profile, .. } | TimingSpec::Iteration { profile } => Some(profile),
        _ => None,
    }
}

/// The requests of stages `0 ..= counts.len() − 1` (each `counts[s]` at its
/// stage's rate, evenly spaced, stages back to back) as Mooncake JSONL:
/// request `i` sends prompt `order[i mod prompts]`, each prompt `input`
/// tokens long, its first `system` shared within its group.
fn shared_prefix_trace(
    p: &PromptSet,
    loads: &[StageLoad],
    counts: &[u64],
    input: u32,
    system: u32,
    block_size: u32,
) -> String {
    let n = p.groups * p.per_group;
    let order = permutation(n);
    let block = block_size.max(1) as u64;
    let blocks = (input as u64).div_ceil(block);
    let shared = system as u64 / block;
    let mut out = Vec::new();
    let (mut index, mut start_ms) = (0u64, 0.0f64);
    for (s, &count) in counts.iter().enumerate() {
        let gap_ms = 1e3 / loads[s].rate;
        for j in 0..count {
            let prompt = order[(index % n) as usize];
            let group = prompt / p.per_group;
            // Group blocks first (ids below n·blocks never clash with them),
            // then the prompt's own.
            let ids: Vec<u64> = (0..blocks)
                .map(|b| {
                    if b < shared {
                        group * blocks + b
                    } else {
                        n * blocks + prompt * blocks + b
                    }
                })
                .collect();
            write_mooncake_row(
                &mut out,
                start_ms + j as f64 * gap_ms,
                input,
                p.output_len,
                &ids,
                None,
                None,
            )
            .expect("writing to memory");
            index += 1;
        }
        start_ms += count as f64 * gap_ms;
    }
    String::from_utf8(out).expect("the rows are ASCII")
}

/// A fixed permutation of `0..n` (a seeded Fisher–Yates): the client's own
/// shuffle was unseeded, so any fixed one stands for it.
fn permutation(n: u64) -> Vec<u64> {
    let mut order: Vec<u64> = (0..n).collect();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in (1..order.len()).rev() {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        order.swap(i, (z % (i as u64 + 1)) as usize);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_permutation_holds_every_prompt_once() {
        let mut p = permutation(100);
        assert_ne!(p, (0..100).collect::<Vec<_>>());
        p.sort_unstable();
        assert_eq!(p, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn stages_run_back_to_back_and_prompts_repeat_whole() {
        let p = PromptSet {
            groups: 2,
            per_group: 2,
            system_len: 32,
            question_len: 32,
            output_len: 8,
        };
        let loads = [
            StageLoad {
                rate: 2.0,
                duration_s: 2.0,
            },
            StageLoad {
                rate: 4.0,
                duration_s: 1.0,
            },
        ];
        let text = shared_prefix_trace(&p, &loads, &[4, 4], 64, 32, 16);
        let rows: Vec<Json> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let times: Vec<f64> = rows
            .iter()
            .map(|r| r["timestamp"].as_f64().unwrap())
            .collect();
        assert_eq!(
            times,
            [0.0, 500.0, 1000.0, 1500.0, 2000.0, 2250.0, 2500.0, 2750.0]
        );
        let ids = |i: usize| -> Vec<u64> {
            rows[i]["hash_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect()
        };
        // Request 4 sends request 0's prompt again, whole.
        assert_eq!(ids(4), ids(0));
        // The first four send four prompts: two share each group's 2 blocks.
        let heads: std::collections::BTreeSet<_> = (0..4).map(|i| ids(i)[..2].to_vec()).collect();
        let whole: std::collections::BTreeSet<_> = (0..4).map(ids).collect();
        assert_eq!((heads.len(), whole.len()), (2, 4));
        assert!(rows
            .iter()
            .all(|r| r["input_length"] == 64 && r["output_length"] == 8));
    }
}
