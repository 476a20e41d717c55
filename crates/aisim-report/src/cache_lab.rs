//! `aisim cache-lab` as a table: the start, then a row per step.

use aisim_core::cache_lab::CacheLabRun;

use crate::table::{num, Table};

fn hit_rate(hits: u64, requests: u64) -> String {
    if requests == 0 {
        "-".to_string()
    } else {
        num(100.0 * hits as f64 / requests as f64, 1) + "%"
    }
}

/// The lab's requests and hits, at the start and after each step.
pub fn render_cache_lab(run: &CacheLabRun) -> String {
    let title = format!(
        "Cache lab: LRU prefix cache of {} entries, {} sessions (request i reads session i mod {})",
        run.capacity, run.sessions, run.sessions
    );
    let mut t = Table::new(["step", "requests", "hits", "hit rate"]).titled(title);
    t.row([
        "start".to_string(),
        run.requests.to_string(),
        run.hits.to_string(),
        hit_rate(run.hits, run.requests),
    ]);
    for (k, s) in run.steps.iter().enumerate() {
        t.row([
            format!("+{}", k + 1),
            s.requests.to_string(),
            s.hits.to_string(),
            hit_rate(s.hits, s.requests),
        ]);
    }
    t.render()
}
