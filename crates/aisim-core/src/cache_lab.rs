//! The cache lab (report.md): a deterministic check of prefix-cache
//! accounting with no clock, no clients and no engine timing. Request `i`
//! (0-based) reads the one-block prefix of session `i mod s` from an LRU
//! cache of `C` entries; it hits when that prefix is resident.
//!
//! The cache is the engines' own [`KvBlockPool`] (C blocks, each one
//! session's prefix hashed by the engines' [`prompt_block_hashes`]), served
//! as a scheduler serves a request: look the prefix up, take the cached block
//! or compute a fresh one, register it, release it when the request ends.

use serde::{Deserialize, Serialize};

use crate::block_hash::prompt_block_hashes;
use crate::kv::KvBlockPool;
use crate::BlockHash;

/// Most requests a lab plays back.
pub const PLAYBACK_CAP: u64 = 4096;

/// Requests a lab starts at unless told otherwise.
pub const START_REQUESTS: u64 = 16;

/// A lab parameter out of range, named as on the command line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheLabError {
    /// A count that the lab cannot play.
    #[error("{param} {value}: {reason}")]
    OutOfRange {
        /// The flag that set it (`--capacity`, `--sessions`, `--requests`, `--steps`).
        param: &'static str,
        /// The value given.
        value: u64,
        /// Why, and what is allowed.
        reason: String,
    },
}

impl CacheLabError {
    /// Whether this is aisim's bug rather than the user's input: never.
    pub fn is_internal(&self) -> bool {
        match self {
            CacheLabError::OutOfRange { .. } => false,
        }
    }
}

/// The lab's state: the cache after `requests` requests, and their hits.
#[derive(Debug)]
pub struct CacheLab {
    capacity: u64,
    sessions: u64,
    pool: KvBlockPool,
    requests: u64,
    hits: u64,
}

/// The pool standing for a cache of `capacity` entries. Playback never
/// stores more than `PLAYBACK_CAP` prefixes, so a larger cache holds every
/// one of them as a pool of `PLAYBACK_CAP` blocks does: the same hits, at
/// bounded memory for any `capacity`.
fn pool_of(capacity: u64) -> KvBlockPool {
    KvBlockPool::new(capacity.min(PLAYBACK_CAP) as u32)
}

/// Session `session`'s one-block prefix, as the engines hash a prompt: one
/// trace block with that id, one token per block.
fn prefix_of(session: u64) -> BlockHash {
    prompt_block_hashes(&[session], 1, 1, 1)[0]
}

impl CacheLab {
    /// An empty cache of `capacity` entries (at least 1) shared by `sessions`
    /// sessions (at least 1), before any request.
    pub fn new(capacity: u64, sessions: u64) -> Result<CacheLab, CacheLabError> {
        check_at_least_one("--capacity", capacity, "the cache holds at least 1 entry")?;
        check_at_least_one("--sessions", sessions, "at least 1 session reads the cache")?;
        Ok(CacheLab {
            capacity,
            sessions,
            pool: pool_of(capacity),
            requests: 0,
            hits: 0,
        })
    }

    /// Cache entries.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Sessions.
    pub fn sessions(&self) -> u64 {
        self.sessions
    }
    /// Requests played so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }
    /// Of which hit.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Plays the next request; whether it hit. Refused at the playback cap.
    pub fn step(&mut self) -> Result<bool, CacheLabError> {
        if self.requests >= PLAYBACK_CAP {
            return Err(CacheLabError::OutOfRange {
                param: "--steps",
                value: 1,
                reason: format!("playback stops at {PLAYBACK_CAP} requests, and it is there"),
            });
        }
        let prefix = prefix_of(self.requests % self.sessions);
        let hit = self.pool.longest_prefix(std::iter::once(prefix), 1).blocks == 1;
        let block = if hit {
            self.pool.acquire_cached(prefix)
        } else {
            self.pool.allocate()
        };
        // Every request releases its block before the next one, so the one
        // it needs is always there: cached, free, or the LRU one to evict.
        let block = block.expect("a block is free or evictable between requests");
        if !hit {
            self.pool.register(block, prefix);
        }
        self.pool.release(block);
        self.requests += 1;
        self.hits += u64::from(hit);
        Ok(hit)
    }

