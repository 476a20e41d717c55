//! The event heap: future events ordered by `(at, phase, stable id, seq_no)`, so
//! simultaneous events apply in a fixed, documented order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use aisim_core::SimTime;

/// What happens. The variant order is the phase order at equal times: pass
/// completions, then workers becoming ready, then transfer completions, then
/// session turns becoming due, then scaling ticks, then timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventKind {
    /// A worker's pass ends.
    PassComplete {
        /// The worker.
        worker: u32,
    },
    /// A worker started by a scaling decision becomes ready.
    WorkerReady {
        /// The worker.
        worker: u32,
    },
    /// A KV transfer from a prefill to a decode worker ends.
    TransferComplete {
        /// Index into the runtime's transfer table.
        transfer: u32,
    },
    /// A session's next turn is due for dispatch.
    TurnDue {
        /// Index into the runtime's pending-turn table.
        slot: u32,
    },
    /// A scaling policy tick.
    ScalingTick,
    /// A request's timeout deadline.
    Timeout {
        /// The request.
        request: u64,
    },
}

/// One scheduled event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SimulationEvent {
    /// When it happens.
    pub at: SimTime,
    /// What happens (its variant is the phase, its payload the stable id).
    pub kind: EventKind,
    /// Insertion counter: the last tie-break.
    pub seq_no: u64,
}

/// A min-heap of events.
#[derive(Debug, Default)]
pub struct EventHeap {
    heap: BinaryHeap<Reverse<SimulationEvent>>,
    seq: u64,
}

impl EventHeap {
    /// Schedules `kind` at `at`.
    pub fn push(&mut self, at: SimTime, kind: EventKind) {
        self.seq += 1;
        self.heap.push(Reverse(SimulationEvent {
            at,
            kind,
            seq_no: self.seq,
        }));
    }

    /// The earliest event.
    pub fn peek(&self) -> Option<&SimulationEvent> {
        self.heap.peek().map(|r| &r.0)
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|r| r.0.at)
    }

    /// Removes the earliest event if it is due at or before `now`.
    pub fn pop_due(&mut self, now: SimTime) -> Option<SimulationEvent> {
        if self.peek_time()? <= now {
            self.heap.pop().map(|r| r.0)
        } else {
            None
        }
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_phase_then_id_then_insertion() {
        let mut h = EventHeap::default();
        h.push(SimTime(5), EventKind::Timeout { request: 1 });
        h.push(SimTime(5), EventKind::PassComplete { worker: 3 });
        h.push(SimTime(5), EventKind::PassComplete { worker: 1 });
        h.push(SimTime(2), EventKind::ScalingTick);
        let order: Vec<EventKind> =
            std::iter::from_fn(|| h.pop_due(SimTime(10)).map(|e| e.kind)).collect();
        assert_eq!(
            order,
            vec![
                EventKind::ScalingTick,
                EventKind::PassComplete { worker: 1 },
                EventKind::PassComplete { worker: 3 },
                EventKind::Timeout { request: 1 }
            ]
        );
    }
}
