//! `aisim replay` as tables.

use aisim_core::summary::Summary;
use aisim_core::timing::TimingSpec;
use aisim_replay::spec::TopologySpec;
use aisim_replay::ReplayReport;

use crate::table::{num, opt_num, sig, Table};

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
            opt_num(v, 2)
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
    let mut out = replay_tables(r)
        .iter()
        .map(Table::render)
        .collect::<Vec<_>>()
        .join("\n");
    if let Some(s) = &r.seeds {
        out.push('\n');
        out.push_str(&crate::seeds::render_seeds(s));
    }
    out
}

/// The report's tables, in the order the terminal shows them (the HTML
/// report shows the same).
pub fn replay_tables(r: &ReplayReport) -> Vec<Table> {
    let spec = &r.spec;
    let mut run = Table::new(["setting", "value"]).titled("Run");
    run.row(["workload", r.workload.source.as_str()]);
    for w in &r.warnings {
        run.row(["warning", w.as_str()]);
    }
    run.row(["workers".to_string(), workers_line(r)]);
    if let TopologySpec::Disaggregated { kv_transfer: t, .. } = &spec.topology {
        run.row([
            "kv transfer".to_string(),
            format!(
                "{}: {} B/token over {} GB/s + {} ms",
                t.mode,
                t.bytes_per_token.unwrap_or_default(),
                sig(t.gb_s),
                sig(t.latency_ms)
            ),
        ]);
    }
    // The policies that ran (an injected one's own name), not the spec's.
    run.row(["router", r.policies.placement.as_str()]);
    if let (Some(q), Some(t)) = (spec.router.queue, r.router_queue) {
        run.row([
            "router queue".to_string(),
            format!(
                "at {} requests a worker, up to {}: {} queued, {} at most at once",
                q.threshold, q.capacity, t.queued, t.peak
            ),
        ]);
    }
    run.row(["scaling", r.policies.scaling.as_str()]);
    for p in spec.scaling.plans(spec) {
        let label = match p.pool {
            "workers" => "planner".to_string(),
            pool => format!("planner, {pool}"),
        };
        run.row([
            label,
            format!(
                "{}..={} workers, a tick every {} s, startup {} s; targets: p90 {} {} ms, {} waiting a worker",
                p.min_workers,
                p.max_workers,
                sig(p.tick_s),
                sig(p.startup_s),
                p.target.metric(),
                sig(p.target.ms()),
                p.queue_depth
            ),
        ]);
    }
    if let Some(e) = &r.cache.router_expected {
        run.row([
            "router's cache guess".to_string(),
            format!(
                "{} prompt tokens expected cached over {} requests; the engines reused {} ({}%), {} requests fell short",
                e.expected_tokens,
                e.requests,
                e.reused_tokens,
                num(e.achieved_ratio * 100.0, 1),
                e.fell_short
            ),
        ]);
    }
    let pools = spec.pools();
    if pools.iter().any(|p| p.own_timing) {
        for p in &pools {
            let pool = p.field.trim_start_matches("topology.");
            run.row([format!("timing, {pool}"), timing_name(p.timing)]);
        }
    } else {
        run.row(["timing".to_string(), timing_name(&spec.timing)]);
    }
    for p in &pools {
        if let Some(m) = p.engine.max_model_len {
            let label = match p
                .field
                .trim_start_matches("topology")
                .trim_start_matches('.')
            {
                "" => "max model len".to_string(),
                pool => format!("max model len, {pool}"),
            };
            run.row([
                label,
                format!("{m} tokens of prompt + output (a longer request is rejected)"),
            ]);
        }
    }
    run.row(["cohort", r.discipline.cohort.as_str()]);
    run.row(["arrivals", r.discipline.arrival_loop.describe()]);
    run.row([
        "timeout / drain".to_string(),
        format!(
            "{} / {}",
            opt_s(r.discipline.timeout_s),
            r.discipline
                .drain_s
                .map_or("until done".to_string(), |d| format!("{} s", sig(d)))
        ),
    ]);
    run.row(["percentiles", r.discipline.percentile_estimator.as_str()]);
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
    let offered_note = match t.offered_rps {
        Some(_) => String::new(),
        None => format!(
            "; no offered rate: {} arrival{} {}, no span to divide by",
            r.outcomes.offered,
            if r.outcomes.offered == 1 { "" } else { "s" },
            if r.outcomes.offered < 2 {
                "only"
            } else {
                "all at one instant"
            }
        ),
    };
    let mut tp = Table::new([
        "offered req/s",
        "completed req/s",
        "goodput req/s",
        "input tok/s",
        "output tok/s",
        "total tok/s",
        "arrival span s",
        "run s",
    ])
    .titled(format!(
        "Throughput (offered: the cohort's arrivals over their span; the rest: completed work over the run, drain included{offered_note})"
    ));
    tp.row([
        opt_num(t.offered_rps, 3),
        num(t.request_rps, 3),
        opt_num(t.goodput_rps, 3),
        num(t.input_tok_s, 1),
        num(t.output_tok_s, 1),
        num(t.total_tok_s, 1),
        num(t.arrival_span_s, 3),
        num(r.duration_s, 3),
    ]);

    let attainment = &r.sla.attainment;
    let mut sla = Table::new(["threshold", "limit ms", "attainment"]);
    match (t.goodput_requests, attainment.all) {
        (Some(n), Some(all)) => {
            sla = sla.titled(format!(
                "Goodput: {n} requests met every threshold (attainment over the offered cohort)"
            ));
            for (name, limit, share) in [
                ("TTFT", r.sla.ttft_ms, attainment.ttft),
                ("TPOT", r.sla.tpot_ms, attainment.tpot),
                ("E2E", r.sla.e2e_ms, attainment.e2e),
            ] {
                if let (Some(limit), Some(share)) = (limit, share) {
                    sla.row([name.to_string(), num(limit, 1), percent(share)]);
                }
            }
            sla.row(["all".to_string(), "-".to_string(), percent(all)]);
        }
        _ => {
            sla = sla.titled(format!("Goodput: not measured, {NO_SLO}"));
            sla.row(["none given", "-", "-"]);
        }
    }

    let mut lengths = Table::new(header).titled("Cohort lengths (tokens, every offered request)");
    summary_row(&mut lengths, "input", &r.lengths.input_tokens, false);
    summary_row(&mut lengths, "output", &r.lengths.output_tokens, false);

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
        percent(c.prefix_reuse_ratio),
        percent(c.prefix_reuse_ratio_overall),
        c.preemptions.to_string(),
        num(r.concurrency.mean, 2),
        r.concurrency.peak.to_string(),
    ]);

    let mut pools = Table::new([
        "pool",
        "workers",
        "GPUs",
        "GPU-hours",
        "passes",
        "KV capacity per worker (tokens / blocks)",
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
            p.passes.to_string(),
            format!(
                "{} / {} x {}",
                p.kv_capacity_tokens, p.kv_capacity_blocks, p.kv_block_size
            ),
            format!("{} / {}", p.kv_peak_tokens, p.kv_peak_blocks),
            percent(p.kv_mean_occupancy),
        ]);
    }

    let mut out = vec![run, outcomes, lengths, lat, offered, tp, sla, cache, pools];
    if let Some(k) = &r.kv_transfer {
        let mut t = Table::new(["transfers", "tokens sent", "GB sent", "mean ms"])
            .titled(format!("KV transfers ({})", k.mode));
        t.row([
            k.transfers.to_string(),
            k.transferred_tokens.to_string(),
            num(k.transferred_gb, 3),
            num(k.mean_ms, 3),
        ]);
        out.push(t);
    }
    if let Some(sc) = &r.scaling {
        let mut t = Table::new([
            "pool",
            "fewest workers",
            "most workers",
            "changes",
            "worker-seconds",
            "GPU-hours",
        ])
        .titled(format!(
            "Scaling ({} ticks; workers counted from 0 to {} s)",
            sc.ticks,
            num(sc.end_s, 3)
        ));
        for p in &sc.pools {
            t.row([
                p.pool.clone(),
                p.min_workers.to_string(),
                p.max_workers.to_string(),
                p.changes.to_string(),
                num(p.worker_seconds, 3),
                num(p.gpu_hours, 4),
            ]);
        }
        out.push(t);
        let mut t = Table::new(["t s", "pool", "workers"])
            .titled("Scaling timeline (workers starting, accepting or draining)");
        for c in &sc.timeline {
            t.row([num(c.t_s, 3), c.pool.clone(), c.workers.to_string()]);
        }
        out.push(t);
    }
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
        let mut t = Table::new(["reason", "requests"]).titled("Rejections (cohort, by reason)");
        for (reason, n) in &r.rejections {
            t.row([reason.clone(), n.to_string()]);
        }
        out.push(t);
    }
    out
}

