//! Fleet reports as tables.

use aisim_fleet::calibrate::CalibrationMethod;
use aisim_fleet::des::{DesMetrics, Interval, RouterSpec};
use aisim_fleet::disagg::{DisaggParams, DisaggPoint, DisaggReport};
use aisim_fleet::optimize::OptimizeReport;
use aisim_fleet::pareto::{ParetoReport, Recommendation};
use aisim_fleet::plan::{Candidate, WorkloadNote};
use aisim_fleet::pool_model::SizingModel;
use aisim_fleet::power::{GridFlexReport, TokPerWattReport};
use aisim_fleet::reports::{CompareRoutersReport, SimulateReport, WhatIfReport};

use crate::table::{self, num, opt_num, Table};

const CANDIDATE_HEADER: [&str; 10] = [
    "gamma",
    "b_short",
    "n_short",
    "n_long",
    "GPUs",
    "$/hr",
    "$K/yr",
    "P99 short ms",
    "P99 long ms",
    "SLO",
];

fn candidate_row(t: &mut Table, c: &Candidate) {
    t.row([
        opt_num(c.gamma, 1),
        c.b_short.to_string(),
        c.n_short.to_string(),
        c.n_long.to_string(),
        c.total_gpus.to_string(),
        num(c.cost_per_hr, 2),
        num(c.annual_cost_kusd, 1),
        num(c.p99_ttft_short_ms, 1),
        num(c.p99_ttft_long_ms, 1),
        if c.slo_met { "ok" } else { "MISS" }.to_string(),
    ]);
}

fn candidates(title: &str, cs: &[&Candidate]) -> String {
    candidates_headed(title, cs, CANDIDATE_HEADER)
}

fn candidates_headed(title: &str, cs: &[&Candidate], header: [&str; 10]) -> String {
    let mut t = Table::new(header).titled(title);
    for c in cs {
        candidate_row(&mut t, c);
    }
    t.render()
}

/// What a plan was sized on, and what it refused, as lines ending in a blank one.
fn workload_lines(w: &WorkloadNote) -> String {
    let model = match w.sizing_model {
        SizingModel::Batch => "the batch model (GPUs running continuous batching, as the replay's engines)",
        SizingModel::Slots => "the slot model (KV slots at the pool's maximum context, as the reference fleet simulator)",
    };
    let mut out = format!(
        "Lengths: {}.\nSized with {}; {} calibration; P99 columns: {}.\n",
        w.lengths.describe(),
        model,
        match w.calibration {
            CalibrationMethod::Exact => "exact".to_string(),
            CalibrationMethod::Sampled(n) => format!("sampled ({n} draws)"),
        },
        w.ttft_figure.describe()
    );
    if w.refused_share > 0.0 {
        let count = w.refused_requests.map_or(String::new(), |n| {
            format!("{n} request{}, ", if n == 1 { "" } else { "s" })
        });
        out += &format!(
            "Refused: {count}{} % of them ({} req/s), are longer than {} {} tokens; no pool serves them and none is sized for them.\n",
            table::sig(100.0 * w.refused_share),
            table::sig(w.refused_rps),
            w.max_ctx_flag,
            w.max_ctx
        );
    }
    out + "\n"
}

/// The name of the check that simulates a model's queue.
fn simulated_check(w: &WorkloadNote) -> &'static str {
    match w.sizing_model {
        SizingModel::Batch => "M/G/c simulation of the GPUs' prompt work",
        SizingModel::Slots => "slot-level M/G/c simulation",
    }
}

