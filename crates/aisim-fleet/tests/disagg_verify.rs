//! `disagg --verify engine`: the cheapest analytic splits replayed through
//! the disaggregated runtime, each marked against the SLOs, and the
//! recommendation that follows the replay.

use aisim_core::profile::resolve_profile;
use aisim_fleet::cdf::Cdf;
use aisim_fleet::disagg::{disagg_verified, DisaggParams, DisaggReport, DisaggVerifyParams};
use aisim_fleet::pool_model::SizingModel;

const PROFILE: &str = "h100/llama-3.1-8b/tp1";

/// 28 req/s of Azure-shaped requests on up to 4 + 4 H100s: the analytic
/// sweep's cheapest split (1 + 2, 31 req/s) is at its edge.
fn params(slo_ttft_ms: f64) -> DisaggParams {
    let mean = Cdf::builtin("azure").unwrap().mean_upper();
    DisaggParams {
        lam: 28.0,
        max_ctx: 8192,
        mean_isl: 0.75 * mean,
        mean_osl: 0.25 * mean,
        slo_ttft_ms,
        slo_tpot_ms: 100.0,
        max_prefill: 4,
        max_decode: 4,
        prefill_efficiency: 0.90,
        decode_efficiency: 0.92,
        ttft_multiplier: 1.80,
        model: SizingModel::Slots,
    }
}

fn verify() -> DisaggVerifyParams {
    DisaggVerifyParams {
        top: 3,
        n_req: 2000,
        seed: 42,
        kv_bytes_per_token: None,
        kv_transfer_gb_s: 50.0,
        kv_transfer_latency_ms: 0.0,
        coefficients: None,
    }
}

fn run(p: &DisaggParams, v: &DisaggVerifyParams) -> DisaggReport {
    let g = resolve_profile(PROFILE).unwrap();
    disagg_verified(g.as_ref(), g.as_ref(), p, v).unwrap()
}

#[test]
fn the_engine_fails_the_analytic_best_and_the_recommendation_follows() {
    let p = params(500.0);
    let r = run(&p, &verify());
    let e = r.engine.as_ref().unwrap();
    assert_eq!(e.kv_bytes_per_token, 131_072, "from the profile's model");
    let splits: Vec<(u64, u64)> = e
        .verified
        .iter()
        .map(|c| (c.split.n_prefill, c.split.n_decode))
        .collect();
    // The cheapest feasible splits, whatever their prefill count.
    assert_eq!(splits, [(1, 2), (1, 3), (2, 2)], "cheapest first");
    for c in &e.verified {
        let ttft = c.ttft_p99_ms.unwrap_or(f64::INFINITY);
        let tpot = c.tpot_p99_ms.unwrap_or(f64::INFINITY);
        assert_eq!(c.meets_ttft, ttft <= p.slo_ttft_ms);
        assert_eq!(c.meets_tpot, tpot <= p.slo_tpot_ms);
        assert_eq!(c.meets, c.meets_ttft && c.meets_tpot);
        assert_eq!((c.offered, c.completed), (1600, 1600));
        // Every transfer is the whole fixed prompt over the link.
        let isl = p.mean_isl.round();
        let want = isl * 131_072.0 / 50e9 * 1e3;
        assert!((c.kv_transfer_mean_ms - want).abs() < 1e-6, "{c:?}");
    }
    // The analytic best (1 + 2) saturates in the replay: seconds of queueing.
    let best = r.best.as_ref().unwrap();
    assert_eq!((best.n_prefill, best.n_decode), (1, 2));
    assert!(!e.verified[0].meets && !e.verified[0].meets_ttft);
    assert!(e.verified[0].ttft_p99_ms.unwrap() > 5000.0);
    // 1 + 3 meets; 2 + 2 has the prefill but too little decode.
    assert!(e.verified[1].meets && !e.verified[2].meets);
    let rec = r.recommended.as_ref().unwrap();
    assert_eq!((rec.n_prefill, rec.n_decode), (1, 3));
    assert_eq!(r.recommended_by, "engine");
}