/// `n` followed by `word`, plural unless `n` is 1.
fn count(n: u64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// What ran, in words: each pool's workers (with a planner, at the start and
/// between which bounds), the backend, the GPUs of a worker and their
/// layout, and the GPUs in all (with a planner, the most it may use).
pub(crate) fn workers_line(r: &ReplayReport) -> String {
    let spec = &r.spec;
    let plans = spec.scaling.plans(spec);
    let backend = name_of(&spec.engine.backend);
    let pools = spec.pools();
    let names = ["prefill ", "decode "];
    let parts: Vec<String> = r
        .pools
        .iter()
        .zip(&pools)
        .enumerate()
        .map(|(i, (p, pool))| {
            let name = if r.pools.len() > 1 {
                names[i.min(1)]
            } else {
                ""
            };
            let e = pool.engine;
            let each = format!(
                "{} each (dp {} x tp {})",
                count(p.gpus_per_worker as u64, "GPU"),
                e.dp_size,
                e.tp_size
            );
            match plans.iter().find(|plan| plan.pool == p.pool) {
                Some(plan) => format!(
                    "{} at the start, scaled by the load planner between {} and {}, {each}",
                    count(plan.start as u64, &format!("{name}{backend} worker")),
                    plan.min_workers,
                    plan.max_workers
                ),
                None => format!(
                    "{}, {each}",
                    count(p.workers as u64, &format!("{name}{backend} worker"))
                ),
            }
        })
        .collect();
    let gpus: u64 = r.pools.iter().map(|p| p.gpus).sum();
    format!(
        "{}; {}{} in all",
        parts.join(" + "),
        if plans.is_empty() { "" } else { "at most " },
        count(gpus, "GPU"),
    )
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
        } => format!(
            "fixed: {} ms prefill, {} ms decode",
            sig(*prefill_ms),
            sig(*decode_ms)
        ),
        TimingSpec::Iteration { profile } => format!("iteration model of profile {profile}"),
        TimingSpec::Table { path } => format!("table {}", path.display()),
        TimingSpec::Physics {
            profile,
            coefficients,
            ..
        } => {
            let c = coefficients;
            format!(
                "physics model of profile {profile} (compute {}, weights {}, kv {}, allreduce {}, {} ms/pass, {} ms/request)",
                sig(c.compute),
                sig(c.weights),
                sig(c.kv),
                sig(c.allreduce),
                sig(c.pass_ms),
                sig(c.request_ms)
            )
        }
        TimingSpec::Layers { dir, .. } => format!("layer profiles in {}", dir.display()),
    }
}

/// Why a run has no goodput.
pub const NO_SLO: &str = "no SLO threshold was given (--slo-ttft-ms, --slo-tpot-ms, --slo-e2e-ms)";

/// A fraction as a percentage with one decimal.
fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

fn opt_s(v: Option<f64>) -> String {
    v.map_or("none".to_string(), |s| format!("{} s", sig(s)))
}