/// `optimize`.
pub fn render_optimize(r: &OptimizeReport) -> String {
    let mut out = format!(
        "Fleet optimization: {} at {} req/s, P99 TTFT SLO {} ms, b_short {}\n",
        r.cdf, r.lam, r.slo_ms, r.params.b_short
    );
    out += &workload_lines(&r.workload);
    out += &candidates(
        "Analytic sweep (Erlang-C + Kimura)",
        &r.candidates.iter().collect::<Vec<_>>(),
    );
    out += "\n";
    // Over several seeds the simulated P99s are means (intervals in the JSON).
    let mean_of = format!("(mean of {} seeds)", r.params.seeds);
    let (short_h, long_h) = (
        format!("P99 short ms {mean_of}"),
        format!("P99 long ms {mean_of}"),
    );
    let mut header = CANDIDATE_HEADER;
    if r.params.seeds > 1 {
        header[7] = &short_h;
        header[8] = &long_h;
    }
    out += &candidates_headed(
        &format!(
            "Verified by {} ({} requests per pool, {})",
            simulated_check(&r.workload),
            r.params.n_sim_req,
            if r.params.seeds > 1 {
                format!("seeds {} to {}", r.seed, r.seed + r.params.seeds - 1)
            } else {
                format!("seed {}", r.seed)
            }
        ),
        &r.simulated.iter().collect::<Vec<_>>(),
        header,
    );
    out += "\n";
    if !r.engine.is_empty() {
        out += &candidates(
            &format!(
                "Replayed through the engines ({} requests per pool, seed {})",
                r.params.n_sim_req, r.seed
            ),
            &r.engine.iter().collect::<Vec<_>>(),
        );
        out += "\n";
    }
    let mut picks: Vec<&Candidate> = vec![&r.baseline];
    picks.extend(r.best.iter());
    picks.extend(r.recommended.iter());
    let title = match r.recommended {
        Some(_) => format!(
            "Baseline (one pool), best analytic, recommended (by the {} check)",
            r.recommended_by
        ),
        None => "Baseline (one pool), best analytic".to_string(),
    };
    out += &candidates(&title, &picks);
    if r.recommended.is_none() {
        out += &format!(
            "\nno recommendation: no candidate passed the {} check\n",
            r.recommended_by
        );
    }
    out
}

/// `pareto`.
pub fn render_pareto(r: &ParetoReport) -> String {
    let mut t = Table::new([
        "b_short",
        "n_short",
        "n_long",
        "GPUs",
        "$K/yr",
        "saving",
        "worst P99 ms",
        "pareto",
        "SLO",
    ])
    .titled(format!(
        "Threshold sweep: {} at {} req/s (baseline {} GPUs, ${:.0}K/yr)",
        r.cdf, r.lam, r.baseline.total_gpus, r.baseline.annual_cost_kusd
    ));
    for p in &r.candidates {
        let c = &p.candidate;
        t.row([
            c.b_short.to_string(),
            c.n_short.to_string(),
            c.n_long.to_string(),
            c.total_gpus.to_string(),
            num(c.annual_cost_kusd, 1),
            format!("{:.1}%", p.saving * 100.0),
            num(p.worst_p99_ms, 1),
            if p.pareto { "*" } else { "" }.to_string(),
            if c.slo_met { "ok" } else { "MISS" }.to_string(),
        ]);
    }
    let rec = match (&r.recommended, r.recommendation) {
        (Some(p), Recommendation::Baseline) => format!(
            "recommended: the one-pool baseline, {} GPUs (${:.0}K/yr, P99 {:.0} ms): no threshold meeting the SLO does better\n",
            p.candidate.total_gpus, p.candidate.annual_cost_kusd, p.candidate.p99_ttft_short_ms
        ),
        (Some(p), _) => format!(
            "recommended: b_short {} with {} + {} GPUs (${:.0}K/yr, saving {:.1}%, P99 {:.0} ms / {:.0} ms)\n",
            p.candidate.b_short, p.candidate.n_short, p.candidate.n_long, p.candidate.annual_cost_kusd, p.saving * 100.0,
            p.candidate.p99_ttft_short_ms, p.candidate.p99_ttft_long_ms
        ),
        (None, _) => "no threshold and not the baseline meets the SLO\n".to_string(),
    };
    format!("{}{}\n{rec}", workload_lines(&r.workload), t.render())
}