#[test]
fn no_recommendation_when_no_replayed_split_meets_the_slos() {
    // 100 ms passes the analytic TTFT (62 ms) but no replay's P99.
    let r = run(&params(100.0), &verify());
    let e = r.engine.as_ref().unwrap();
    assert!(r.best.is_some());
    assert!(e.verified.iter().all(|c| !c.meets && !c.meets_ttft));
    assert!(r.recommended.is_none() && r.recommended_by == "engine");
}

#[test]
fn the_engine_check_is_deterministic() {
    let (p, v) = (params(500.0), verify());
    let a = serde_json::to_string(&run(&p, &v)).unwrap();
    let b = serde_json::to_string(&run(&p, &v)).unwrap();
    assert_eq!(a, b);
    let mut other = v;
    other.seed = 7;
    assert_ne!(a, serde_json::to_string(&run(&p, &other)).unwrap());
}

#[test]
fn bad_settings_name_their_flag() {
    let g = resolve_profile(PROFILE).unwrap();
    let bare = resolve_profile("h100").unwrap();
    let p = params(500.0);
    let err = |pre: &dyn aisim_core::profile::GpuProfile,
               dec: &dyn aisim_core::profile::GpuProfile,
               v: DisaggVerifyParams| {
        disagg_verified(pre, dec, &p, &v).unwrap_err().to_string()
    };
    let with = |f: fn(&mut DisaggVerifyParams)| {
        let mut v = verify();
        f(&mut v);
        v
    };
    let cases: [(DisaggVerifyParams, &str); 5] = [
        (with(|v| v.top = 0), "--verify-top"),
        (with(|v| v.n_req = 0), "--n-sim-req"),
        (with(|v| v.kv_transfer_gb_s = 0.0), "--kv-transfer-gb-s"),
        (
            with(|v| v.kv_transfer_latency_ms = -1.0),
            "--kv-transfer-latency-ms",
        ),
        (
            with(|v| v.kv_bytes_per_token = Some(0)),
            "--kv-bytes-per-token",
        ),
    ];
    for (v, flag) in cases {
        let e = err(g.as_ref(), g.as_ref(), v);
        assert!(e.contains(flag), "{flag}: {e}");
    }
    let other_model = resolve_profile("h100/llama-3.1-70b/tp4").unwrap();
    let e = err(g.as_ref(), other_model.as_ref(), verify());
    assert!(
        e.contains("--gpu-decode")
            && e.contains(
                "serves llama-3.1-70b, but --gpu-prefill h100/llama-3.1-8b/tp1 serves llama-3.1-8b"
            ),
        "{e}"
    );
    let e = err(bare.as_ref(), bare.as_ref(), verify());
    assert!(
        e.contains("--kv-bytes-per-token") && e.contains("no model"),
        "{e}"
    );
    // Given the bytes, a profile without a model replays.
    let v = with(|v| v.kv_bytes_per_token = Some(131_072));
    let mut p = p;
    p.lam = 5.0;
    let r = disagg_verified(bare.as_ref(), bare.as_ref(), &p, &v);
    assert!(r.is_ok(), "{:?}", r.err());
}

