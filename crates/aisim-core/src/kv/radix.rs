//! `RadixCache`: SGLang's radix prefix cache over spans of pages.
//!
//! A node is a run of pages of one span (one trace block's pages, or a
//! request's private pages), filed under its span key and first page; its
//! children start where it ends. A request holds a path from the root (it
//! locks its deepest node, and every node on the path counts it) plus pages
//! not yet in the tree. Unlocked nodes are cached, least recently released
//! first; eviction takes pages from the end of the oldest, which is always a
//! leaf (a node is released after its children, by everyone holding them).
//! Every operation costs O(spans touched), never O(pages): at one-token
//! pages a prompt of 512-token trace blocks costs what it does at 512.

use crate::block_hash::Span;
use crate::hashing::IntHashBuilder;
use crate::kv::event::EventLog;
use crate::kv::{KvEvent, PageRun, PrefixMatch};
use std::collections::HashMap;

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    span: Span,
    /// Pages `span.start .. span.start + len`: `span.end` is not kept up to
    /// date (a node is a piece of a span).
    len: u32,
    parent: u32,
    children: u32,
    /// Requests whose path passes through it; 0: cached, in the LRU list.
    refs: u32,
    prev: u32,
    next: u32,
}

/// What one request holds: a path in the tree and pages outside it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RadixHold {
    /// Its deepest node, `None` for an empty path.
    node: Option<u32>,
    /// Pages on its path.
    pub(crate) tree: u32,
    /// Pages it holds that are not in the tree (computed, not inserted).
    pub(crate) extra: u32,
}

impl RadixHold {
    /// Pages held.
    pub(crate) fn pages(&self) -> u32 {
        self.tree + self.extra
    }
}

/// A rank's pool of `capacity` pages with a radix prefix cache.
#[derive(Debug)]
pub struct RadixCache {
    capacity: u32,
    /// Pages holding nothing.
    free: u32,
    /// Pages of unlocked nodes.
    cached: u32,
    nodes: Vec<Node>,
    spare: Vec<u32>,
    /// (span key, first page) -> node.
    index: HashMap<(u64, u32), u32, IntHashBuilder>,
    lru_head: u32,
    lru_tail: u32,
    events: EventLog,
}

impl RadixCache {
    /// A cache of `capacity` free pages.
    pub fn new(capacity: u32) -> RadixCache {
        RadixCache {
            capacity,
            free: capacity,
            cached: 0,
            nodes: Vec::new(),
            spare: Vec::new(),
            index: HashMap::default(),
            lru_head: NIL,
            lru_tail: NIL,
            events: EventLog::default(),
        }
    }

    /// Total pages.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }
    /// Pages held by requests.
    pub fn in_use_pages(&self) -> u32 {
        self.capacity - self.free - self.cached
    }
    /// Pages cached and unlocked (evictable).
    pub fn cached_pages(&self) -> u32 {
        self.cached
    }
    /// Pages holding nothing.
    pub fn free_pages(&self) -> u32 {
        self.free
    }
    /// Pages an allocation can get: free plus evictable.
    pub fn available_pages(&self) -> u32 {
        self.free + self.cached
    }

    /// Records (or stops recording) KV events, one per run of a span's
    /// pages stored or evicted (`PageRun`).
    pub fn capture_events(&mut self, on: bool) {
        self.events.capture(on);
    }

    /// Moves the events recorded since the last call into `out`.
    pub fn drain_events(&mut self, out: &mut Vec<KvEvent>) {
        self.events.drain(out);
    }

    /// The node whose first page is page `j` of `span`, if cached or held.
    #[inline]
    fn child(&self, span: &Span, j: u32) -> Option<u32> {
        self.index.get(&(span.key, j)).copied()
    }

