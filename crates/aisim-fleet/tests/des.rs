//! The request-level fleet DES.

use std::sync::Arc;

use aisim_core::profile::{resolve_profile, GpuProfile, ProfileOverride};
use aisim_fleet::cdf::Cdf;
use aisim_fleet::des::{
    generate, interval, run_des, run_seeds, run_seeds_on, Arrivals, DesConfig, FleetRequest,
    InstancePick, PoolSpec, RouterSpec,
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
    let r = run_des(&cfg(vec![pool("p", a100.clone(), 2, 8192)]), &reqs).unwrap();
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
    let r = run_des(&cfg(vec![pool("p", tiny_kv(4), 1, 1600)]), &reqs).unwrap();
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
    )
    .unwrap();
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
    let r = run_des(&c, &reqs).unwrap();
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
        let reqs = generate(&cdf, 100.0, 20_000, &Arrivals::Poisson, seed).unwrap();
        run_des(&c, &reqs).unwrap().fleet.p99_ttft_ms
    };
    assert_eq!(run(3), run(3));
    let xs = run_seeds(5, 42, run);
    let iv = interval(&xs);
    assert!(iv.lo < iv.mean && iv.mean < iv.hi, "{iv:?}");
    let cut = interval(&[0.1, 0.9, 1.0]).within(0.0, 1.0);
    assert!(
        cut.lo == 0.0 && cut.hi == 1.0 && (cut.mean - 2.0 / 3.0).abs() < 1e-12,
        "{cut:?}"
    );
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
    let r = run_des(&c, &reqs).unwrap();
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
    let r = aisim_fleet::des::run_des_with(&c, &reqs, Box::new(ByPrompt)).unwrap();
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

#[test]
fn pool_rates_divide_by_the_pools_own_span() {
    let a100 = resolve_profile("a100").unwrap();
    // Ten short requests in the first ten seconds, ten long ones from t = 100 s.
    let mut reqs: Vec<FleetRequest> = (0..10).map(|k| req(k as f64, 500, 50)).collect();
    reqs.extend((0..10).map(|k| req(100.0 + k as f64, 5000, 50)));
    let c = cfg(vec![
        pool("short", a100.clone(), 1, 4096),
        pool("long", a100, 1, 8192),
    ]);
    let r = run_des(&c, &reqs).unwrap();
    let (short, long) = (&r.pools[0], &r.pools[1]);
    assert_eq!((short.completed, long.completed), (10, 10));
    // The short pool was busy from 0 s to just after its last arrival at 9 s.
    assert!(
        short.span_s > 9.0 && short.span_s < 12.0,
        "{}",
        short.span_s
    );
    assert!((short.throughput_rps * short.span_s - 10.0).abs() < 1e-9);
    assert!(short.throughput_rps > 0.8, "{}", short.throughput_rps);
    // The long pool's span starts at its own first arrival, 100 s.
    assert!(long.span_s > 9.0 && long.span_s < 15.0, "{}", long.span_s);
    // The fleet's spans the whole run, so its rate is far lower.
    assert!(r.fleet.span_s > 109.0);
    assert!((r.fleet.throughput_rps * r.fleet.span_s - 20.0).abs() < 1e-9);
    assert!(short.utilization > 10.0 * r.fleet.utilization / 20.0);
}

#[test]
fn ten_million_gpus_cost_only_the_instances_requests_reach() {
    let a100 = resolve_profile("a100").unwrap();
    let reqs: Vec<FleetRequest> = (0..5000).map(|k| req(k as f64 * 1e-3, 1000, 100)).collect();
    let r = run_des(&cfg(vec![pool("p", a100.clone(), 10_000_000, 8192)]), &reqs).unwrap();
    assert_eq!(r.fleet.completed, 5000);
    let p = &r.pools[0];
    assert!(
        p.instances_used >= 1 && p.instances_used <= 5000,
        "{}",
        p.instances_used
    );
    // Spread over idle instances, every request starts at once: TTFT is its prefill.
    assert!((r.fleet.p99_ttft_ms - r.fleet.p50_ttft_ms).abs() < 1e-9);
    assert!(r.fleet.utilization < 1e-3);
}

