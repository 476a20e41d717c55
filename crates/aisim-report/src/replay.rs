//! `aisim replay` as tables.

use aisim_core::timing::TimingSpec;
use aisim_replay::metrics::Summary;
use aisim_replay::ReplayReport;

use crate::table::{num, Table};

fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| num(x, digits))
}

fn inf_cell(v: Option<f64>, count: u64, digits: usize) -> String {
    // In the offered view a null percentile over a non-empty set means "never finished".
    match v {
        Some(x) => num(x, digits),
        None if count > 0 => "inf".into(),
        None => "-".into(),
    }
}

fn summary_row(t: &mut Table, name: &str, s: &Summary, offered: bool) {
    let c = |v| {
        if offered {
            inf_cell(v, s.count, 2)
        } else {
            cell(v, 2)
        }
    };
    t.row([
        name.to_string(),
        s.count.to_string(),
        c(s.mean),
        c(s.p50),
        c(s.p90),
        c(s.p95),
        c(s.p99),
        c(s.p999),
        c(s.max),
    ]);
}

/// The whole report as tables.
pub fn render_replay(r: &ReplayReport) -> String {
    replay_tables(r)
        .iter()
        .map(Table::render)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The report's tables, in the order the terminal shows them (the HTML
/// report shows the same).
pub fn replay_tables(r: &ReplayReport) -> Vec<Table> {
    let spec = &r.spec;
    let mut run = Table::new(["setting", "value"]).titled("Run");
    run.row(["workload", r.workload.source.as_str()]);
    run.row([
        "workers".to_string(),
        format!(
            "{} x {} (dp {} x tp {}: {} GPU{} each, {} in all)",
            spec.workers(),
            name_of(&spec.engine.backend),
            spec.engine.dp_size,
            spec.engine.tp_size,
            r.pools[0].gpus_per_worker,
            if r.pools[0].gpus_per_worker == 1 {
                ""
            } else {
                "s"
            },
            r.pools[0].gpus
        ),
    ]);
    run.row(["router".to_string(), name_of(&spec.router.policy)]);
    run.row(["timing".to_string(), timing_name(&spec.timing)]);
    run.row(["cohort", r.discipline.cohort.as_str()]);
    run.row([
        "timeout / drain".to_string(),
        format!(
            "{} / {}",
            opt_s(r.discipline.timeout_s),
            r.discipline
                .drain_s
                .map_or("until done".to_string(), |d| format!("{d} s"))
        ),
    ]);
    run.row(["percentiles", r.discipline.percentile_estimator]);
    let d = &r.discipline;
    if !d.sketched.is_empty() {
        run.row([
            "sketched percentiles".to_string(),
            format!(
                "{} (past {} values; within {}% of exact)",
                d.sketched.join(", "),
                d.exact_values_limit,
                num(d.sketch_relative_accuracy * 100.0, 2)
            ),
        ]);
    }
    if r.outcomes.not_offered > 0 {
        run.row([
            "not offered".to_string(),
            format!(
                "{} (due after the run ended; outside the cohort)",
                r.outcomes.not_offered
            ),
        ]);
    }
    if r.workload.skipped_rows > 0 {
        run.row([
            "skipped rows".to_string(),
            format!("{} (failed requests in the log)", r.workload.skipped_rows),
        ]);
    }
    let notes = &r.workload.notes;
    if notes.orphan_turns > 0 {
        run.row([
            "orphan turns".to_string(),
            format!(
                "{} (parent_chat_id not in the trace: replayed as first turns)",
                notes.orphan_turns
            ),
        ]);
    }
    if notes.hash_ids_short + notes.hash_ids_long > 0 {
        run.row([
            "hash_ids mismatches".to_string(),
            format!(
                "{} short, {} long (rows whose hash_ids are not ceil(input_length / trace block size))",
                notes.hash_ids_short, notes.hash_ids_long
            ),
        ]);
    }

    let o = &r.outcomes;
    let mut outcomes = Table::new([
        "offered",
        "completed",
        "timed_out",
        "rejected",
        "incomplete",
    ])
    .titled("Outcomes (cohort)");
    outcomes.row(
        [
            o.offered,
            o.completed,
            o.timed_out,
            o.rejected,
            o.incomplete,
        ]
        .map(|v| v.to_string()),
    );

    let header = [
        "metric", "count", "mean", "p50", "p90", "p95", "p99", "p99.9", "max",
    ];
    let mut lat = Table::new(header).titled("Latency of completed requests (ms; speed in tok/s)");
    let l = &r.latency;
    summary_row(&mut lat, "TTFT", &l.ttft_ms, false);
    summary_row(
        &mut lat,
        "TTFT from dispatch",
        &l.ttft_from_dispatch_ms,
        false,
    );
    summary_row(&mut lat, "TPOT", &l.tpot_ms, false);
    summary_row(&mut lat, "ITL", &l.itl_ms, false);
    summary_row(&mut lat, "E2E", &l.e2e_ms, false);
    summary_row(
        &mut lat,
        "E2E from dispatch",
        &l.e2e_from_dispatch_ms,
        false,
    );
    summary_row(&mut lat, "output speed", &l.output_speed_tok_s, false);
    summary_row(&mut lat, "dispatch delay", &l.dispatch_delay_ms, false);

    let mut offered =
        Table::new(header).titled("Offered cohort (unfinished requests count as infinitely slow)");
    summary_row(&mut offered, "TTFT", &r.latency_offered.ttft_ms, true);
    summary_row(&mut offered, "E2E", &r.latency_offered.e2e_ms, true);

    let t = &r.throughput;
    let mut tp = Table::new([
        "offered rps",
        "completed rps",
        "goodput rps",
        "input tok/s",
        "output tok/s",
        "total tok/s",
        "duration s",
    ])
    .titled("Throughput");
    tp.row([
        num(t.offered_rps, 3),
        num(t.request_rps, 3),
        num(t.goodput_rps, 3),
        num(t.input_tok_s, 1),
        num(t.output_tok_s, 1),
        num(t.total_tok_s, 1),
        num(r.duration_s, 3),
    ]);

    let c = &r.cache;
    let mut cache = Table::new([
        "prefix reuse",
        "reuse (all admissions)",
        "preemptions",
        "mean concurrency",
        "peak concurrency",
    ])
    .titled("Cache and concurrency");
    cache.row([
        format!("{:.1}%", c.prefix_reuse_ratio * 100.0),
        format!("{:.1}%", c.prefix_reuse_ratio_overall * 100.0),
        c.preemptions.to_string(),
        num(r.concurrency.mean, 2),
        r.concurrency.peak.to_string(),
    ]);

    let mut pools = Table::new([
        "pool",
        "workers",
        "GPUs",
        "GPU-hours",
        "KV capacity (tokens / blocks)",
        "KV peak (tokens / blocks)",
        "KV mean",
    ])
    .titled("Pools");
    for p in &r.pools {
        pools.row([
            p.pool.clone(),
            if p.workers_used < p.workers {
                format!("{} ({} used)", p.workers, p.workers_used)
            } else {
                p.workers.to_string()
            },
            p.gpus.to_string(),
            num(p.gpu_hours, 4),
            format!(
                "{} / {} x {}",
                p.kv_capacity_tokens, p.kv_capacity_blocks, p.kv_block_size
            ),
            format!("{} / {}", p.kv_peak_tokens, p.kv_peak_blocks),
            format!("{:.1}%", p.kv_mean_occupancy * 100.0),
        ]);
    }

    let mut out = vec![run, outcomes, lat, offered, tp, cache, pools];
    if let Some(s) = &r.sessions {
        let mut t = Table::new(header).titled(format!(
            "Sessions (dispatch {}; {} sessions, {} later turns, {} think-time fallbacks)",
            s.dispatch, s.sessions, s.later_turns, s.think_time_fallbacks
        ));
        summary_row(&mut t, "realized gap", &s.realized_gap_ms, false);
        summary_row(&mut t, "trace gap", &s.trace_gap_ms, false);
        out.push(t);
    }
    if !r.rejections.is_empty() {
        let mut t = Table::new(["rejected", "reason"]).titled("Rejections");
        for (reason, n) in &r.rejections {
            t.row([n.to_string(), reason.clone()]);
        }
        out.push(t);
    }
    out
}

/// The serde name of a unit enum variant (`round_robin`, `vllm`).
pub(crate) fn name_of<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

fn timing_name(t: &TimingSpec) -> String {
    match t {
        TimingSpec::Polynomial => "polynomial".into(),
        TimingSpec::Fixed {
            prefill_ms,
            decode_ms,
        } => format!("fixed: {prefill_ms} ms prefill, {decode_ms} ms decode"),
        TimingSpec::Iteration { profile } => format!("iteration model of profile {profile}"),
        TimingSpec::Table { path } => format!("table {}", path.display()),
        TimingSpec::Physics {
            profile,
            coefficients,
        } => {
            let c = coefficients;
            format!(
                "physics model of profile {profile} (compute {}, weights {}, kv {}, allreduce {}, {} ms/pass, {} ms/request)",
                c.compute, c.weights, c.kv, c.allreduce, c.pass_ms, c.request_ms
            )
        }
        TimingSpec::Layers { dir, .. } => format!("layer profiles in {}", dir.display()),
    }
}

fn opt_s(v: Option<f64>) -> String {
    v.map_or("none".to_string(), |s| format!("{s} s"))
}
