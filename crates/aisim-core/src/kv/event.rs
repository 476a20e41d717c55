//! KV events a pool publishes at the end of the pass that caused them, so a
//! cache-aware router can track what each worker holds. An event names a
//! run of pages the pool files together, so that its cost follows what the
//! pool stores (a block, or a piece of one trace block's pages), not the
//! page count: at SGLang's one-token pages a prompt's event is one per
//! trace block, not one per token.

use crate::block_hash::{page_hash, BlockHash, Naming, Span};

/// One change to the set of pages a pool can serve by hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvEvent {
    /// These pages became findable.
    Stored(PageRun),
    /// These pages were evicted and are no longer findable.
    Removed(PageRun),
}

impl KvEvent {
    /// Whether the pages became findable (else they were evicted).
    pub fn is_stored(self) -> bool {
        matches!(self, KvEvent::Stored(_))
    }

    /// The pages it is about.
    pub fn run(self) -> PageRun {
        match self {
            KvEvent::Stored(r) | KvEvent::Removed(r) => r,
        }
    }

    /// The same change told page by page, each page as a block named by its
    /// `BlockHash` (what the radix cache published before its events were
    /// runs): for a consumer that indexes pages, at O(pages).
    pub fn per_page(self) -> impl Iterator<Item = KvEvent> {
        let stored = self.is_stored();
        self.run().hashes().map(move |h| {
            if stored {
                KvEvent::Stored(h.into())
            } else {
                KvEvent::Removed(h.into())
            }
        })
    }
}

/// `len` consecutive pages under one `key`, lane numbers `first ..
/// first + len`: the pages of one run are named alike, so an index can
/// file the run under its key in one step.
///
/// - A *block* (vLLM's and TensorRT-LLM's block pool, which files each
///   block by its hash): `key` is the hash's group, `first` its lane, `len`
///   1.
/// - A *span run* (SGLang's radix cache): pages ending inside one trace
///   block, `key` naming the chain of trace blocks up to it and `first`
///   counting its pages from the trace block's start; or a request's own
///   (decoded) pages under a key private to it. A rank holds a span's
///   pages from its first on, so a span run is stored after the pages
///   before it, and removed from its end.
///
/// `hashes` names each page by the `BlockHash` the block pool gives it
/// (`Request::block_hashes` at the pool's page size), for a consumer that
/// indexes pages one by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageRun {
    key: u64,
    first: u32,
    len: u32,
    naming: Naming,
}

impl PageRun {
    /// The pages' key: a block's hash group, or a span's chain (or private
    /// key). Runs of one key are pages of one trace block (one request).
    pub fn key(&self) -> u64 {
        self.key
    }

    /// The lane number of the first page under the key.
    pub fn first(&self) -> u32 {
        self.first
    }

    /// Pages in the run (at least 1).
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the run has no page (never, for a pool's event).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether it is one block of a block pool, filed by its hash group:
    /// holders of one group may hold any subset of its lanes, while a span
    /// is held from its first page on.
    pub fn is_block(&self) -> bool {
        self.naming == Naming::Block
    }

    /// Its first `n` pages (all of them if it has fewer).
    pub fn head(self, n: u32) -> PageRun {
        PageRun {
            len: self.len.min(n),
            ..self
        }
    }

    /// Its pages from the `n`th on (none if it has no more).
    pub fn skip(self, n: u32) -> PageRun {
        let n = n.min(self.len);
        PageRun {
            first: self.first + n,
            len: self.len - n,
            ..self
        }
    }

    /// Each page's `BlockHash`, first page first.
    pub fn hashes(self) -> impl Iterator<Item = BlockHash> {
        (self.first..self.first + self.len).map(move |n| page_hash(self.naming, self.key, n))
    }

    /// Pages `from .. from + len` of `span`.
    pub(crate) fn of_span(span: &Span, from: u32, len: u32) -> PageRun {
        PageRun {
            key: span.key,
            first: span.lane + (from - span.start),
            len,
            naming: span.naming(),
        }
    }
}

impl From<BlockHash> for PageRun {
    /// The one block with this hash.
    fn from(h: BlockHash) -> PageRun {
        PageRun {
            key: h.group(),
            first: h.lane() as u32,
            len: 1,
            naming: Naming::Block,
        }
    }
}

/// A pool's event log: `None` while capture is off, so nobody pays for
/// events nobody reads.
#[derive(Debug, Default)]
pub(crate) struct EventLog(Option<Vec<KvEvent>>);

impl EventLog {
    /// Starts (or stops) recording.
    pub fn capture(&mut self, on: bool) {
        self.0 = if on { Some(Vec::new()) } else { None };
    }

    /// Moves the events recorded since the last call into `out`.
    pub fn drain(&mut self, out: &mut Vec<KvEvent>) {
        if let Some(ev) = &mut self.0 {
            out.append(ev);
        }
    }

    /// The log to push to, while capture is on.
    #[inline]
    pub fn on(&mut self) -> Option<&mut Vec<KvEvent>> {
        self.0.as_mut()
    }
}
