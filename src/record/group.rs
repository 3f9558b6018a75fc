//! `--group-by`: responses grouped by a value read from each response (a header, a JSON field,
//! the status), with figures per value.
//!
//! # The table
//!
//! Each worker owns one [`GroupTable`] per `--group-by` key and records into it from its own
//! thread; the tables are merged once at the end ([`GroupTable::merge`], and per second the same
//! way if a live view wants it), exactly like the other recorders. Per value it keeps what the
//! main recorder keeps per group: responses (and attempts), errors by kind, status counts, and an
//! HDR latency histogram with volley's fixed bounds (so values merge and compare exactly).
//!
//! **Cardinality is bounded.** The first [`MAX_VALUES`] distinct values a table sees get a row
//! each; every later value is counted in the row `(other)`. Exchanges without a value (no
//! response, the header absent, the JSON field missing) are counted in the row `(none)`. Values
//! are compared on their first [`MAX_VALUE_BYTES`] bytes. The merged table keeps the same bound:
//! a value that only a later worker kept, once the merged table is full, goes to `(other)` (merge
//! order is worker order, so the result is deterministic).
//!
//! **Distinct values seen** are counted exactly up to [`DISTINCT_CAP`]: each worker keeps the
//! 64-bit FNV-1a hashes of the values it saw in a fixed open-addressing table, and merging is the
//! union of the sets. Beyond the cap the count is a lower bound ([`Distinct::saturated`]). Two
//! different values colliding on 64 bits is negligible at these sizes.
//!
//! # The hot path
//!
//! Recording a value already seen costs one hash of at most [`MAX_VALUE_BYTES`] bytes, one probe
//! of the hash table (which maps hashes to rows), one comparison of the bytes, and the same
//! counter and histogram updates as the main recorder: no allocation, no lock. Allocation happens
//! only when a value gets its row, at most `MAX_VALUES + 2` times per table for the whole run
//! (a row's histogram is about 190 KiB, so a full table holds about 10 MiB per worker: rows are
//! made as values appear, never up front).
//!
//! # Extraction (how the engine gets the value; not built yet)
//!
//! - `header:NAME`: the HTTP/1.1 reader already has the whole response head in its read buffer
//!   and parses it with `httparse` into a stack array of header slices (`MAX_HEADERS`) before it
//!   reads the body. The value is found there by a case-insensitive name comparison and handed to
//!   [`GroupTable::record`] as a `&[u8]` borrowed from the read buffer: nothing is copied or
//!   allocated, unlike a `proto::message::Capture` with `headers: true`, which builds an
//!   `http::HeaderMap` per response. So the prepared request carries the wanted header names
//!   (lower case, fixed at plan time) and the exchange returns the value's byte range in the head
//!   buffer (or the worker records before the buffer is reused). Over HTTP/2 the `h2` crate
//!   hands back an `http::HeaderMap` anyway: a `get(name)` on it, no copy.
//! - `status`: the status code, formatted into a stack buffer (`200`): no extraction at all.
//! - `json:$.path`: needs the body, so it needs a capture of the body (`Capture::body_limit`, the
//!   1 MiB cap of plans) and a parse of it with `serde_json` into a borrowed
//!   `serde_json::value::RawValue`-free walk of the path: this one allocates per response (the
//!   captured body), like checks on the body do today, and is documented as such.
//!
//! An exchange that failed before a response head has no value: [`GroupTable::record`] with
//! `None` counts it in `(none)`.

use hdrhistogram::Histogram;

use super::recorder::{HIST_LOW_US, new_histogram};
use crate::record::error_kind::ErrorKind;

/// Distinct values that get their own row; later ones go to `(other)`.
pub const MAX_VALUES: usize = 50;
/// Bytes of a value that are kept and compared; longer values are cut to this.
pub const MAX_VALUE_BYTES: usize = 128;
/// Distinct values counted exactly; beyond, [`Distinct::saturated`].
pub const DISTINCT_CAP: usize = 4096;
/// Slots of the hash set of distinct values (a power of two, twice the cap: probes stay short).
const DISTINCT_SLOTS: usize = 2 * DISTINCT_CAP;
/// Status codes tracked individually (0..=999), as in the main recorder.
const STATUS_SLOTS: usize = 1000;

/// One row: the figures of one value (or of `(other)`, `(none)`).
#[derive(Debug, Clone)]
pub struct GroupRow {
    /// Exchanges recorded in this row: responses and failed attempts.
    pub exchanges: u64,
    /// Of them, those that got a response (a status).
    pub responses: u64,
    /// Failures by [`ErrorKind`] index (transport errors, and 4xx/5xx as in the main recorder).
    pub errors: [u64; ErrorKind::COUNT],
    /// Responses by status code.
    pub status: Box<[u64]>,
    /// Latency of the responses, µs (same definition as the main latency histogram).
    pub latency: Histogram<u64>,
}