#[test]
fn seeds_run_on_a_bounded_pool_in_seed_order() {
    use std::collections::HashSet;
    use std::sync::Mutex;
    let threads = Mutex::new(HashSet::new());
    let got = run_seeds_on(3, 2000, 7, |s| {
        threads.lock().unwrap().insert(std::thread::current().id());
        s * 2
    });
    assert_eq!(got, (7..2007).map(|s| s * 2).collect::<Vec<u64>>());
    assert!(threads.lock().unwrap().len() <= 3);
    assert_eq!(run_seeds(2000, 7, |s| s * 2), got);
}

#[test]
fn bad_des_settings_are_errors_naming_the_field() {
    let a100 = resolve_profile("a100").unwrap();
    let reqs = vec![req(0.0, 10, 10)];
    let mut c = cfg(vec![pool("p", a100.clone(), 1, 0)]);
    let e = run_des(&c, &reqs).unwrap_err().to_string();
    assert!(e.contains("`max_ctx` = 0"), "{e}");
    c.pools = vec![
        pool("p", a100.clone(), 1, 8192),
        pool("p", a100.clone(), 1, 8192),
    ];
    let e = run_des(&c, &reqs).unwrap_err().to_string();
    assert!(e.contains("pool 1 (`p`): `id`"), "{e}");
    c.pools.pop();
    for (w, ok) in [(f64::NAN, false), (-0.1, false), (1.0, false), (0.5, true)] {
        c.warmup_frac = w;
        assert_eq!(run_des(&c, &reqs).is_ok(), ok, "warm-up {w}");
    }
    c.warmup_frac = 0.0;
    c.slo_ms = f64::NAN;
    assert!(run_des(&c, &reqs)
        .unwrap_err()
        .to_string()
        .contains("`--slo-ttft-ms`"));
    c.slo_ms = 500.0;
    c.router = RouterSpec::CompressRoute {
        b_short: 100,
        gamma: f64::INFINITY,
        compress_latency_ms: 3.0,
    };
    assert!(run_des(&c, &reqs)
        .unwrap_err()
        .to_string()
        .contains("router.gamma"));
    c.router = RouterSpec::Length { threshold: None };
    c.pools = vec![pool("p", a100.clone(), 0, 8192)];
    assert!(run_des(&c, &reqs)
        .unwrap_err()
        .to_string()
        .contains("0 GPUs"));
    // A pool without GPUs beside one with: its requests are counted as such.
    c.pools = vec![
        pool("small", a100.clone(), 0, 4096),
        pool("big", a100.clone(), 1, 8192),
    ];
    let r = run_des(&c, &reqs).unwrap();
    assert_eq!(
        (r.pools[0].rejected_no_gpus, r.fleet.rejected_too_long),
        (1, 0)
    );
    let cdf = Cdf::builtin("azure").unwrap();
    for (lam, n) in [(f64::NAN, 10), (-1.0, 10), (1.0, 0)] {
        assert!(
            generate(&cdf, lam, n, &Arrivals::Poisson, 1).is_err(),
            "{lam} {n}"
        );
    }
}

#[test]
fn a_set_cancel_flag_stops_the_des() {
    let a100 = resolve_profile("a100").unwrap();
    let reqs: Vec<FleetRequest> = (0..50).map(|k| req(k as f64 * 100.0, 1000, 100)).collect();
    let config = cfg(vec![pool("p", a100, 2, 8192)]);
    let set = Some(std::sync::Arc::new(std::sync::atomic::AtomicBool::new(
        true,
    )));
    let e = aisim_core::cancel::with_flag(set, || run_des(&config, &reqs)).unwrap_err();
    assert!(matches!(e, aisim_fleet::FleetError::Cancelled), "{e}");
    assert!(!e.is_internal());
    assert!(run_des(&config, &reqs).is_ok());
}
