//! The instances of one pool in the fleet DES: materialized on first use and
//! kept in an ordered set by pick key. `InstancePick`, how one is picked,
//! lives here beside the pool that applies it (the DES re-exports it): the
//! DES drives the pool, so the pool names nothing of the DES.

use std::collections::{BTreeSet, VecDeque};

use serde::Serialize;

/// How an instance is picked inside a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum InstancePick {
    /// Shortest queue (then fewest running), ties to the lowest index.
    #[default]
    ShortestQueue,
    /// Fewest running + queued.
    LeastLoaded,
    /// In turn.
    RoundRobin,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Active {
    pub(super) req: usize,
    pub(super) blocks: u64,
    pub(super) total: u64,
    pub(super) epoch: u32,
}

#[derive(Debug)]
pub(super) struct Instance {
    pub(super) queue: VecDeque<usize>,
    pub(super) active: Vec<Active>,
    pub(super) kv_free: u64,
    pub(super) busy_slot_s: f64,
    pub(super) last_change: f64,
}

/// Instance choice key: the smallest is picked (ties to the lowest index).
pub(super) type PickKey = (usize, usize, usize);

/// One pool's instances, materialized on first use: an untouched instance is
/// idle and identical to any other, so a pool of ten million GPUs costs what
/// the instances its requests reach cost. Touched instances sit in an ordered
/// set by pick key, so a pick is `O(log n)`, never a scan of idle instances.
#[derive(Debug)]
pub(super) struct PoolState {
    pub(super) insts: Vec<Instance>,
    pub(super) n: u64,
    pub(super) kv_blocks: u64,
    pub(super) order: BTreeSet<PickKey>,
    pub(super) active: u64,
    pub(super) queued: u64,
    pub(super) rr: usize,
    pub(super) first_arrival_s: Option<f64>,
    pub(super) first_measured_s: Option<f64>,
    pub(super) last_done_s: f64,
}

impl PoolState {
    /// `n` idle instances of `kv_blocks` KV blocks each, none materialized.
    pub(super) fn new(n: u64, kv_blocks: u64) -> PoolState {
        PoolState {
            insts: Vec::new(),
            n,
            kv_blocks,
            order: BTreeSet::new(),
            active: 0,
            queued: 0,
            rr: 0,
            first_arrival_s: None,
            first_measured_s: None,
            last_done_s: 0.0,
        }
    }

    pub(super) fn key(pick: InstancePick, inst: &Instance, i: usize) -> PickKey {
        match pick {
            InstancePick::LeastLoaded => (inst.queue.len() + inst.active.len(), 0, i),
            _ => (inst.queue.len(), inst.active.len(), i),
        }
    }

    /// The instance to send the next request to.
    pub(super) fn pick(&mut self, pick: InstancePick) -> usize {
        let untouched = (self.insts.len() as u64) < self.n;
        match pick {
            InstancePick::RoundRobin => {
                self.rr = (self.rr + 1) % (self.n.max(1) as usize);
                self.rr
            }
            _ => {
                let fresh = (0, 0, self.insts.len());
                match self.order.first() {
                    Some(&k) if !untouched || k <= fresh => k.2,
                    _ => self.insts.len(),
                }
            }
        }
    }

    /// Makes instance `i` exist (and every one below it).
    pub(super) fn materialize(&mut self, pick: InstancePick, i: usize) {
        while self.insts.len() <= i {
            let inst = Instance {
                queue: VecDeque::new(),
                active: Vec::new(),
                kv_free: self.kv_blocks,
                busy_slot_s: 0.0,
                last_change: 0.0,
            };
            self.order.insert(Self::key(pick, &inst, self.insts.len()));
            self.insts.push(inst);
        }
    }

    /// Takes instance `i` out of the pick order before it changes.
    pub(super) fn detach(&mut self, pick: InstancePick, i: usize) {
        let inst = &self.insts[i];
        self.order.remove(&Self::key(pick, inst, i));
        self.active -= inst.active.len() as u64;
        self.queued -= inst.queue.len() as u64;
    }

    /// Puts instance `i` back after it changed.
    pub(super) fn attach(&mut self, pick: InstancePick, i: usize) {
        let inst = &self.insts[i];
        self.order.insert(Self::key(pick, inst, i));
        self.active += inst.active.len() as u64;
        self.queued += inst.queue.len() as u64;
    }
}