    /// Empties the cache and the counts (capacity and sessions stay).
    pub fn reset(&mut self) {
        self.pool = pool_of(self.capacity);
        self.requests = 0;
        self.hits = 0;
    }

    /// Resets, then plays `requests` requests (at most the playback cap).
    pub fn play(&mut self, requests: u64) -> Result<(), CacheLabError> {
        if requests > PLAYBACK_CAP {
            return Err(past_cap("--requests", requests));
        }
        self.reset();
        for _ in 0..requests {
            self.step()?;
        }
        Ok(())
    }

    /// A new capacity: the request count stays, recomputed from a reset cache.
    pub fn set_capacity(&mut self, capacity: u64) -> Result<(), CacheLabError> {
        let lab = CacheLab::new(capacity, self.sessions)?;
        self.replay_as(lab)
    }

    /// A new session count: the request count stays, recomputed from a reset cache.
    pub fn set_sessions(&mut self, sessions: u64) -> Result<(), CacheLabError> {
        let lab = CacheLab::new(self.capacity, sessions)?;
        self.replay_as(lab)
    }

    fn replay_as(&mut self, mut lab: CacheLab) -> Result<(), CacheLabError> {
        lab.play(self.requests)?;
        *self = lab;
        Ok(())
    }
}

/// One invocation of the lab: `requests` played from an empty cache, then
/// `steps` more one at a time (report.md's `aisim cache-lab`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLabRun {
    /// Cache entries.
    pub capacity: u64,
    /// Sessions.
    pub sessions: u64,
    /// Requests played before the steps (`--requests`).
    pub requests: u64,
    /// Of which hit.
    pub hits: u64,
    /// The state after each step (empty without steps): the last is the end.
    pub steps: Vec<CacheLabStep>,
}

/// The lab after one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLabStep {
    /// Requests played.
    pub requests: u64,
    /// Of which hit.
    pub hits: u64,
}

impl CacheLabRun {
    /// Plays `requests` from an empty cache, then `steps` more; both are
    /// checked against the playback cap before anything runs.
    pub fn play(
        capacity: u64,
        sessions: u64,
        requests: u64,
        steps: u64,
    ) -> Result<CacheLabRun, CacheLabError> {
        let mut lab = CacheLab::new(capacity, sessions)?;
        // `play` refuses `requests` past the cap; the steps left after them:
        let room = PLAYBACK_CAP.saturating_sub(requests);
        if requests <= PLAYBACK_CAP && steps > room {
            return Err(CacheLabError::OutOfRange {
                param: "--steps",
                value: steps,
                reason: format!(
                    "playback stops at {PLAYBACK_CAP} requests: from {requests}, at most {room} steps"
                ),
            });
        }
        lab.play(requests)?;
        let start = (lab.requests(), lab.hits());
        let mut taken = Vec::with_capacity(steps as usize);
        for _ in 0..steps {
            lab.step()?;
            taken.push(CacheLabStep {
                requests: lab.requests(),
                hits: lab.hits(),
            });
        }
        Ok(CacheLabRun {
            capacity,
            sessions,
            requests: start.0,
            hits: start.1,
            steps: taken,
        })
    }
}

fn check_at_least_one(param: &'static str, value: u64, reason: &str) -> Result<(), CacheLabError> {
    if value == 0 {
        return Err(CacheLabError::OutOfRange {
            param,
            value,
            reason: reason.to_string(),
        });
    }
    Ok(())
}