    /// The longest cached run of the pages `spans` name (contiguous from page
    /// 0, the last one open-ended), looking at no more than `max` pages.
    /// Taking the spans as they are made, it allocates nothing.
    pub(crate) fn longest_prefix(
        &self,
        spans: impl IntoIterator<Item = Span>,
        max: u32,
    ) -> PrefixMatch {
        let mut m = PrefixMatch::default();
        self.walk(spans, max, |node, take| {
            m.blocks += take;
            if node.refs == 0 {
                m.evictable += take;
            }
        });
        m
    }

    /// Walks the cached prefix of `spans` up to `max` pages, root first,
    /// calling `visit` with each node and how many of its pages match.
    #[inline]
    fn walk(
        &self,
        spans: impl IntoIterator<Item = Span>,
        max: u32,
        mut visit: impl FnMut(&Node, u32),
    ) {
        let mut spans = spans.into_iter();
        let mut current = spans.next();
        let mut j = 0;
        while j < max {
            while current.is_some_and(|s| s.end <= j) {
                current = spans.next();
            }
            let Some(span) = current else { return };
            let Some(n) = self.child(&span, j) else {
                return;
            };
            let node = &self.nodes[n as usize];
            let take = node.len.min(span.end - j).min(max - j);
            visit(node, take);
            if take < node.len {
                return;
            }
            j += take;
        }
    }

    /// Locks the first `pages` of the prefix of `spans` for `hold` (empty):
    /// a prefix hit, as `longest_prefix` found it.
    pub(crate) fn lock_prefix(&mut self, hold: &mut RadixHold, spans: &[Span], pages: u32) {
        debug_assert_eq!(hold.pages(), 0, "a prefix is locked by an empty hold");
        let mut j = 0;
        let mut si = 0;
        while j < pages {
            while spans[si].end <= j {
                si += 1;
            }
            let n = self
                .child(&spans[si], j)
                .expect("prefix vanished between lookup and admission");
            let len = self.nodes[n as usize].len;
            let take = len.min(pages - j);
            let n = if take < len { self.split(n, take) } else { n };
            self.lock(n);
            hold.node = Some(n);
            j += take;
        }
        hold.tree = pages;
    }

    /// Adds `n` pages to `hold`, evicting the oldest cached ones as needed;
    /// false (taking nothing) when fewer are available.
    #[inline]
    pub(crate) fn allocate(&mut self, hold: &mut RadixHold, n: u32) -> bool {
        if n > self.available_pages() {
            return false;
        }
        let from_free = n.min(self.free);
        self.free -= from_free;
        if from_free < n {
            self.evict(n - from_free);
        }
        hold.extra += n;
        true
    }

    /// Inserts `hold`'s pages up to page `upto` (of those `spans` name) into
    /// the tree, extending its path. A page already there is SGLang's
    /// `RadixCache.insert` finding it: the hold's own copy is freed and it
    /// locks the cached one (`cache_unfinished_req` re-matches after inserting).
    pub(crate) fn insert(&mut self, hold: &mut RadixHold, spans: &[Span], upto: u32) {
        debug_assert!(upto <= hold.pages());
        let mut j = hold.tree;
        let mut si = 0;
        while j < upto {
            while spans[si].end <= j {
                si += 1;
            }
            let span = spans[si];
            let end = upto.min(span.end);
            if let Some(n) = self.child(&span, j) {
                let len = self.nodes[n as usize].len;
                let take = len.min(end - j);
                let n = if take < len { self.split(n, take) } else { n };
                self.lock(n);
                hold.node = Some(n);
                hold.extra -= take;
                self.free += take;
                hold.tree += take;
                j += take;
                continue;
            }
            let len = end - j;
            self.record(&span, j, len, true);
            // The hold's own leaf of this span grows in place; otherwise a
            // new leaf under its deepest node.
            match hold.node {
                Some(d)
                    if {
                        let d = &self.nodes[d as usize];
                        d.span.key == span.key
                            && d.span.start + d.len == j
                            && d.refs == 1
                            && d.children == 0
                    } =>
                {
                    self.nodes[d as usize].len += len;
                }
                parent => {
                    let n = self.new_node(Node {
                        span: Span { start: j, ..span },
                        len,
                        parent: parent.unwrap_or(NIL),
                        children: 0,
                        refs: 1,
                        prev: NIL,
                        next: NIL,
                    });
                    hold.node = Some(n);
                }
            }
            hold.extra -= len;
            hold.tree += len;
            j = end;
        }
    }

