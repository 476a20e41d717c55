//! A run of llm-d's `inference-perf` client as a measured run
//! (`measured import --from inference-perf DIR --stage N|summary`).
//!
//! What the folder holds (the client's layout): `results/config.yaml` (what
//! ran; `profile.yaml`, what was asked, only when it is absent),
//! `results/stage_N_lifecycle_metrics.json` per constant-rate stage and
//! `summary_lifecycle_metrics.json`, and beside them `exp-config.yaml` (the
//! serving limits). The metrics are summaries; when the client also kept
//! `results/per_request_lifecycle_metrics.json`, its send times and lengths
//! replace the rebuilt ones, and its latencies become the run's per-request
//! file.
//!
//! The trace is rebuilt from what the client sent, after inference-perf's
//! source (kubernetes-sigs/inference-perf: `datagen/shared_prefix_datagen.py`
//! at 0ba9aceb, `loadgen/load_timer.py` and `loadgen/load_generator.py` at
//! 603fe14, the version whose config the shared runs hold):
//!
//! - `num_groups × num_prompts_per_group` prompts (`num_unique_system_prompts
//!   × num_users_per_system_prompt` in later clients), each group's random
//!   system prompt before each prompt's random question, shuffled once;
//!   request `k` of a stage sends prompt `k mod` their count (each stage
//!   counts from 0). The shuffle is the unseeded global `random.shuffle`, so
//!   which prompt a request sent cannot be known: a fixed permutation stands
//!   for it (the cache sees the same pattern: after the first pass every
//!   prompt repeats whole).
//! - A `constant` stage sends `int(rate × duration)` requests at exponential
//!   gaps rescaled to sum to the duration (`ConstantLoadTimer`: not evenly
//!   spaced), from a second after the stage starts; a fixed seed stands for
//!   the client's unseeded one. The next stage starts when the last
//!   request is answered (estimated as the stage's end plus its slowest
//!   request, from the metrics), `load.interval` and a second later.
//! - Lengths are what the client measured (`prompt_len`: the server's
//!   tokenization of the decoded text, a few percent above the configured
//!   tokens), the system prompt's share scaled alike; outputs are
//!   `output_len` (`ignore_eos`). Earlier stages are replayed as warm-up, so
//!   a stage starts with the server's cache as warm as it was.
//!
//! Multi-turn chat and length distributions cannot be rebuilt from the
//! files and are refused by name.

use std::path::{Path, PathBuf};

use aisim_replay::spec::WorkloadSpec;
use aisim_replay::trace::{write_mooncake_row, TraceFormat};
use aisim_replay::ReplaySpec;
use serde_json::Value as Json;
use serde_yaml_ng::Value as Yaml;

use super::import::{requests_path, trace_path, Imported};
use super::measured::{Measured, MeasuredRun, Served, MEASURED_VERSION};
use super::stats::Stats;
use super::timed_request::{requests_text, TimedRequest};
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

/// Most prompts of a prompt set, and most requests of a stage, that a trace
/// is built for (a million-prompt set, a ten-million-request stage).
const MAX_PROMPTS: u64 = 1_000_000;
const MAX_STAGE_REQUESTS: u64 = 10_000_000;

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

/// `field` of `config` must name `want`: anything else cannot be rebuilt,
/// for the reason `why`.
fn require_kind(
    path: &Path,
    config: &Yaml,
    field: &str,
    want: &str,
    why: &str,
) -> Result<(), FidelityError> {
    match yaml_at(config, field).and_then(Yaml::as_str) {
        Some(kind) if kind == want => Ok(()),
        other => Err(FidelityError::field(
            path,
            field,
            format!("{}: {why}", other.unwrap_or("missing")),
        )),
    }
}

