//! Requests as the engines see them: lengths plus a prefix identity, never tokens.

use crate::block_hash::{
    extend_prompt_block_hashes, private_span, prompt_block_hash_iter, prompt_block_hashes,
    prompt_span_iter, BlockHash, Span,
};
use crate::kv::PageRun;
use crate::time::SimTime;

/// Identity of a request, stable across the whole run (trace order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct RequestId(pub u64);

/// Identity of a multi-turn session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(pub u64);

/// One request: fixed work (`output_length` tokens will be generated) and a prefix
/// identity given as trace block ids of `trace_block_size` tokens each.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Stable id.
    pub id: RequestId,
    /// Planned arrival on the virtual clock.
    pub arrival: SimTime,
    /// Prompt tokens.
    pub input_length: u32,
    /// Tokens to generate; 0 makes the request prefill-only work.
    pub output_length: u32,
    /// Trace block ids: token `p` of the prompt carries `hash_ids[p / trace_block_size]`.
    /// Empty means the prompt shares nothing.
    pub hash_ids: Vec<u64>,
    /// Tokens per trace block (512 for Mooncake, 16 for the public Qwen traces).
    pub trace_block_size: u32,
    /// Session the request belongs to, if any.
    pub session: Option<SessionId>,
}

impl Request {
    /// A request with no prefix identity and no session.
    pub fn new(id: u64, arrival: SimTime, input_length: u32, output_length: u32) -> Request {
        Request {
            id: RequestId(id),
            arrival,
            input_length,
            output_length,
            hash_ids: Vec::new(),
            trace_block_size: 512,
            session: None,
        }
    }

    /// The same request with trace block ids.
    pub fn with_hash_ids(mut self, hash_ids: Vec<u64>, trace_block_size: u32) -> Request {
        self.hash_ids = hash_ids;
        self.trace_block_size = trace_block_size;
        self
    }

    /// The chained hashes of the prompt's complete engine blocks of `block_size`
    /// tokens. O(engine blocks + trace blocks).
    pub fn block_hashes(&self, block_size: u32) -> Vec<BlockHash> {
        prompt_block_hashes(
            &self.hash_ids,
            self.trace_block_size,
            self.input_length,
            block_size,
        )
    }

    /// Appends the same hashes to `out` (a reused vector keeps its capacity).
    pub fn extend_block_hashes(&self, out: &mut Vec<BlockHash>, block_size: u32) {
        extend_prompt_block_hashes(
            out,
            &self.hash_ids,
            self.trace_block_size,
            self.input_length,
            block_size,
        );
    }

    /// The same hashes, computed as they are taken (no allocation; a prefix
    /// lookup that stops at its first miss hashes no further).
    pub fn block_hash_iter(&self, block_size: u32) -> impl Iterator<Item = BlockHash> + '_ {
        prompt_block_hash_iter(
            &self.hash_ids,
            self.trace_block_size,
            self.input_length,
            block_size,
        )
    }

    /// The same pages as runs, one per trace block a page of `block_size`
    /// tokens ends in (`PageRun`s named as the radix cache's KV events name
    /// them), made as they are taken: O(trace blocks) whatever the page size.
    pub fn page_runs(&self, block_size: u32) -> impl Iterator<Item = PageRun> + '_ {
        prompt_span_iter(
            &self.hash_ids,
            self.trace_block_size,
            self.input_length,
            block_size,
        )
        .map(|s| PageRun::of_span(&s, s.start, s.end - s.start))
    }

    /// Its spans as the radix cache names its pages: its prompt's (none
    /// without prefix caching), then one open-ended span private to it.
    /// It lives here, not in `block_hash`: the hashing sits below requests
    /// and names none.
    pub(crate) fn span_iter(
        &self,
        block_size: u32,
        prefix_caching: bool,
    ) -> impl Iterator<Item = Span> + '_ {
        let ids: &[u64] = if prefix_caching { &self.hash_ids } else { &[] };
        let mut shared = 0;
        prompt_span_iter(ids, self.trace_block_size, self.input_length, block_size)
            .map(Some)
            .chain(std::iter::once(None))
            .map(move |s| match s {
                Some(s) => {
                    shared = s.end;
                    s
                }
                None => private_span(self.id.0, shared),
            })
    }
}