    /// Gives back everything `hold` holds: pages outside the tree are freed,
    /// its path is unlocked from its deepest node up (so a path's tail is
    /// older, and evicted before its head).
    pub(crate) fn release(&mut self, hold: &mut RadixHold) {
        self.free += hold.extra;
        let mut cur = hold.node.unwrap_or(NIL);
        while cur != NIL {
            let node = &mut self.nodes[cur as usize];
            debug_assert!(node.refs > 0, "release of an unlocked node");
            node.refs -= 1;
            let parent = node.parent;
            if node.refs == 0 {
                self.cached += node.len;
                self.lru_push_back(cur);
            }
            cur = parent;
        }
        *hold = RadixHold::default();
    }

    fn lock(&mut self, n: u32) {
        let node = &mut self.nodes[n as usize];
        node.refs += 1;
        if node.refs == 1 {
            self.cached -= node.len;
            self.lru_unlink(n);
        }
    }

    /// Splits node `n` after its first `head` pages; returns the new head
    /// node (the parent). `n` keeps the tail, its children and its holders'
    /// references; a cached head sits just after it in LRU order (a node's
    /// head pages were released after its tail).
    fn split(&mut self, n: u32, head: u32) -> u32 {
        let x = self.nodes[n as usize];
        debug_assert!(0 < head && head < x.len);
        let h = self.new_node(Node {
            len: head,
            children: 0, // `new_node` counted it under x's parent; x moves under it
            ..x
        });
        self.nodes[h as usize].children = 1;
        if x.parent != NIL {
            self.nodes[x.parent as usize].children -= 1; // x left it for h
        }
        let tail_start = x.span.start + head;
        let node = &mut self.nodes[n as usize];
        node.span.start = tail_start;
        node.span.lane += head;
        node.len -= head;
        node.parent = h;
        self.index.insert((x.span.key, tail_start), n);
        if x.refs == 0 {
            self.lru_insert_after(n, h);
        }
        h
    }

    /// Takes `n` cached pages from the end of the oldest nodes.
    fn evict(&mut self, mut n: u32) {
        while n > 0 {
            let v = self.lru_head;
            debug_assert!(v != NIL, "availability checked");
            let node = self.nodes[v as usize];
            debug_assert_eq!(node.children, 0, "the oldest cached node is a leaf");
            let take = n.min(node.len);
            let left = node.len - take;
            self.record(&node.span, node.span.start + left, take, false);
            self.cached -= take;
            n -= take;
            if left > 0 {
                self.nodes[v as usize].len = left;
            } else {
                self.lru_unlink(v);
                self.index.remove(&(node.span.key, node.span.start));
                if node.parent != NIL {
                    self.nodes[node.parent as usize].children -= 1;
                }
                self.spare.push(v);
            }
        }
    }

    fn new_node(&mut self, node: Node) -> u32 {
        if node.parent != NIL {
            self.nodes[node.parent as usize].children += 1;
        }
        let id = match self.spare.pop() {
            Some(id) => {
                self.nodes[id as usize] = node;
                id
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() as u32 - 1
            }
        };
        self.index.insert((node.span.key, node.span.start), id);
        id
    }

    /// Records pages `from .. from + len` of `span` as one event, when
    /// capture is on: the run the tree files, whatever its page count.
    #[inline]
    fn record(&mut self, span: &Span, from: u32, len: u32, stored: bool) {
        if let Some(ev) = self.events.on() {
            let run = PageRun::of_span(span, from, len);
            ev.push(if stored {
                KvEvent::Stored(run)
            } else {
                KvEvent::Removed(run)
            });
        }
    }