/// H100 prefill, A100 decode: the decode pool replays on the A100's own
/// model and KV, so it needs more decode workers than the analytic split
/// (and than the same run on H100s alone) says.
#[test]
fn different_prefill_and_decode_profiles_replay_each_pool_on_its_own_gpus() {
    let h100 = resolve_profile(PROFILE).unwrap();
    let a100 = resolve_profile("a100/llama-3.1-8b/tp1").unwrap();
    let p = DisaggParams {
        max_decode: 6,
        ..params(500.0)
    };
    let v = DisaggVerifyParams { top: 4, ..verify() };
    let r = disagg_verified(h100.as_ref(), a100.as_ref(), &p, &v).unwrap();
    let e = r.engine.as_ref().unwrap();
    assert_eq!(e.kv_bytes_per_token, 131_072, "one model, its KV bytes");
    let splits: Vec<(u64, u64)> = e
        .verified
        .iter()
        .map(|c| (c.split.n_prefill, c.split.n_decode))
        .collect();
    assert_eq!(splits, [(1, 3), (1, 4), (2, 3), (1, 5)], "cheapest first");
    for c in &e.verified {
        let ttft = c.ttft_p99_ms.unwrap_or(f64::INFINITY);
        let tpot = c.tpot_p99_ms.unwrap_or(f64::INFINITY);
        assert_eq!(c.meets_ttft, ttft <= p.slo_ttft_ms, "{c:?}");
        assert_eq!(c.meets_tpot, tpot <= p.slo_tpot_ms, "{c:?}");
        assert_eq!(c.meets, c.meets_ttft && c.meets_tpot);
        assert_eq!((c.offered, c.completed), (1600, 1600));
    }
    let meets: Vec<bool> = e.verified.iter().map(|c| c.meets).collect();
    assert_eq!(meets, [false, false, false, true]);
    let best = r.best.as_ref().unwrap();
    assert_eq!((best.n_prefill, best.n_decode), (1, 3), "the analytic best");
    let rec = r.recommended.as_ref().unwrap();
    assert_eq!(
        (rec.n_prefill, rec.n_decode),
        (1, 5),
        "the cheapest that met"
    );
    assert_eq!(r.recommended_by, "engine");
    // On H100s alone, 1 + 3 meets: the decode profile made the difference.
    let same = run(&p, &v);
    let rec = same.recommended.as_ref().unwrap();
    assert_eq!((rec.n_prefill, rec.n_decode), (1, 3));
    // The A100 decode pool's TPOT is its own, not the H100's.
    let tpot = |r: &DisaggReport| r.engine.as_ref().unwrap().verified[2].tpot_p99_ms;
    assert_ne!(tpot(&r), tpot(&same));
}

/// The batch model (the default) prices a prefill GPU's compute once for
/// the prompts it packs, so its figures are the engine's: on the split
/// above its cheapest split meets the SLOs in the replay, each replayed
/// split's P99 TTFT is within a fifth of its analytic one (the KV transfer
/// and the router's choices are not in the model), and its TPOT within a
/// tenth of the replay's median.
#[test]
fn the_batch_model_agrees_with_the_engine_check() {
    let p = DisaggParams {
        model: SizingModel::Batch,
        ..params(500.0)
    };
    let v = DisaggVerifyParams { top: 5, ..verify() };
    let r = run(&p, &v);
    let best = r.best.as_ref().unwrap();
    assert_eq!((best.n_prefill, best.n_decode), (1, 2));
    let rec = r.recommended.as_ref().unwrap();
    assert_eq!((rec.n_prefill, rec.n_decode), (1, 2), "the engine agrees");
    let e = r.engine.as_ref().unwrap();
    assert_eq!(e.verified.len(), 5);
    for c in &e.verified {
        assert!(c.meets, "{c:?}");
        let ttft = c.ttft_p99_ms.unwrap();
        let tpot = c.tpot_p50_ms.unwrap();
        assert!((c.split.ttft_ms - ttft).abs() <= 0.2 * ttft, "{c:?}");
        assert!((c.split.tpot_ms - tpot).abs() <= 0.1 * tpot, "{c:?}");
    }
    // More prefill GPUs, a lower TTFT; more decode GPUs, a lower TPOT.
    let at = |n_p, n_d| {
        r.points
            .iter()
            .find(|s| (s.n_prefill, s.n_decode) == (n_p, n_d))
            .unwrap_or_else(|| panic!("{n_p} + {n_d} in {:?}", r.points))
    };
    assert!(at(2, 2).ttft_ms < at(1, 2).ttft_ms);
    assert!(at(1, 3).tpot_ms < at(1, 2).tpot_ms);
}