/// `disagg`.
pub fn render_disagg(r: &DisaggReport) -> String {
    // The engine check's verdict on a split, when it replayed it.
    let verdict = |p: &DisaggPoint| -> Option<&'static str> {
        let c = r
            .engine
            .as_ref()?
            .verified
            .iter()
            .find(|c| (c.split.n_prefill, c.split.n_decode) == (p.n_prefill, p.n_decode))?;
        Some(match (c.meets_ttft, c.meets_tpot) {
            (true, true) => "yes",
            (false, true) => "no (TTFT)",
            (true, false) => "no (TPOT)",
            (false, false) => "no (both)",
        })
    };
    let mut header = vec![
        "n_prefill",
        "n_decode",
        "GPUs",
        "system rps",
        "TTFT ms",
        "TPOT ms",
        "$/hr",
        "$K/yr",
    ];
    if r.engine.is_some() {
        header.push("engine check");
    }
    let mut t = Table::new(header).titled(format!(
        "Disaggregated splits ({} prefill, {} decode) meeting the SLOs by the analytic model, Pareto set{}",
        r.gpu_prefill,
        r.gpu_decode,
        if r.engine.is_some() { " (the engine check decides)" } else { "" }
    ));
    for p in &r.points {
        let mut row = vec![
            p.n_prefill.to_string(),
            p.n_decode.to_string(),
            p.total_gpus.to_string(),
            num(p.system_rps, 1),
            num(p.ttft_ms, 1),
            num(p.tpot_ms, 1),
            num(p.cost_per_hr, 2),
            num(p.annual_cost_kusd, 1),
        ];
        if r.engine.is_some() {
            row.push(verdict(p).unwrap_or("not replayed").to_string());
        }
        t.row(row);
    }
    let mut a = Table::new(["aggregated on", "GPUs", "$/hr", "per-GPU rps", "TTFT SLO"])
        .titled("Aggregated baselines");
    for b in &r.aggregated {
        a.row([
            b.gpu.clone(),
            b.n_gpus.to_string(),
            num(b.cost_per_hr, 2),
            num(b.per_gpu_rps, 2),
            match b.ttft_met {
                Some(true) => "ok",
                Some(false) => "MISS",
                None => "-",
            }
            .to_string(),
        ]);
    }
    let best = match &r.best {
        Some(b) => format!(
            "best by the analytic model: {} + {} = {} GPUs, {:.1} req/s, TTFT {:.0} ms, TPOT {:.0} ms, ${:.0}K/yr{}\n",
            b.n_prefill,
            b.n_decode,
            b.total_gpus,
            b.system_rps,
            b.ttft_ms,
            b.tpot_ms,
            b.annual_cost_kusd,
            match verdict(b) {
                Some("yes") => " (the engine check agrees)".to_string(),
                Some(v) => format!(" (the engine check: {v}, not feasible)"),
                None => String::new(),
            }
        ),
        None => "no split meets the SLOs within the limits\n".to_string(),
    };
    let model = disagg_model_line(&r.params);
    let Some(e) = &r.engine else {
        return format!("{model}{}\n{}\n{best}", t.render(), a.render());
    };
    let mut v = Table::new([
        "n_prefill",
        "n_decode",
        "$/hr",
        "completed",
        "TTFT p50",
        "TTFT p99",
        "TPOT p50",
        "TPOT p99",
        "KV xfer ms",
        "meets",
    ])
    .titled(format!(
        "Engine check: disaggregated replay, {} requests each, {} B/token over {} GB/s; P99 against TTFT {} ms, TPOT {} ms",
        e.params.n_req,
        e.kv_bytes_per_token,
        e.params.kv_transfer_gb_s,
        r.params.slo_ttft_ms,
        r.params.slo_tpot_ms
    ));
    let ms = |x: Option<f64>| x.map_or_else(|| "inf".to_string(), |x| num(x, 1));
    for c in &e.verified {
        let miss = match (c.meets_ttft, c.meets_tpot) {
            (true, true) => "yes",
            (false, true) => "no (TTFT)",
            (true, false) => "no (TPOT)",
            (false, false) => "no (both)",
        };
        v.row([
            c.split.n_prefill.to_string(),
            c.split.n_decode.to_string(),
            num(c.split.cost_per_hr, 2),
            format!("{}/{}", c.completed, c.offered),
            ms(c.ttft_p50_ms),
            ms(c.ttft_p99_ms),
            ms(c.tpot_p50_ms),
            ms(c.tpot_p99_ms),
            num(c.kv_transfer_mean_ms, 1),
            miss.to_string(),
        ]);
    }
    let rec = match &r.recommended {
        Some(b) => format!(
            "recommended (engine check): {} + {} = {} GPUs, ${:.2}/hr, ${:.0}K/yr\n",
            b.n_prefill, b.n_decode, b.total_gpus, b.cost_per_hr, b.annual_cost_kusd
        ),
        None => format!(
            "recommended (engine check): none of the {} replayed splits meets the SLOs\n",
            e.verified.len()
        ),
    };
    format!(
        "{model}{}\n{}\n{best}\n{}\n{rec}",
        t.render(),
        a.render(),
        v.render()
    )
}