    fn lru_unlink(&mut self, n: u32) {
        let Node { prev, next, .. } = self.nodes[n as usize];
        if prev == NIL {
            self.lru_head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            self.lru_tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
        let node = &mut self.nodes[n as usize];
        node.prev = NIL;
        node.next = NIL;
    }

    fn lru_push_back(&mut self, n: u32) {
        let tail = self.lru_tail;
        self.lru_insert_after(tail, n);
    }

    /// Links `n` into the LRU list after `at` (`NIL` only for an empty list).
    fn lru_insert_after(&mut self, at: u32, n: u32) {
        let next = if at == NIL {
            NIL
        } else {
            self.nodes[at as usize].next
        };
        {
            let node = &mut self.nodes[n as usize];
            node.prev = at;
            node.next = next;
        }
        if at == NIL {
            self.lru_head = n;
        } else {
            self.nodes[at as usize].next = n;
        }
        if next == NIL {
            self.lru_tail = n;
        } else {
            self.nodes[next as usize].prev = n;
        }
    }

    /// Checks the accounting and the tree: counts add up, the index names
    /// every live node, the LRU list holds exactly the unlocked nodes, and
    /// no cached node is older than a cached child of its own (so eviction
    /// only ever shortens leaves).
    pub fn check_invariants(&self) -> Result<(), String> {
        let live: Vec<u32> = self.index.values().copied().collect();
        // LRU position of each cached node, by id.
        let mut position = vec![u32::MAX; self.nodes.len()];
        let mut walked_nodes = 0u32;
        let (mut cur, mut prev, mut walked) = (self.lru_head, NIL, 0u64);
        while cur != NIL {
            let n = &self.nodes[cur as usize];
            if n.refs != 0 || n.prev != prev {
                return Err(format!("node {cur} in the LRU list is locked or mislinked"));
            }
            position[cur as usize] = walked_nodes;
            walked_nodes += 1;
            walked += n.len as u64;
            if walked_nodes as usize > live.len() {
                return Err("LRU list has a cycle or a dead node".into());
            }
            prev = cur;
            cur = n.next;
        }
        if walked != self.cached as u64 {
            return Err(format!(
                "cached {} but the LRU list holds {walked}",
                self.cached
            ));
        }
        let mut children = vec![0u32; self.nodes.len()];
        for &c in &live {
            let p = self.nodes[c as usize].parent;
            if p != NIL {
                children[p as usize] += 1;
            }
        }
        let mut locked = 0u64;
        for (&(key, start), &id) in &self.index {
            let n = &self.nodes[id as usize];
            if n.span.key != key || n.span.start != start || n.len == 0 {
                return Err(format!(
                    "index entry ({key}, {start}) names node {id} wrongly"
                ));
            }
            let children = children[id as usize];
            if children != n.children {
                return Err(format!(
                    "node {id} counts {} children, has {children}",
                    n.children
                ));
            }
            if n.refs > 0 {
                locked += n.len as u64;
            } else if position[id as usize] == u32::MAX {
                return Err(format!("unlocked node {id} is not in the LRU list"));
            }
            if n.parent != NIL {
                let p = &self.nodes[n.parent as usize];
                if p.span.start + p.len != n.span.start || p.refs < n.refs {
                    return Err(format!("node {id} does not continue its parent"));
                }
                if p.refs == 0 && position[n.parent as usize] < position[id as usize] {
                    return Err(format!(
                        "cached node {} is older than its child {id}",
                        n.parent
                    ));
                }
            }
        }
        if locked > self.in_use_pages() as u64
            || self.free as u64 + self.cached as u64 > self.capacity as u64
        {
            return Err(format!(
                "locked {locked}, free {}, cached {} do not fit capacity {}",
                self.free, self.cached, self.capacity
            ));
        }
        Ok(())
    }
}

// The tests name a request's pages through the scheduler's `PageStore`,
// which is implemented above this file: they live in a file of their own so
// that this one does not import its user back.
#[cfg(test)]
mod tests;
