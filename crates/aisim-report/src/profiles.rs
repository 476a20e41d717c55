//! `aisim profiles` as a table.

use aisim_core::profile::Catalog;
pub use aisim_lab::jobs::catalog::Listing;

use crate::table::{num, Table};

/// Hardware, models and profiles as three tables.
pub fn render_catalog(c: &Catalog) -> String {
    let mut hw = Table::new([
        "hardware",
        "name",
        "HBM GiB",
        "TB/s",
        "fp16 TFLOPs",
        "fp8 TFLOPs",
        "TDP W",
        "$/GPU-hr",
    ])
    .titled("Hardware");
    for h in &c.hardware {
        hw.row([
            h.key.clone(),
            h.name.clone(),
            num(h.mem_gib, 0),
            num(h.mem_bw_tb_s, 2),
            num(h.fp16_tflops, 0),
            num(h.fp8_tflops, 0),
            num(h.tdp_w, 0),
            num(h.cost_per_gpu_hr, 2),
        ]);
    }
    let mut models =
        Table::new(["model", "params B", "active B", "KV bytes/token", "max ctx"]).titled("Models");
    for m in &c.models {
        models.row([
            m.key.clone(),
            num(m.params as f64 / 1e9, 2),
            num(m.active_params as f64 / 1e9, 2),
            num(m.kv_bytes_per_token, 0),
            m.max_position.to_string(),
        ]);
    }
    let mut header: Vec<String> = [
        "profile",
        "kind",
        "GPUs",
        "W ms",
        "H ms",
        "cal ctx",
        "chunk",
        "KV blocks",
    ]
    .map(String::from)
    .to_vec();
    if let Some(p) = c.profiles.first() {
        header.extend(
            p.slots
                .iter()
                .map(|(ctx, _)| format!("slots@{}k", ctx / 1024)),
        );
    }
    header.extend(["$/hr", "P(1) W", "P(max) W"].map(String::from));
    let mut profiles = Table::new(header)
        .titled("Profiles (iteration model: iter(n, L) = W + H * (L / cal ctx) * n)");
    for p in &c.profiles {
        let mut row = vec![
            p.key.clone(),
            p.kind.to_string(),
            p.gpus.to_string(),
            num(p.w_ms, 3),
            num(p.h_ms, 4),
            p.calibration_ctx.to_string(),
            p.chunk.to_string(),
            p.total_kv_blks.to_string(),
        ];
        row.extend(p.slots.iter().map(|(_, s)| s.to_string()));
        row.extend([
            num(p.cost_per_hr, 2),
            num(p.power_b1_w, 1),
            num(p.power_max_w, 1),
        ]);
        profiles.row(row);
    }
    format!(
        "{}\n{}\n{}",
        hw.render(),
        models.render(),
        profiles.render()
    )
}

/// The listing as tables.
pub fn render_listing(l: &Listing) -> String {
    let mut w = Table::new(["workload", "mean total tokens", "p50", "p99", "description"])
        .titled("Built-in workloads (total tokens per request)");
    for x in &l.workloads {
        w.row([
            x.name.clone(),
            num(x.mean_tokens, 0),
            x.p50_tokens.to_string(),
            x.p99_tokens.to_string(),
            x.description.clone(),
        ]);
    }
    format!("{}\n{}", render_catalog(&l.catalog), w.render())
}