fn prompt_set(path: &Path, config: &Yaml) -> Result<PromptSet, FidelityError> {
    require_kind(
        path,
        config,
        "data.type",
        "shared_prefix",
        "only shared_prefix prompts can be rebuilt as a trace (the prompts of other data types are not in the run's files)",
    )?;
    let p = "data.shared_prefix";
    let sp = yaml_at(config, p).ok_or_else(|| FidelityError::field(path, p, "missing"))?;
    // What a trace cannot show: growing sessions, lengths that vary.
    if sp.get("enable_multi_turn_chat").and_then(Yaml::as_bool) == Some(true) {
        return Err(FidelityError::field(
            path,
            format!("{p}.enable_multi_turn_chat"),
            "true: multi-turn sessions are not rebuilt",
        ));
    }
    for (key, v) in sp.as_mapping().into_iter().flatten() {
        let key = key.as_str().unwrap_or("");
        let varies = key.ends_with("_distribution")
            || ((key.ends_with("_std") || key.ends_with("_min") || key.ends_with("_max"))
                && !v.is_null());
        if varies && !v.is_null() {
            return Err(FidelityError::field(
                path,
                format!("{p}.{key}"),
                "lengths that vary are not rebuilt from a summary",
            ));
        }
    }
    // Later clients write the aliases.
    let count = |names: [&str; 2]| -> Result<u64, FidelityError> {
        let name = names
            .iter()
            .find(|n| sp.get(**n).is_some())
            .copied()
            .unwrap_or(names[0]);
        yaml_count(path, config, &format!("{p}.{name}"))
    };
    let length = |name: &str| -> Result<u64, FidelityError> {
        let field = format!("{p}.{name}");
        match yaml_at(config, &field).and_then(Yaml::as_f64) {
            Some(0.0) => Ok(0),
            _ => yaml_count(path, config, &field),
        }
    };
    let set = PromptSet {
        groups: count(["num_groups", "num_unique_system_prompts"])?,
        per_group: count(["num_prompts_per_group", "num_users_per_system_prompt"])?,
        system_len: length("system_prompt_len")?,
        question_len: length("question_len")?,
        output_len: yaml_count(path, config, &format!("{p}.output_len"))? as u32,
    };
    if set.groups * set.per_group > MAX_PROMPTS {
        return Err(FidelityError::field(
            path,
            format!("{p}.num_groups"),
            format!(
                "{} prompts in all, more than the {MAX_PROMPTS} a trace is rebuilt for",
                set.groups * set.per_group
            ),
        ));
    }
    if set.system_len + set.question_len == 0 {
        return Err(FidelityError::field(
            path,
            format!("{p}.question_len"),
            "0, and no system prompt: a prompt needs tokens",
        ));
    }
    Ok(set)
}

/// The pause `load.interval` between stages, seconds (0 when absent).
fn interval(config: &Yaml) -> f64 {
    yaml_at(config, "load.interval")
        .and_then(Yaml::as_f64)
        .filter(|x| x.is_finite() && *x >= 0.0)
        .unwrap_or(0.0)
}

