//! The built-in policies on crafted worker states.

use std::collections::BTreeMap;

use aisim_core::kv::KvEvent;
use aisim_core::{Request, RequestId, SessionId, SimTime};
use proptest::prelude::*;

use super::test_view::{load, CraftedView};
use super::*;

/// A prompt of `blocks` trace blocks of 16 tokens, ids from `first`.
fn prompt(id: u64, first: u64, blocks: u64) -> Request {
    Request {
        id: RequestId(id),
        arrival: SimTime::ZERO,
        input_length: blocks as u32 * 16,
        output_length: 1,
        hash_ids: (first..first + blocks).collect(),
        trace_block_size: 16,
        session: None,
    }
}

fn kv(temperature: f64, seed: u64) -> KvRouter {
    KvRouter::new(KvRouterConfig {
        block_size: 16,
        prefill_load_scale: 1.0,
        temperature,
        seed,
    })
}

/// Tells `router` that (worker, rank) holds the first `blocks` blocks of `req`.
fn holds(router: &mut KvRouter, worker: u32, rank: u32, req: &Request, blocks: usize) {
    let events: Vec<KvEvent> = req.block_hashes(16)[..blocks]
        .iter()
        .map(|&h| KvEvent::Stored(h.into()))
        .collect();
    router.on_kv_events(worker, rank, &events);
}

#[test]
fn kv_sends_a_request_to_the_rank_holding_its_prefix_when_loads_are_equal() {
    let req = prompt(0, 100, 10);
    let view = CraftedView::new(4, 2)
        .with(0, 0, load(1, 0, 5, 0), 0)
        .with(1, 0, load(1, 0, 5, 0), 0)
        .with(1, 1, load(1, 0, 5, 0), 0)
        .with(2, 0, load(1, 0, 5, 0), 0)
        .with(2, 1, load(1, 0, 5, 0), 0)
        .with(0, 1, load(1, 0, 5, 0), 0)
        .with(3, 0, load(1, 0, 5, 0), 0)
        .with(3, 1, load(1, 0, 5, 0), 0);
    let mut router = kv(0.0, 1);
    holds(&mut router, 2, 1, &req, 6);
    holds(&mut router, 3, 0, &req, 2);
    let p = router.place(&req, &view);
    assert_eq!((p.worker, p.rank), (2, 1));
    assert_eq!(p.expected_cached_tokens, Some(6 * 16));
    // The prompt's last block is never matched: the engine recomputes its
    // last token, so the router expects at most 9 of its 10 blocks.
    holds(&mut router, 0, 0, &req, 10);
    let p = router.place(&req, &view);
    assert_eq!(
        (p.worker, p.rank, p.expected_cached_tokens),
        (0, 0, Some(9 * 16))
    );
}

#[test]
fn kv_cost_weighs_blocks_to_prefill_against_active_and_queued_blocks() {
    let req = prompt(0, 0, 10);
    // Worker 0 holds 8 of the 10 blocks but has 8 blocks active and 48
    // queued prompt tokens (3 blocks): cost 1 × 2 + 8 + 3 = 13. Worker 1
    // holds nothing and is idle: 10. Unused worker 2: 10 as well, and
    // worker 1 is lower.
    let view = CraftedView::new(3, 1)
        .with(0, 0, load(1, 1, 8, 48), 0)
        .with(1, 0, load(0, 0, 0, 0), 0);
    let mut router = kv(0.0, 1);
    holds(&mut router, 0, 0, &req, 8);
    assert_eq!(router.place(&req, &view).worker, 1);
    // At prefill_load_scale 2 the blocks to prefill weigh double: 4 + 11 =
    // 15 against 20.
    let mut heavy = KvRouter::new(KvRouterConfig {
        prefill_load_scale: 2.0,
        ..KvRouterConfig {
            block_size: 16,
            prefill_load_scale: 1.0,
            temperature: 0.0,
            seed: 1,
        }
    });
    holds(&mut heavy, 0, 0, &req, 8);
    let p = heavy.place(&req, &view);
    assert_eq!((p.worker, p.expected_cached_tokens), (0, Some(8 * 16)));
}

#[test]
fn kv_follows_removed_events() {
    let req = prompt(0, 0, 4);
    let view =
        CraftedView::new(2, 1)
            .with(0, 0, load(0, 0, 0, 0), 0)
            .with(1, 0, load(0, 0, 0, 0), 0);
    let mut router = kv(0.0, 1);
    holds(&mut router, 1, 0, &req, 3);
    assert_eq!(router.place(&req, &view).worker, 1);
    let first = req.block_hashes(16)[0];
    router.on_kv_events(1, 0, &[KvEvent::Removed(first.into())]);
    let p = router.place(&req, &view);
    assert_eq!((p.worker, p.expected_cached_tokens), (0, Some(0)));
}

