//! Engine pass benchmarks (run with `cargo bench -p aisim-core --bench engine_pass`).
//!
//! - steady decode: 256 running requests, every pass one token each; target
//!   under 50 ns per running request per pass, no allocation per pass;
//! - admission-heavy: passes that admit many requests whose long prompts hit
//!   the prefix cache; reports the cost per looked-up block (O(blocks)).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use aisim_core::timing::FixedTiming;
use aisim_core::{Engine, EngineConfig, PassOutcome, Request, SimTime};

/// Counts allocations, to show that steady passes make none.
#[path = "../tests/alloc_count/mod.rs"]
mod alloc_count;
use alloc_count::allocations;

fn engine(num_gpu_blocks: u32) -> Engine {
    let cfg = EngineConfig {
        num_gpu_blocks: Some(num_gpu_blocks),
        ..EngineConfig::default()
    };
    Engine::new(cfg, Arc::new(FixedTiming::new(1.0, 1.0).unwrap())).unwrap()
}

fn steady_decode() {
    let mut e = engine(1 << 20);
    for i in 0..256u64 {
        let ids: Vec<u64> = (0..4).map(|b| i * 10 + b).collect();
        e.add_request(
            &Request::new(i, SimTime::ZERO, 1024, 1_000_000).with_hash_ids(ids, 512),
            0,
        )
        .unwrap();
    }
    let mut out = PassOutcome::default();
    let mut now = SimTime::ZERO;
    // Warm up: admit and prefill everything, grow buffers.
    for _ in 0..200 {
        now = now.after(e.start_pass(now).unwrap().unwrap());
        e.finish_pass(&mut out);
        out.clear();
    }
    assert_eq!(e.load().running, 256);
    let passes = 20_000u64;
    let allocs_before = allocations();
    let t0 = Instant::now();
    for _ in 0..passes {
        let d = e.start_pass(now).unwrap().unwrap();
        now = now.after(d);
        e.finish_pass(&mut out);
        black_box(out.events.len());
        out.clear();
    }
    let ns = t0.elapsed().as_nanos() as f64;
    let allocs = allocations() - allocs_before;
    println!(
        "steady decode: {allocs} allocations in {passes} passes (block tables are reserved at enqueue)"
    );
    println!(
        "steady decode: {passes} passes x 256 running: {:.1} ns/pass, {:.2} ns per running request per pass",
        ns / passes as f64,
        ns / passes as f64 / 256.0
    );
}

fn admission_heavy() {
    // 64 prefix groups of 32,768-token prompts (512 engine blocks each), then many
    // requests that reuse them: each admission looks up 511 blocks.
    let groups = 64u64;
    let mut e = engine(1 << 16);
    let mut out = PassOutcome::default();
    let mut now = SimTime::ZERO;
    let mut id = 0u64;
    let add = |e: &mut Engine, g: u64, id: &mut u64| {
        let ids: Vec<u64> = (0..64).map(|b| g * 1000 + b).collect();
        e.add_request(
            &Request::new(*id, SimTime::ZERO, 32_768, 1).with_hash_ids(ids, 512),
            0,
        )
        .unwrap();
        *id += 1;
    };
    for g in 0..groups {
        add(&mut e, g, &mut id);
    }
    while e.has_work() {
        now = now.after(e.start_pass(now).unwrap().unwrap());
        e.finish_pass(&mut out);
        out.clear();
    }
    let requests = 20_000u64;
    for r in 0..requests {
        add(&mut e, r % groups, &mut id);
    }
    let t0 = Instant::now();
    let mut passes = 0u64;
    while e.has_work() {
        now = now.after(e.start_pass(now).unwrap().unwrap());
        e.finish_pass(&mut out);
        black_box(out.events.len());
        out.clear();
        passes += 1;
    }
    let ns = t0.elapsed().as_nanos() as f64;
    let stats = e.stats();
    let blocks = stats.reused_tokens_all / 64;
    println!(
        "admission-heavy: {requests} admissions in {passes} passes, {} blocks reused: {:.0} ns per admission, {:.2} ns per looked-up block",
        blocks,
        ns / requests as f64,
        ns / blocks as f64
    );
}

fn main() {
    steady_decode();
    admission_heavy();
}