fn stages(path: &Path, config: &Yaml) -> Result<Vec<StageLoad>, FidelityError> {
    require_kind(
        path,
        config,
        "load.type",
        "constant",
        "only constant-rate stages are rebuilt",
    )?;
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
    // Each stage's requests sent and its slowest request (s), from its file,
    // else what its rate and duration send.
    let stage_facts = |s: usize| -> Result<(u64, f64), FidelityError> {
        let p = results.join(format!("stage_{s}_lifecycle_metrics.json"));
        let scheduled = (loads[s].rate * loads[s].duration_s).floor() as u64;
        let m = if s == first && first == last {
            Some((metrics_path.clone(), metrics.clone()))
        } else if p.exists() {
            Some((p.clone(), read_json(&p)?))
        } else {
            tracing::warn!("{} is absent: its stage counted as the {scheduled} requests its rate and duration send", p.display());
            None
        };
        let Some((p, m)) = m else {
            return Ok((scheduled, 0.0));
        };
        let count = json_number(&p, &m, "load_summary.count")?;
        if count > (scheduled.saturating_mul(10) + 1000).min(MAX_STAGE_REQUESTS) as f64 {
            return Err(FidelityError::field(
                &p,
                "load_summary.count",
                format!("{count}: far more than the stage's {scheduled} scheduled requests"),
            ));
        }
        let slowest = json_number(&p, &m, "successes.latency.request_latency.max").unwrap_or(0.0);
        Ok((count as u64, slowest))
    };
    let facts: Vec<(u64, f64)> = (0..=last).map(stage_facts).collect::<Result<_, _>>()?;
    let counts: Vec<u64> = facts.iter().map(|f| f.0).collect();
    let tails: Vec<f64> = facts.iter().map(|f| f.1).collect();
    let warmup: u64 = counts[..first].iter().sum();
    let measured_sent: u64 = counts[first..].iter().sum();
    let completed = json_number(&metrics_path, &metrics, "successes.count")? as u64;
    // Lengths as the server counted them.
    let prompt_len = json_number(&metrics_path, &metrics, "successes.prompt_len.mean")?;
    let configured = (prompts.system_len + prompts.question_len) as f64;
    let input = prompt_len.round().max(1.0) as u32;
    let system = ((prompts.system_len as f64) * prompt_len / configured).round() as u32;
    let pause = interval(&config);
    let system_share = system.min(input) as f64 / input as f64;
    // The client's own log of every request, when it kept one: the real
    // send times and lengths, and each request's latencies.
    let logged_path = results.join("per_request_lifecycle_metrics.json");
    let logged = if logged_path.is_file() {
        // The log holds every stage's requests, the later ones too.
        let all: Vec<u64> = (0..loads.len())
            .map(|s| {
                Ok(if s <= last {
                    counts[s]
                } else {
                    stage_facts(s)?.0
                })
            })
            .collect::<Result<_, FidelityError>>()?;
        let mut l = read_logged(&logged_path, &all, prompts.output_len)?;
        l.sends.truncate(last + 1);
        l.timed.truncate(last + 1);
        Some(l)
    } else {
        None
    };
    let sends = match &logged {
        Some(l) => l.sends.clone(),
        None => rebuilt_sends(&loads, &counts, &tails, pause, input, prompts.output_len),
    };
    let trace = shared_prefix_trace(&prompts, &sends, system_share, block_size);
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
    // Per-request latencies when every measured request completed (a
    // failed one has none, and the cohort is then the summary's alone).
    let requests = logged.and_then(|l| {
        let measured: Vec<LoggedTimes> = l.timed[first..].iter().flatten().cloned().collect();
        let streamed = measured.iter().all(|r| r.first_token_s.is_some());
        (measured.len() as u64 == measured_sent && streamed).then(|| {
            let timed: Vec<TimedRequest> = measured.into_iter().map(|r| r.timed).collect();
            (requests_path(out), requests_text(&timed))
        })
    });
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
            requests: requests
                .as_ref()
                .map(|(p, _)| PathBuf::from(p.file_name().unwrap_or_default())),
            served: Served::HttpStreaming,
            // Its trace is rebuilt from the client's configuration
            // (docs/fidelity.md), not a file's per-request times.
            origin: None,
        },
        trace_path,
        trace,
        requests,
    })
}

/// One request of the client's `per_request_lifecycle_metrics.json` (its
/// `RequestLifecycleMetric`, kubernetes-sigs/inference-perf
/// `apis/base.py` and `reportgen/base.py` at 7de5ef2; the token times sit
/// in `info` in clients of February 2026, in `info.response_metrics`
/// later). Prompt and response texts are skipped unread.
#[derive(Debug, serde::Deserialize)]
struct Logged {
    start_time: f64,
    end_time: f64,
    #[serde(default)]
    info: Option<LoggedInfo>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Default, serde::Deserialize)]
struct LoggedInfo {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    output_token_times: Option<Vec<f64>>,
    #[serde(default)]
    response_metrics: Option<LoggedResponse>,
}

#[derive(Debug, Default, serde::Deserialize)]
struct LoggedResponse {
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    output_token_times: Option<Vec<f64>>,
}

/// A completed request of the client's log: its times, and its first
/// token's time when it was logged (streamed).
#[derive(Debug, Clone)]
struct LoggedTimes {
    timed: TimedRequest,
    first_token_s: Option<f64>,
}

/// What the client's log gives, per stage: every request as sent (from the
/// first send), and the completed ones' times.
struct LoggedRun {
    sends: Vec<Vec<Sent>>,
    timed: Vec<Vec<LoggedTimes>>,
}