fn past_cap(param: &'static str, requests: u64) -> CacheLabError {
    CacheLabError::OutOfRange {
        param,
        value: requests,
        reason: format!("playback stops at {PLAYBACK_CAP} requests"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn played(capacity: u64, sessions: u64, requests: u64) -> CacheLab {
        let mut lab = CacheLab::new(capacity, sessions).unwrap();
        lab.play(requests).unwrap();
        lab
    }

    #[test]
    fn four_entries_four_sessions_hit_12_of_16_and_14_of_18_after_two_steps() {
        let mut lab = played(4, 4, START_REQUESTS);
        assert_eq!((lab.requests(), lab.hits()), (16, 12));
        assert!(lab.step().unwrap());
        assert!(lab.step().unwrap());
        assert_eq!((lab.requests(), lab.hits()), (18, 14));
        // Reset reproduces them.
        lab.reset();
        assert_eq!((lab.requests(), lab.hits()), (0, 0));
        lab.play(16).unwrap();
        assert_eq!(lab.hits(), 12);
        lab.step().unwrap();
        lab.step().unwrap();
        assert_eq!((lab.requests(), lab.hits()), (18, 14));
    }

    #[test]
    fn playback_stops_at_the_cap() {
        let mut lab = played(1, 1, PLAYBACK_CAP);
        assert_eq!(
            (lab.requests(), lab.hits()),
            (PLAYBACK_CAP, PLAYBACK_CAP - 1)
        );
        let err = lab.step().unwrap_err();
        assert_eq!(
            err.to_string(),
            "--steps 1: playback stops at 4096 requests, and it is there"
        );
        assert_eq!(lab.requests(), PLAYBACK_CAP, "a refused step plays nothing");
        let err = lab.play(PLAYBACK_CAP + 1).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--requests 4097: playback stops at 4096 requests"
        );
        assert!(!err.is_internal());
        // A run is checked whole before it plays.
        let err = CacheLabRun::play(4, 4, 4000, 97).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--steps 97: playback stops at 4096 requests: from 4000, at most 96 steps"
        );
        let full = CacheLabRun::play(4, 4, 4000, 96).unwrap();
        assert_eq!(full.steps.last().unwrap().requests, PLAYBACK_CAP);
        let err = CacheLabRun::play(4, 4, 5000, 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--requests 5000: playback stops at 4096 requests"
        );
        let huge = CacheLabRun::play(4, 4, 0, u64::MAX).unwrap_err();
        assert!(
            huge.to_string()
                .starts_with("--steps 18446744073709551615: "),
            "{huge}"
        );
    }

    #[test]
    fn a_run_lists_every_step() {
        let run = CacheLabRun::play(4, 4, START_REQUESTS, 2).unwrap();
        assert_eq!((run.requests, run.hits), (16, 12));
        assert_eq!(
            run.steps,
            [
                CacheLabStep {
                    requests: 17,
                    hits: 13
                },
                CacheLabStep {
                    requests: 18,
                    hits: 14
                }
            ]
        );
        assert_eq!(
            CacheLabRun::play(4, 4, START_REQUESTS, 2).unwrap(),
            run,
            "deterministic"
        );
    }

    #[test]
    fn an_empty_cache_or_no_session_is_refused() {
        assert_eq!(
            CacheLab::new(0, 4).unwrap_err().to_string(),
            "--capacity 0: the cache holds at least 1 entry"
        );
        assert_eq!(
            CacheLab::new(4, 0).unwrap_err().to_string(),
            "--sessions 0: at least 1 session reads the cache"
        );
    }

    #[test]
    fn changing_c_or_s_keeps_the_request_count_from_a_reset_cache() {
        let mut lab = played(4, 4, 18);
        lab.set_capacity(3).unwrap();
        // Three entries for a cycle of four sessions: LRU evicts each prefix
        // just before it comes back.
        assert_eq!((lab.capacity(), lab.requests(), lab.hits()), (3, 18, 0));
        lab.set_sessions(2).unwrap();
        assert_eq!((lab.sessions(), lab.requests(), lab.hits()), (2, 18, 16));
        assert!(lab.set_capacity(0).is_err());
        assert_eq!(
            (lab.capacity(), lab.hits()),
            (3, 16),
            "a refused change changes nothing"
        );
    }

    #[test]
    fn a_cache_beyond_the_cap_holds_everything_at_bounded_memory() {
        let lab = played(u64::MAX, 5000, PLAYBACK_CAP);
        assert_eq!(lab.hits(), 0, "every session read once");
        let lab = played(u64::MAX, 7, PLAYBACK_CAP);
        assert_eq!(lab.hits(), PLAYBACK_CAP - 7);
    }

    proptest! {
        /// A cyclic pattern under LRU: all but the first read of each session
        /// hit when the cache holds them all, none otherwise.
        #[test]
        fn cyclic_reads_hit_exactly_when_every_session_fits(
            capacity in 1u64..40, sessions in 1u64..40, requests in 0u64..300,
        ) {
            let lab = played(capacity, sessions, requests);
            let expected = if capacity >= sessions { requests.saturating_sub(sessions) } else { 0 };
            prop_assert_eq!(lab.hits(), expected);
        }
    }
}