/// What sized the splits, and on which lengths.
fn disagg_model_line(p: &DisaggParams) -> String {
    let lengths = format!(
        "requests of {} prompt and {} output tokens (the means)",
        table::sig(p.mean_isl),
        table::sig(p.mean_osl)
    );
    match p.model {
        SizingModel::Batch => format!(
            "Sized with the batch model on {lengths}: prefill GPUs share their compute among the prompts (TTFT: P99 of the wait for a prefill GPU + the prompt's chunks + a decode pass), decode GPUs batch continuously (TPOT: a pass at their batch); the KV transfer is the engine check's.\n"
        ),
        SizingModel::Slots => format!(
            "Sized with the slot model (the reference fleet simulator's) on {lengths}: rates of slots at efficiencies {} (prefill) and {} (decode), TTFT {} × a prompt's chunks at the full batch.\n",
            table::sig(p.prefill_efficiency),
            table::sig(p.decode_efficiency),
            table::sig(p.ttft_multiplier)
        ),
    }
}

fn des_row(t: &mut Table, m: &DesMetrics) {
    t.row([
        m.pool.clone(),
        m.offered.to_string(),
        m.completed.to_string(),
        (m.rejected_too_long + m.rejected_queue_full + m.rejected_no_gpus).to_string(),
        m.preemptions.to_string(),
        num(m.p50_ttft_ms, 1),
        num(m.p99_ttft_ms, 1),
        num(m.p99_queue_wait_ms, 1),
        num(m.throughput_rps, 2),
        format!("{:.1}%", m.slo_compliance * 100.0),
        format!("{:.1}%", (m.utilization * 100.0).max(0.0)),
    ]);
}

const DES_HEADER: [&str; 11] = [
    "pool",
    "offered",
    "completed",
    "rejected",
    "preempted",
    "P50 TTFT",
    "P99 TTFT",
    "P99 wait",
    "rps (own span)",
    "SLO ok",
    "util (own span)",
];

fn iv(i: &Interval, digits: usize) -> String {
    if i.lo == i.hi {
        num(i.mean, digits)
    } else {
        format!(
            "{} [{}, {}]",
            num(i.mean, digits),
            num(i.lo, digits),
            num(i.hi, digits)
        )
    }
}

/// `simulate` and `simulate-fleet`.
pub fn render_simulate(r: &SimulateReport) -> String {
    format!("{}\n{}\n", simulate_table(r).render(), simulate_summary(r))
}

/// The metrics table of `simulate` (the first seed's run).
pub fn simulate_table(r: &SimulateReport) -> Table {
    let mut t = Table::new(DES_HEADER).titled(format!(
        "Fleet DES: {}, seed {}{} (metrics after warm-up; ms; each row's rate over its own span)",
        r.label,
        r.first_seed,
        if r.seeds > 1 {
            format!(" of {} (one seed: the means over seeds are below)", r.seeds)
        } else {
            String::new()
        }
    ));
    des_row(&mut t, &r.result.fleet);
    for p in &r.result.pools {
        des_row(&mut t, p);
    }
    t
}

/// The line under it: completions and the means over the seeds.
pub fn simulate_summary(r: &SimulateReport) -> String {
    format!(
        "seed {}: completed {} of {} offered (warm-up included); mean over {} seed(s) [95 % interval]: P99 TTFT {} ms, SLO compliance {}",
        r.first_seed,
        r.result.total_completed,
        r.result.total_offered,
        r.seeds,
        iv(&r.p99_ttft_ms, 1),
        iv(&Interval { mean: r.slo_compliance.mean * 100.0, lo: r.slo_compliance.lo * 100.0, hi: r.slo_compliance.hi * 100.0 }, 1) + "%"
    )
}

/// A router's name as the flags spell it (`length`, `compress_route`).
pub fn router_name(r: &RouterSpec) -> String {
    serde_json::to_value(r)
        .ok()
        .and_then(|v| v["kind"].as_str().map(String::from))
        .unwrap_or_default()
}

/// `compare-routers`.
pub fn render_compare(r: &CompareRoutersReport) -> String {
    compare_table(r).render()
}