/// Reads the client's log of every request, split into stages by send
/// order and the stages' request counts (`counts`, from their metrics, every
/// stage of the run). Errors name a row by its place in the file.
fn read_logged(path: &Path, counts: &[u64], output_len: u32) -> Result<LoggedRun, FidelityError> {
    let file = std::fs::File::open(path)
        .map_err(|e| FidelityError::field(path, "(file)", e.to_string()))?;
    let rows: Vec<Logged> =
        serde_json::from_reader(std::io::BufReader::new(file)).map_err(|e| {
            FidelityError::field(path, "(file)", aisim_core::text_file::json_error_text(&e))
        })?;
    let want: u64 = counts.iter().sum();
    if rows.len() as u64 != want {
        return Err(FidelityError::field(
            path,
            "(requests)",
            format!(
                "{} requests logged, but the stages' load_summary.count add up to {want}: the log is not this run's",
                rows.len()
            ),
        ));
    }
    let mut rows: Vec<(usize, Logged)> = rows.into_iter().enumerate().collect();
    for (i, r) in &rows {
        let field = |f: &str| format!("[{i}].{f}");
        for (f, v) in [("start_time", r.start_time), ("end_time", r.end_time)] {
            if !v.is_finite() {
                return Err(FidelityError::field(
                    path,
                    field(f),
                    format!("{v}: not a time"),
                ));
            }
        }
        if r.end_time < r.start_time {
            return Err(FidelityError::field(
                path,
                field("end_time"),
                format!("{}: before its start_time {}", r.end_time, r.start_time),
            ));
        }
    }
    rows.sort_by(|a, b| {
        a.1.start_time
            .total_cmp(&b.1.start_time)
            .then(a.0.cmp(&b.0))
    });
    let t0 = rows.first().map_or(0.0, |r| r.1.start_time);
    let mut sends = Vec::with_capacity(counts.len());
    let mut timed = Vec::with_capacity(counts.len());
    let mut rest = rows.iter();
    for &count in counts {
        let (mut stage_sends, mut stage_timed) = (Vec::new(), Vec::new());
        for (i, r) in rest.by_ref().take(count as usize) {
            let info = r.info.as_ref();
            let response = info.and_then(|x| x.response_metrics.as_ref());
            let tokens = |v: Option<u64>| v.map(|n| n.min(u32::MAX as u64) as u32);
            let input = tokens(info.and_then(|x| x.input_tokens)).filter(|&n| n > 0);
            let output = tokens(
                response
                    .and_then(|x| x.output_tokens)
                    .or(info.and_then(|x| x.output_tokens)),
            )
            .filter(|&n| n > 0)
            .unwrap_or(output_len);
            let Some(input) = input else {
                return Err(FidelityError::field(
                    path,
                    format!("[{i}].info.input_tokens"),
                    "missing or 0: each request's prompt length is needed",
                ));
            };
            stage_sends.push(Sent {
                at_s: r.start_time - t0,
                input,
                output,
            });
            if r.error.is_some() {
                continue;
            }
            let times = response
                .and_then(|x| x.output_token_times.as_ref())
                .or(info.and_then(|x| x.output_token_times.as_ref()));
            let first = times
                .and_then(|t| t.first().copied())
                .filter(|t| t.is_finite() && *t >= r.start_time && *t <= r.end_time);
            stage_timed.push(LoggedTimes {
                first_token_s: first,
                timed: TimedRequest {
                    line: i + 1,
                    id: format!("{i}"),
                    send_s: r.start_time - t0,
                    first_token_s: first.unwrap_or(r.end_time) - t0,
                    end_s: r.end_time - t0,
                    input_tokens: input,
                    output_tokens: output,
                    hash_ids: None,
                    ..TimedRequest::default()
                },
            });
        }
        sends.push(stage_sends);
        timed.push(stage_timed);
    }
    Ok(LoggedRun { sends, timed })
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
            None | Some(Yaml::Null) => Ok(None),
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
            let given = trailing_tp(&key);
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

/// The tensor parallelism a profile key ends with (`.../tp2`, after which
/// only a precision may follow), as `ComputedProfile::from_key` reads it.
fn trailing_tp(key: &str) -> Option<u32> {
    let mut parts: Vec<&str> = key.split('/').collect();
    while parts.len() > 2 {
        let last = parts.pop().unwrap_or_default().to_ascii_lowercase();
        if let Some(n) = last.strip_prefix("tp") {
            return n.parse().ok();
        }
        if !["fp8", "int4", "fp16", "bf16"].contains(&last.as_str()) {
            return None;
        }
    }
    None
}

/// The profile key a physics or iteration timing carries, to be set.
fn profile_timing_mut(spec: &mut ReplaySpec) -> Option<&mut String> {
    use aisim_core::timing::TimingSpec;
    match &mut spec.timing {
        TimingSpec::Physics { profile, .. } | TimingSpec::Iteration { profile } => Some(profile),
        _ => None,
    }
}

/// One request of the trace: when it was sent (s, from the first stage's
/// start), its prompt and output tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sent {
    at_s: f64,
    input: u32,
    output: u32,
}