#[test]
fn kv_temperature_samples_by_the_softmax_of_costs_deterministically() {
    let req = prompt(0, 0, 10);
    // Costs: worker 0 holds 9 blocks (cost 1), worker 1 nothing (10),
    // unused worker 2 (10). At T = 1 the weights are exp(0) = 1 and
    // exp(−1) twice.
    let view =
        CraftedView::new(3, 1)
            .with(0, 0, load(0, 0, 0, 0), 0)
            .with(1, 0, load(0, 0, 0, 0), 0);
    let draws = |seed| {
        let mut router = kv(1.0, seed);
        holds(&mut router, 0, 0, &req, 9);
        (0..6000)
            .map(|_| router.place(&req, &view).worker)
            .collect::<Vec<_>>()
    };
    let a = draws(3);
    assert_eq!(a, draws(3), "the same seed draws the same");
    assert_ne!(a, draws(4), "another seed draws otherwise");
    let share = |w| a.iter().filter(|&&x| x == w).count() as f64 / a.len() as f64;
    let e = (-1.0f64).exp();
    let want = [
        1.0 / (1.0 + 2.0 * e),
        e / (1.0 + 2.0 * e),
        e / (1.0 + 2.0 * e),
    ];
    for (w, p) in want.iter().enumerate() {
        // 6,000 draws: a standard error under 0.7 points.
        assert!(
            (share(w as u32) - p).abs() < 0.03,
            "worker {w}: {} vs {p}",
            share(w as u32)
        );
    }
}

#[test]
fn kv_temperature_weighs_the_unused_stand_in_by_the_workers_it_stands_for() {
    // Worker 0 (used, idle) and the unused 1..9 all cost the same, so each
    // of the ten is equally likely: the stand-in (worker 1) weighs 9
    // against worker 0's 1.
    let view = CraftedView::new(10, 1).with(0, 0, load(0, 0, 0, 0), 0);
    let mut router = kv(0.5, 9);
    let req = prompt(0, 0, 4);
    let n = 5000;
    let on_0 = (0..n)
        .filter(|_| router.place(&req, &view).worker == 0)
        .count() as f64;
    assert!((on_0 / n as f64 - 0.1).abs() < 0.02, "{on_0}");
}

#[test]
fn lpwl_picks_the_least_prefill_work_left() {
    let req = prompt(0, 0, 64); // 1,024 prompt tokens
                                // Scores: (0,0) 2,000 + 1,024; (0,1) 100 + (1,024 − 1,000) = 124;
                                // (1,0) 0 + (1,024 − 512) = 512; (1,1) 1,500 + 1,024; unused worker 2:
                                // 1,024.
    let view = CraftedView::new(3, 2)
        .with(0, 0, load(1, 2, 10, 2000), 0)
        .with(0, 1, load(4, 0, 10, 100), 1000)
        .with(1, 0, load(0, 0, 0, 0), 512)
        .with(1, 1, load(1, 1, 0, 1500), 0);
    let mut lpwl = LeastPrefillWorkLeft::default();
    assert_eq!(lpwl.place(&req, &view), Placement::at(0, 1));
}

#[test]
fn lpwl_ties_go_to_fewer_requests_then_round_robin() {
    let req = prompt(0, 0, 4); // 64 tokens
                               // Equal scores (64 + 0) everywhere; (0,0) and (2,0) have fewer requests.
    let view = CraftedView::new(3, 1)
        .with(0, 0, load(1, 0, 0, 0), 0)
        .with(1, 0, load(2, 0, 0, 0), 0)
        .with(2, 0, load(1, 0, 0, 0), 0);
    let mut lpwl = LeastPrefillWorkLeft::default();
    let picks: Vec<u32> = (0..4).map(|_| lpwl.place(&req, &view).worker).collect();
    assert_eq!(picks, vec![0, 2, 0, 2], "fewer requests, then in turn");
    // All equal: every worker in turn.
    let view = CraftedView::new(3, 1)
        .with(0, 0, load(1, 0, 0, 0), 0)
        .with(1, 0, load(1, 0, 0, 0), 0)
        .with(2, 0, load(1, 0, 0, 0), 0);
    let picks: Vec<u32> = (0..5).map(|_| lpwl.place(&req, &view).worker).collect();
    assert_eq!(picks, vec![0, 1, 2, 0, 1]);
}

