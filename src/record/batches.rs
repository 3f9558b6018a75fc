//! The latency histogram cut in batches of whole seconds, for the uncertainty of a run's
//! figures (docs/measurement.md, "Uncertainty").
//!
//! Batch *j* holds the responses that completed in seconds [j·b, (j+1)·b) since measuring
//! began. Memory is bounded whatever the run's length: when a second would need more than
//! [`MAX_BATCHES`] batches, neighbours merge pairwise and `b` doubles ("dynamic batch means").

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::recorder::{HIST_LOW_US, HIST_SIGFIG};
use super::{HistogramError, decode_histogram, encode_histogram};

/// The most batches kept (between half this and this many once a run is long enough).
pub const MAX_BATCHES: u64 = 32;

/// An empty batch: volley's precision and lowest value, its range growing with the largest
/// latency added. A batch of a full-range histogram would hold 180 KB of counts however few
/// its responses; one that grows holds what its latencies reach (about 30 KB up to 10 ms), and
/// a run keeps up to 32 batches for itself and 32 for each of its scenarios and steps.
fn batch_histogram() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(HIST_LOW_US, 2, HIST_SIGFIG)
        .expect("constant histogram bounds are valid");
    h.auto(true);
    h
}

/// A run's latency histogram in batches of `batch_s` seconds.
#[derive(Debug, Clone)]
pub struct Batches {
    batch_s: u64,
    batches: BTreeMap<u64, Histogram<u64>>,
}

impl Default for Batches {
    fn default() -> Self {
        Self::new()
    }
}

impl Batches {
    /// No batch yet, one second each.
    pub fn new() -> Self {
        Self {
            batch_s: 1,
            batches: BTreeMap::new(),
        }
    }

    /// Each batch's length, s.
    pub fn batch_s(&self) -> u64 {
        self.batch_s
    }

    /// Adds the latencies of second `t_s` (µs); seconds may come in any order.
    pub fn add(&mut self, t_s: u64, latency: &Histogram<u64>) {
        while t_s / self.batch_s >= MAX_BATCHES {
            self.coarsen();
        }
        let h = self
            .batches
            .entry(t_s / self.batch_s)
            .or_insert_with(batch_histogram);
        let _ = h.add(latency);
    }

    /// Merges neighbours pairwise: batches twice as long.
    pub fn coarsen(&mut self) {
        let old = std::mem::take(&mut self.batches);
        for (j, h) in old {
            let into = self.batches.entry(j / 2).or_insert_with(batch_histogram);
            let _ = into.add(&h);
        }
        self.batch_s *= 2;
    }

    /// The batches in order from batch 0 to the last one that has responses (an empty
    /// histogram for a batch in which none completed).
    pub fn histograms(&self) -> Vec<Histogram<u64>> {
        let Some(&last) = self.batches.keys().next_back() else {
            return Vec::new();
        };
        (0..=last)
            .map(|j| {
                self.batches
                    .get(&j)
                    .cloned()
                    .unwrap_or_else(batch_histogram)
            })
            .collect()
    }

    /// The batches as the record keeps them (`histograms.batches_us`).
    pub fn encode(&self) -> Vec<String> {
        self.histograms().iter().map(encode_histogram).collect()
    }

    /// Batches of `batch_s` seconds from their histograms, in order from batch 0.
    pub fn from_histograms(batch_s: u64, hs: Vec<Histogram<u64>>) -> Self {
        Self {
            batch_s: batch_s.max(1),
            batches: hs
                .into_iter()
                .enumerate()
                .map(|(j, mut h)| {
                    // A batch read back grows as a new one does when later seconds join it.
                    h.auto(true);
                    (j as u64, h)
                })
                .collect(),
        }
    }

    /// Batches read back from a record (`histograms.batches_us`, `histograms.batch_s`).
    pub fn decode(batch_s: u64, encoded: &[String]) -> Result<Self, HistogramError> {
        let hs = encoded
            .iter()
            .map(|e| decode_histogram(e))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::from_histograms(batch_s, hs))
    }

    /// Adds the batches of another run whose second 0 is this one's second `shift_s` (a share
    /// of a distributed test that began measuring later): its batch *j* joins the batch that
    /// holds second `j·b + shift_s` here, both being first brought to the longer length `b`.
    pub fn add_shifted(&mut self, other: &Self, shift_s: u64) {
        while self.batch_s < other.batch_s {
            self.coarsen();
        }
        for (j, h) in &other.batches {
            self.add(j * other.batch_s + shift_s, h);
        }
    }

    /// Adds another run's batches of the same seconds (a segment of the same test): both are
    /// first brought to the longer batch length.
    pub fn merge(&mut self, other: &Self) {
        let mut other = other.clone();
        while self.batch_s < other.batch_s {
            self.coarsen();
        }
        while other.batch_s < self.batch_s {
            other.coarsen();
        }
        for (j, h) in other.batches {
            let _ = self
                .batches
                .entry(j)
                .or_insert_with(batch_histogram)
                .add(&h);
        }
    }

    /// Responses in every batch together.
    pub fn len(&self) -> u64 {
        self.batches.values().map(Histogram::len).sum()
    }

    /// Whether no response is in any batch.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::recorder::new_histogram;

    fn second(us: u64, n: u64) -> Histogram<u64> {
        let mut h = new_histogram();
        h.record_n(us, n).unwrap();
        h
    }

    #[test]
    fn batches_double_when_full_and_keep_every_response() {
        let mut b = Batches::new();
        for t in 0..100 {
            b.add(t, &second(1000 + t, 10));
        }
        // 100 s: one-second batches would be 100 > 32; 4 s each gives 25.
        assert_eq!(b.batch_s(), 4);
        let hs = b.histograms();
        assert_eq!(hs.len(), 25);
        assert!(hs.iter().all(|h| h.len() == 40));
        assert_eq!(b.len(), 1000);
    }

    #[test]
    fn out_of_order_seconds_and_gaps() {
        let mut b = Batches::new();
        b.add(3, &second(500, 1));
        b.add(0, &second(500, 2));
        let hs = b.histograms();
        assert_eq!(
            hs.iter().map(Histogram::len).collect::<Vec<_>>(),
            [2, 0, 0, 1]
        );
    }

    #[test]
    fn merged_segments_align_their_batch_lengths() {
        let (mut a, mut b) = (Batches::new(), Batches::new());
        for t in 0..40 {
            a.add(t, &second(1000, 1));
        }
        for t in 0..10 {
            b.add(t, &second(2000, 1));
        }
        a.merge(&b);
        assert_eq!(a.batch_s(), 2);
        assert_eq!(a.len(), 50);
        assert_eq!(a.histograms()[0].len(), 4);
        let round = Batches::decode(a.batch_s(), &a.encode()).unwrap();
        assert_eq!(round.histograms(), a.histograms());
    }
}