/// What a stage of the client's sends, rebuilt from its load (see the
/// module's notes): `counts[s]` requests per stage at exponential gaps
/// rescaled to its duration, the next stage after the last answer.
fn rebuilt_sends(
    loads: &[StageLoad],
    counts: &[u64],
    tails: &[f64],
    pause: f64,
    input: u32,
    output: u32,
) -> Vec<Vec<Sent>> {
    let mut rng = SplitMix(0x5eed_1f0a_7c3e_2b19);
    let mut start_s = 0.0f64;
    let mut out = Vec::with_capacity(counts.len());
    for (s, &count) in counts.iter().enumerate() {
        let duration = loads[s].duration_s;
        let gaps: Vec<f64> = (0..count).map(|_| -(1.0 - rng.unit()).ln()).collect();
        let total: f64 = gaps.iter().sum();
        let scale = if total > 0.0 { duration / total } else { 0.0 };
        let mut at_s = start_s + 1.0;
        out.push(
            gaps.iter()
                .map(|gap| {
                    at_s += gap * scale;
                    Sent {
                        at_s,
                        input,
                        output,
                    }
                })
                .collect(),
        );
        start_s += 1.0 + duration + tails[s] + pause;
    }
    out
}

/// The shared-prefix trace of `sends` (per stage): request `k` of a stage
/// sends prompt `order[k mod n]`, its group's system prompt
/// (`system_share` of its tokens) in blocks shared by the group.
fn shared_prefix_trace(
    p: &PromptSet,
    sends: &[Vec<Sent>],
    system_share: f64,
    block_size: u32,
) -> String {
    let n = p.groups * p.per_group;
    let order = permutation(n);
    let block = block_size.max(1) as u64;
    // Block ids: a group's shared blocks below `n · stride`, then each
    // prompt's own, `stride` apart (the longest prompt's blocks).
    let longest = sends.iter().flatten().map(|r| r.input).max().unwrap_or(1) as u64;
    let stride = longest.div_ceil(block).max(1);
    let mut out = Vec::new();
    for stage in sends {
        for (k, r) in stage.iter().enumerate() {
            let prompt = order[(k as u64 % n) as usize];
            let group = prompt / p.per_group;
            let blocks = (r.input as u64).div_ceil(block);
            let system = ((r.input as f64 * system_share).round() as u64).min(r.input as u64);
            let shared = system / block;
            let ids: Vec<u64> = (0..blocks)
                .map(|b| {
                    if b < shared {
                        group * stride + b
                    } else {
                        n * stride + prompt * stride + b
                    }
                })
                .collect();
            write_mooncake_row(&mut out, r.at_s * 1e3, r.input, r.output, &ids, None, None)
                .expect("writing to memory");
        }
    }
    String::from_utf8(out).expect("the rows are ASCII")
}

/// A seeded generator (splitmix64): the client's draws were unseeded, so
/// any fixed stream stands for them, and the import is deterministic.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A fixed permutation of `0..n` (a seeded Fisher–Yates): the client's own
/// shuffle was unseeded, so any fixed one stands for it.
fn permutation(n: u64) -> Vec<u64> {
    let mut order: Vec<u64> = (0..n).collect();
    let mut rng = SplitMix(0);
    for i in (1..order.len()).rev() {
        order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
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
        let sends = rebuilt_sends(&loads, &[4, 4], &[0.5, 0.0], 1.0, 64, 8);
        let text = shared_prefix_trace(&p, &sends, 0.5, 16);
        let rows: Vec<Json> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let times: Vec<f64> = rows
            .iter()
            .map(|r| r["timestamp"].as_f64().unwrap())
            .collect();
        // Stage 0: from 1 s, 4 exponential gaps rescaled to its 2 s; stage 1
        // from its end (3 s) plus its slowest request (0.5 s), the pause
        // (1 s) and a second: 5.5 s, its 4 requests within its 1 s.
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
        assert!(
            times[0] > 1000.0 && (times[3] - 3000.0).abs() < 1e-6,
            "{times:?}"
        );
        assert!(
            times[4] > 5500.0 && (times[7] - 6500.0).abs() < 1e-6,
            "{times:?}"
        );
        let ids = |i: usize| -> Vec<u64> {
            rows[i]["hash_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect()
        };
        // Each stage counts from prompt 0: request 4 is request 0's prompt.
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