proptest! {
    /// On any state, lpwl's pick has the lowest score, and among the
    /// lowest the fewest requests.
    #[test]
    fn lpwl_pick_minimises_score_then_requests(
        states in prop::collection::vec((0u32..3, 0u32..3, 0u64..3000, 0u32..2000), 1..8),
        input in 1u32..2000,
    ) {
        let n = states.len() as u32 + 1;
        let mut view = CraftedView::new(n, 1);
        for (w, &(running, waiting, pending, cached)) in states.iter().enumerate() {
            view = view.with(w as u32, 0, load(running, waiting, 0, pending), cached);
        }
        let req = Request::new(0, SimTime::ZERO, input, 1);
        let p = LeastPrefillWorkLeft::default().place(&req, &view);
        let key = |w: u32| {
            let l = view.load(w, 0);
            (l.pending_prefill_tokens + u64::from(input.saturating_sub(view.cached_prefix_tokens(w, 0, &req))), l.running + l.waiting)
        };
        for w in 0..n {
            prop_assert!(key(p.worker) <= key(w), "{:?} beats {:?}", key(w), key(p.worker));
        }
    }
}

#[test]
fn sticky_keeps_every_session_on_its_first_turns_rank() {
    let view = CraftedView::new(5, 2);
    let mut sticky = Sticky::new(Box::new(RoundRobin::default()));
    assert_eq!(sticky.name(), "sticky(round_robin)");
    let mut home: BTreeMap<u64, Placement> = BTreeMap::new();
    for k in 0..200u64 {
        let session = (k * 7) % 13;
        let mut req = Request::new(k, SimTime::ZERO, 10, 1);
        req.session = Some(SessionId(session));
        let p = sticky.place(&req, &view);
        assert_eq!(*home.entry(session).or_insert(p), p, "session {session}");
    }
    assert_eq!(home.len(), 13);
    let workers: std::collections::BTreeSet<u32> = home.values().map(|p| p.worker).collect();
    assert_eq!(workers.len(), 5, "first turns spread by the inner policy");
    // Without a session, every request is the inner policy's.
    let req = Request::new(999, SimTime::ZERO, 10, 1);
    let a = sticky.place(&req, &view);
    let b = sticky.place(&req, &view);
    assert_ne!(a, b);
}

#[test]
fn sticky_asks_for_kv_events_when_its_inner_policy_does() {
    assert!(!Sticky::new(Box::new(RoundRobin::default())).wants_kv_events());
    assert!(Sticky::new(Box::new(kv(0.0, 1))).wants_kv_events());
    assert!(!RoundRobin::default().wants_kv_events());
    assert!(!LeastPrefillWorkLeft::default().wants_kv_events());
}

/// A policy that places past the topology.
struct OutOfRange(Placement);

impl PlacementPolicy for OutOfRange {
    fn name(&self) -> &str {
        "out_of_range"
    }
    fn place(&mut self, _req: &Request, _view: &dyn WorkerView) -> Placement {
        self.0
    }
}

#[test]
fn an_out_of_range_placement_is_an_internal_error_not_a_panic() {
    let view = CraftedView::new(4, 2);
    let req = Request::new(0, SimTime::ZERO, 10, 1);
    for bad in [
        Placement::at(4, 0),
        Placement::at(0, 2),
        Placement::at(u32::MAX, u32::MAX),
    ] {
        let e = place_checked(&mut OutOfRange(bad), &req, &view, "workers").unwrap_err();
        assert!(e.is_internal(), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("out_of_range") && text.contains("4 workers of 2 ranks"),
            "{text}"
        );
    }
    assert_eq!(
        place_checked(&mut OutOfRange(Placement::at(3, 1)), &req, &view, "workers").unwrap(),
        Placement::at(3, 1)
    );
}

#[test]
fn sticky_rehomes_a_session_whose_home_stopped_accepting() {
    let mut sticky = Sticky::new(Box::new(RoundRobin::default()));
    let mut req = Request::new(0, SimTime::ZERO, 10, 1);
    req.session = Some(SessionId(5));
    let open = CraftedView::new(3, 1);
    assert_eq!(sticky.place(&req, &open).worker, 0);
    // Worker 0 drains: the session's next turn gets a new home, and keeps it.
    let draining = CraftedView::new(3, 1).closed(0);
    let new_home = sticky.place(&req, &draining).worker;
    assert_ne!(new_home, 0);
    assert_eq!(sticky.place(&req, &open).worker, new_home);
}