impl GroupRow {
    fn new() -> Self {
        Self {
            exchanges: 0,
            responses: 0,
            errors: [0; ErrorKind::COUNT],
            status: vec![0; STATUS_SLOTS].into_boxed_slice(),
            latency: new_histogram(),
        }
    }

    #[inline]
    fn record(&mut self, latency_us: u64, status: Option<u16>, error: Option<ErrorKind>) {
        self.exchanges += 1;
        if let Some(status) = status {
            self.responses += 1;
            self.latency.saturating_record(latency_us.max(HIST_LOW_US));
            if let Some(slot) = self.status.get_mut(usize::from(status)) {
                *slot += 1;
            }
        }
        if let Some(kind) = error {
            self.errors[kind.index()] += 1;
        }
    }

    fn merge(&mut self, o: &GroupRow) {
        self.exchanges += o.exchanges;
        self.responses += o.responses;
        for (a, b) in self.errors.iter_mut().zip(&o.errors) {
            *a += b;
        }
        for (a, b) in self.status.iter_mut().zip(o.status.iter()) {
            *a += b;
        }
        let _ = self.latency.add(&o.latency);
    }

    /// Failures of every kind.
    pub fn error_count(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Status codes seen, with counts, ascending.
    pub fn statuses(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.status
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(code, n)| (code as u16, *n))
    }
}

/// How many distinct values a table has seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Distinct {
    /// Distinct values counted (exact unless saturated).
    pub count: u64,
    /// More than [`DISTINCT_CAP`] distinct values were seen: `count` is a lower bound.
    pub saturated: bool,
}

/// The hashes of the distinct values seen, each with its row (`NO_ROW` past [`MAX_VALUES`]).
#[derive(Debug, Clone)]
struct HashSet {
    /// `(hash, row)`; hash 0 marks an empty slot (a value hashing to 0 is stored as 1).
    slots: Box<[(u64, u16)]>,
    len: usize,
    saturated: bool,
}

const NO_ROW: u16 = u16::MAX;

impl HashSet {
    fn new() -> Self {
        Self {
            slots: vec![(0, NO_ROW); DISTINCT_SLOTS].into_boxed_slice(),
            len: 0,
            saturated: false,
        }
    }

