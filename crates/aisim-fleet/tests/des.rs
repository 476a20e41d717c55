//! The request-level fleet DES.

use std::sync::Arc;

use aisim_core::profile::{resolve_profile, GpuProfile, ProfileOverride};
use aisim_fleet::cdf::Cdf;
use aisim_fleet::des::{
    generate, interval, run_des, run_seeds, Arrivals, DesConfig, FleetRequest, InstancePick,
    PoolSpec, RouterSpec,
};
use aisim_fleet::workload::Category;

fn pool(id: &str, profile: Arc<dyn GpuProfile>, n: u64, max_ctx: u32) -> PoolSpec {
    PoolSpec {
        id: id.into(),
        profile,
        n_gpus: n,
        max_ctx,
    }
}

fn cfg(pools: Vec<PoolSpec>) -> DesConfig {
    DesConfig {
        pools,
        router: RouterSpec::Length { threshold: None },
        pick: InstancePick::ShortestQueue,
        queue_cap: 512,
        warmup_frac: 0.0,
        slo_ms: 500.0,
        seed: 1,
    }
}

fn req(at: f64, l_in: u32, l_out: u32) -> FleetRequest {
    FleetRequest {
        arrival_s: at,
        l_in,
        l_out,
        category: Category::Prose,
        model: None,
    }
}

#[test]
fn light_load_ttft_is_the_prefill_time() {
    let a100 = resolve_profile("a100").unwrap();
    let reqs: Vec<FleetRequest> = (0..50).map(|k| req(k as f64 * 100.0, 1000, 100)).collect();
    let r = run_des(&cfg(vec![pool("p", a100.clone(), 2, 8192)]), &reqs);
    assert_eq!(r.fleet.completed, 50);
    // Alone on an instance: 2 chunks of 512 at iter(1, 1100).
    let expected = 2.0 * a100.iter_s(1.0, 1100.0) * 1e3;
    assert!(
        (r.fleet.p50_ttft_ms - expected).abs() < 1e-9
            && (r.fleet.p99_ttft_ms - expected).abs() < 1e-9
    );
    assert_eq!(r.fleet.slo_compliance, 1.0);
}

/// An A100 with 100 KV blocks (1,600 tokens) but `slots` logical slots: more
/// sequences than its KV holds at full length, so KV admission can bind.
fn tiny_kv(slots: u64) -> Arc<dyn GpuProfile> {
    let a100 = resolve_profile("a100").unwrap();
    Arc::new(
        ProfileOverride::new(a100)
            .with_total_kv_blks(100)
            .with_n_slots(slots),
    )
}

#[test]
fn a_preempted_request_completes_exactly_once() {
    // A long request holds most of the KV; a shorter one arriving next cannot fit,
    // so the long one is preempted, restarts after it, and both complete once.
    let reqs = vec![req(0.0, 1000, 400), req(0.01, 300, 100)];
    let r = run_des(&cfg(vec![pool("p", tiny_kv(4), 1, 1600)]), &reqs);
    assert_eq!(r.fleet.preemptions, 1);
    assert_eq!((r.total_completed, r.fleet.completed), (2, 2));
}

#[test]
fn too_long_requests_are_rejected_and_count_against_compliance() {
    let a100 = resolve_profile("a100").unwrap();
    let mut reqs: Vec<FleetRequest> = (0..9).map(|k| req(k as f64, 500, 50)).collect();
    reqs.push(req(9.5, 9000, 100)); // longer than every pool
    let r = run_des(
        &cfg(vec![
            pool("short", a100.clone(), 1, 4096),
            pool("long", a100, 1, 8192),
        ]),
        &reqs,
    );
    assert_eq!(r.fleet.rejected_too_long, 1);
    assert_eq!(r.fleet.offered, 10);
    assert_eq!(r.fleet.completed, 9);
    assert!((r.fleet.slo_compliance - 0.9).abs() < 1e-12);
}

#[test]
fn full_queues_reject_and_count() {
    let reqs: Vec<FleetRequest> = (0..40).map(|k| req(k as f64 * 1e-6, 1000, 200)).collect();
    let mut c = cfg(vec![pool("p", tiny_kv(1), 1, 1600)]);
    c.queue_cap = 5;
    let r = run_des(&c, &reqs);
    assert!(r.fleet.rejected_queue_full > 0);
    assert_eq!(
        r.fleet.rejected_queue_full, 34,
        "one running, five queued, the rest refused"
    );
    assert_eq!(
        r.fleet.completed
            + r.fleet.rejected_queue_full
            + r.fleet.rejected_too_long
            + r.fleet.incomplete,
        r.fleet.offered
    );
}

#[test]
fn same_seed_same_result_and_seeds_give_an_interval() {
    let a100 = resolve_profile("a100").unwrap();
    let cdf = Cdf::builtin("azure").unwrap();
    let c = cfg(vec![
        pool("short", a100.clone(), 8, 4096),
        pool("long", a100, 4, 65536),
    ]);
    let run = |seed| {
        let reqs = generate(&cdf, 100.0, 20_000, &Arrivals::Poisson, seed);
        run_des(&c, &reqs).fleet.p99_ttft_ms
    };
    assert_eq!(run(3), run(3));
    let xs = run_seeds(5, 42, run);
    let iv = interval(&xs);
    assert!(iv.lo < iv.mean && iv.mean < iv.hi, "{iv:?}");
}

#[test]
fn compress_route_sends_safe_borderline_requests_short() {
    let a100 = resolve_profile("a100").unwrap();
    let mut reqs = vec![req(0.0, 4000, 500), req(1.0, 4000, 500)]; // total 4500 in (4096, 6144]
    reqs[1].category = Category::Code;
    let mut c = cfg(vec![
        pool("short", a100.clone(), 1, 4096),
        pool("long", a100, 1, 65536),
    ]);
    c.router = RouterSpec::CompressRoute {
        b_short: 4096,
        gamma: 1.5,
        compress_latency_ms: 3.0,
    };
    let r = run_des(&c, &reqs);
    assert_eq!(
        r.pools[0].completed, 1,
        "prose is compressed into the short pool"
    );
    assert_eq!(r.pools[1].completed, 1, "code goes long");
}

/// A classifier of the user's own: long prompts to the second pool.
struct ByPrompt;

impl aisim_fleet::des::Router for ByPrompt {
    fn route(
        &mut self,
        req: &FleetRequest,
        _pools: &[aisim_fleet::des::PoolView],
    ) -> Option<aisim_fleet::des::Route> {
        Some(aisim_fleet::des::Route::Pool(if req.l_in > 1000 {
            1
        } else {
            0
        }))
    }
}

#[test]
fn a_router_of_your_own_plugs_in() {
    let a100 = resolve_profile("a100").unwrap();
    let reqs = vec![req(0.0, 500, 10), req(1.0, 2000, 10), req(2.0, 3000, 10)];
    let c = cfg(vec![
        pool("a", a100.clone(), 1, 8192),
        pool("b", a100, 1, 8192),
    ]);
    let r = aisim_fleet::des::run_des_with(&c, &reqs, Box::new(ByPrompt));
    assert_eq!((r.pools[0].completed, r.pools[1].completed), (1, 2));
}

#[test]
fn a_trace_gives_a_fifty_point_cdf() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/demo_sessions.jsonl");
    let c = Cdf::resolve(&format!("trace:{}", path.display())).unwrap();
    assert!(
        c.points.len() <= 50 && c.points.len() > 10,
        "{}",
        c.points.len()
    );
    assert_eq!(c.points.last().unwrap().1, 1.0);
    assert!(c
        .points
        .windows(2)
        .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
}
