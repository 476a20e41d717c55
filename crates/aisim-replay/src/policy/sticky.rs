//! `sticky`: session affinity. A session's later turns go where its first
//! turn went (the cache holding its history is there); the first turn, and
//! every request without a session, is placed by an inner policy. One entry
//! per session seen (16 bytes), kept to the end of the run: the router
//! cannot know a session's last turn.

use std::collections::HashMap;

use aisim_core::hashing::IntHashBuilder;
use aisim_core::kv::KvEvent;
use aisim_core::Request;

use super::{Placement, PlacementPolicy, WorkerView};

/// Session affinity over an inner policy.
pub struct Sticky {
    inner: Box<dyn PlacementPolicy>,
    name: String,
    /// Session id → (worker, rank) of its first turn.
    homes: HashMap<u64, (u32, u32), IntHashBuilder>,
}

impl Sticky {
    /// Sticky placement whose first turns `inner` places.
    pub fn new(inner: Box<dyn PlacementPolicy>) -> Sticky {
        Sticky {
            name: format!("sticky({})", inner.name()),
            inner,
            homes: HashMap::default(),
        }
    }
}

impl PlacementPolicy for Sticky {
    fn name(&self) -> &str {
        &self.name
    }

    fn place(&mut self, req: &Request, view: &dyn WorkerView) -> Placement {
        let Some(session) = req.session else {
            return self.inner.place(req, view);
        };
        if let Some(&(worker, rank)) = self.homes.get(&session.0) {
            // A home that stopped taking requests (draining) loses the
            // session to the inner policy, which gives it a new home.
            if view.accepting(worker) {
                return Placement::at(worker, rank);
            }
        }
        let p = self.inner.place(req, view);
        self.homes.insert(session.0, (p.worker, p.rank));
        p
    }

    fn wants_kv_events(&self) -> bool {
        self.inner.wants_kv_events()
    }

    fn on_kv_events(&mut self, worker: u32, rank: u32, events: &[KvEvent]) {
        self.inner.on_kv_events(worker, rank, events);
    }
}