/// The table of `compare-routers`.
pub fn compare_table(r: &CompareRoutersReport) -> Table {
    let over = format!("mean of {} seed(s) [95 %]", r.seeds);
    let one = format!("seed {}", r.first_seed);
    let mut t = Table::new([
        "router".to_string(),
        format!("P99 TTFT ms ({over})"),
        format!("SLO compliance % ({over})"),
        format!("utilization ({one})"),
        format!("completed ({one})"),
        format!("rejected ({one})"),
    ])
    .titled("Routers on identical arrivals");
    for row in &r.rows {
        t.row([
            router_name(&row.router),
            iv(&row.p99_ttft_ms, 1),
            iv(
                &Interval {
                    mean: row.slo_compliance.mean * 100.0,
                    lo: row.slo_compliance.lo * 100.0,
                    hi: row.slo_compliance.hi * 100.0,
                },
                1,
            ),
            format!("{:.1}%", (row.fleet.utilization * 100.0).max(0.0)),
            row.fleet.completed.to_string(),
            (row.fleet.rejected_too_long
                + row.fleet.rejected_queue_full
                + row.fleet.rejected_no_gpus)
                .to_string(),
        ]);
    }
    t
}

/// `whatif`.
pub fn render_whatif(r: &WhatIfReport) -> String {
    let mut t = Table::new([
        "req/s",
        "b_short",
        "n_short",
        "n_long",
        "GPUs",
        "$/hr",
        "one-pool GPUs",
        "one-pool $/hr",
        "SLO",
    ])
    .titled("Cheapest configuration per arrival rate");
    for row in &r.candidates {
        t.row([
            num(row.lam, 1),
            row.best.b_short.to_string(),
            row.best.n_short.to_string(),
            row.best.n_long.to_string(),
            row.best.total_gpus.to_string(),
            num(row.best.cost_per_hr, 2),
            row.baseline.total_gpus.to_string(),
            num(row.baseline.cost_per_hr, 2),
            if row.best.slo_met { "ok" } else { "MISS" }.to_string(),
        ]);
    }
    let mut out = t.render();
    if !r.gpu_compare.is_empty() {
        let mut g = Table::new(["req/s", "gpu", "GPUs", "$/hr", "cost ratio", "P99 TTFT ms"])
            .titled("GPU comparison (one pool)");
        for row in &r.gpu_compare {
            g.row([
                num(row.lam, 1),
                row.gpu.clone(),
                row.n_gpus.to_string(),
                num(row.cost_per_hr, 2),
                format!("{:.2}x", row.cost_ratio),
                num(row.p99_ttft_ms, 1),
            ]);
        }
        out += "\n";
        out += &g.render();
    }
    workload_lines(&r.workload) + &out
}

/// `tok-per-watt`.
pub fn render_tok_per_watt(r: &TokPerWattReport) -> String {
    let mut t = Table::new([
        "gpu",
        "GPUs",
        "rho",
        "n_active",
        "tok/W",
        "W/GPU",
        "$/Mtok",
        "P99 TTFT ms",
    ])
    .titled(format!(
        "Tokens per watt: {} at {} req/s (mean output {} tokens)",
        r.cdf,
        table::sig(r.lam),
        table::sig(r.mean_output_tokens)
    ));
    for row in &r.rows {
        t.row([
            row.gpu.clone(),
            row.n_gpus.to_string(),
            num(row.rho, 3),
            num(row.n_active, 1),
            num(row.tok_per_watt, 2),
            num(row.watts_per_gpu, 1),
            num(row.usd_per_mtok, 3),
            num(row.p99_ttft_ms, 1),
        ]);
    }
    workload_lines(&r.workload) + &t.render()
}

/// `grid-flex`.
pub fn render_grid_flex(r: &GridFlexReport) -> String {
    let mut t = Table::new([
        "cut",
        "batch cap",
        "W/GPU",
        "fleet kW",
        "P99 analytic ms",
        "P99 simulated ms",
        "SLO",
    ])
    .titled(format!(
        "Demand response: {} x {} at {} req/s, SLO {} ms, baseline {:.1} kW",
        r.n_gpus, r.gpu, r.lam, r.slo_ms, r.baseline_kw
    ));
    for p in &r.points {
        t.row([
            format!("{:.0}%", p.flex_pct),
            p.batch_cap.to_string(),
            num(p.watts_per_gpu, 1),
            num(p.fleet_kw, 2),
            num(p.p99_ttft_ms, 1),
            opt_num(p.p99_ttft_sim_ms, 1),
            if p.slo_met { "ok" } else { "MISS" }.to_string(),
        ]);
    }
    let deepest = r
        .deepest_safe_pct
        .map_or("no cut meets the SLO".to_string(), |d| {
            format!("deepest safe cut: {d:.0}%")
        });
    format!("{}{}\n{deepest}\n", workload_lines(&r.workload), t.render())
}