    /// The slot holding `hash`, or the empty slot where it belongs.
    #[inline]
    fn probe(&self, hash: u64) -> usize {
        let mask = DISTINCT_SLOTS - 1;
        let mut i = (hash as usize) & mask;
        loop {
            let h = self.slots[i].0;
            if h == hash || h == 0 {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// The row of `hash`, inserting it with `row` when new (unless the set is full).
    /// Returns `(row, new)`.
    #[inline]
    fn find_or_insert(&mut self, hash: u64, row: impl FnOnce() -> u16) -> (u16, bool) {
        let i = self.probe(hash);
        if self.slots[i].0 == hash {
            return (self.slots[i].1, false);
        }
        let row = row();
        if self.len < DISTINCT_CAP {
            self.slots[i] = (hash, row);
            self.len += 1;
        } else {
            self.saturated = true;
        }
        (row, true)
    }
}

/// FNV-1a, 64 bits: the same hash on every worker (so sets merge), and never 0.
#[inline]
fn hash(value: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in value {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h.max(1)
}

/// Responses grouped by value, for one `--group-by` key (see the module documentation).
#[derive(Debug, Clone)]
pub struct GroupTable {
    /// Kept values, in the order first seen; `rows[i]` is the row of `values[i]`.
    values: Vec<Box<[u8]>>,
    rows: Vec<GroupRow>,
    /// Values past [`MAX_VALUES`].
    other: Option<Box<GroupRow>>,
    /// Exchanges without a value.
    none: Option<Box<GroupRow>>,
    seen: HashSet,
}

impl Default for GroupTable {
    fn default() -> Self {
        Self::new()
    }
}

impl GroupTable {
    /// An empty table (its hash set, 128 KiB, is allocated now; rows as values appear).
    pub fn new() -> Self {
        Self {
            values: Vec::with_capacity(MAX_VALUES),
            rows: Vec::with_capacity(MAX_VALUES),
            other: None,
            none: None,
            seen: HashSet::new(),
        }
    }

    /// Records one exchange: `value` read from its response (`None`: no value), its latency
    /// (µs, counted only with a status), its status and its failure.
    #[inline]
    pub fn record(
        &mut self,
        value: Option<&[u8]>,
        latency_us: u64,
        status: Option<u16>,
        error: Option<ErrorKind>,
    ) {
        let row = match value {
            None => self.none.get_or_insert_with(|| Box::new(GroupRow::new())),
            Some(value) => self.row_of(&value[..value.len().min(MAX_VALUE_BYTES)]),
        };
        row.record(latency_us, status, error);
    }

    /// The row of `value` (already cut to [`MAX_VALUE_BYTES`]): its own, a new one, or `(other)`.
    #[inline]
    fn row_of(&mut self, value: &[u8]) -> &mut GroupRow {
        let kept = self.values.len();
        let (row, new) = self.seen.find_or_insert(hash(value), || {
            if kept < MAX_VALUES {
                kept as u16
            } else {
                NO_ROW
            }
        });
        let row = usize::from(row);
        if new && row == kept {
            // The only allocations: a row for each of the first MAX_VALUES values.
            self.values.push(value.into());
            self.rows.push(GroupRow::new());
        }
        match self.rows.get_mut(row) {
            // A 64-bit collision with a kept value: counted as other rather than mixed in.
            Some(r) if *self.values[row] == *value => r,
            _ => self.other.get_or_insert_with(|| Box::new(GroupRow::new())),
        }
    }

    /// Adds another table (another worker's) into this one, keeping the bound on rows.
    pub fn merge(&mut self, o: &GroupTable) {
        for (value, row) in o.values.iter().zip(&o.rows) {
            let own = self.merge_row(value);
            own.merge(row);
        }
        for (mine, theirs) in [(&mut self.other, &o.other), (&mut self.none, &o.none)] {
            if let Some(theirs) = theirs {
                mine.get_or_insert_with(|| Box::new(GroupRow::new()))
                    .merge(theirs);
            }
        }
        self.seen.saturated |= o.seen.saturated;
        for &(h, _) in o.seen.slots.iter().filter(|(h, _)| *h != 0) {
            let i = self.seen.probe(h);
            if self.seen.slots[i].0 == 0 {
                if self.seen.len < DISTINCT_CAP {
                    let row = self.index_of(h).map_or(NO_ROW, |r| r as u16);
                    self.seen.slots[i] = (h, row);
                    self.seen.len += 1;
                } else {
                    self.seen.saturated = true;
                }
            }
        }
    }

    /// The row a merged value goes to: its own (made if there is room) or `(other)`.
    fn merge_row(&mut self, value: &[u8]) -> &mut GroupRow {
        let at = match self.values.iter().position(|v| **v == *value) {
            Some(i) => Some(i),
            None if self.values.len() < MAX_VALUES => {
                self.values.push(value.into());
                self.rows.push(GroupRow::new());
                Some(self.values.len() - 1)
            }
            None => None,
        };
        let h = hash(value);
        let i = self.seen.probe(h);
        if self.seen.slots[i].0 == h {
            self.seen.slots[i].1 = at.map_or(NO_ROW, |r| r as u16);
        }
        match at {
            Some(i) => &mut self.rows[i],
            None => self.other.get_or_insert_with(|| Box::new(GroupRow::new())),
        }
    }

    fn index_of(&self, h: u64) -> Option<usize> {
        self.values.iter().position(|v| hash(v) == h)
    }

    /// The kept values and their rows, in the order first seen.
    pub fn values(&self) -> impl Iterator<Item = (&[u8], &GroupRow)> {
        self.values.iter().map(|v| &**v).zip(&self.rows)
    }

    /// The row of the values past [`MAX_VALUES`], if any was seen.
    pub fn other(&self) -> Option<&GroupRow> {
        self.other.as_deref()
    }

    /// The row of the exchanges without a value, if any.
    pub fn none(&self) -> Option<&GroupRow> {
        self.none.as_deref()
    }

    /// How many distinct values were seen (`(none)` is not a value).
    pub fn distinct(&self) -> Distinct {
        Distinct {
            count: self.seen.len as u64,
            saturated: self.seen.saturated,
        }
    }

    /// Exchanges recorded in every row.
    pub fn exchanges(&self) -> u64 {
        let rows: u64 = self.rows.iter().map(|r| r.exchanges).sum();
        rows + self.other.as_ref().map_or(0, |r| r.exchanges)
            + self.none.as_ref().map_or(0, |r| r.exchanges)
    }
}

#[cfg(test)]
#[path = "group_tests.rs"]
mod tests;
