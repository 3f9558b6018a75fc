//! A result group's seconds, as its intervals need them: its latency in batches and its
//! requests per second (docs/measurement.md, "Uncertainty"). Gathered by the control loop from
//! the workers' per-group interval snapshots, so recording a request does nothing for it but
//! what a live observer of groups already asks.

use hdrhistogram::Histogram;

use super::HistogramError;
use super::batches::Batches;
use super::model::GroupBatches;

/// One result group's latency in batches and requests per second.
#[derive(Debug, Clone, Default)]
pub struct GroupSeries {
    batches: Batches,
    requests: Vec<u64>,
}

impl GroupSeries {
    /// Nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds what one worker's second `second` held of the group: its responses' latencies (µs)
    /// and the requests it finished.
    pub fn add(&mut self, second: u64, latency: &Histogram<u64>, requests: u64) {
        self.batches.add(second, latency);
        self.add_requests(second as usize, requests);
    }

    fn add_requests(&mut self, second: usize, requests: u64) {
        if self.requests.len() <= second {
            self.requests.resize(second + 1, 0);
        }
        self.requests[second] += requests;
    }

    /// The latency in batches.
    pub fn batches(&self) -> &Batches {
        &self.batches
    }

    /// Requests finished in each second, from second 0.
    pub fn requests(&self) -> &[u64] {
        &self.requests
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.batches.is_empty() && self.requests.iter().all(|&r| r == 0)
    }

    /// Adds another run's seconds whose second 0 is this one's second `shift_s` (a share of a
    /// distributed test), as [`Batches::add_shifted`] does the batches.
    pub fn add_shifted(&mut self, other: &Self, shift_s: u64) {
        self.batches.add_shifted(&other.batches, shift_s);
        for (t, &r) in other.requests.iter().enumerate() {
            self.add_requests(t + shift_s as usize, r);
        }
    }

    /// As the record keeps it (`groups[].batches`).
    pub fn to_record(&self) -> GroupBatches {
        GroupBatches {
            batch_s: self.batches.batch_s(),
            latency_us: self.batches.encode(),
            requests: self.requests.clone(),
        }
    }

    /// Read back from a record.
    pub fn from_record(r: &GroupBatches) -> Result<Self, HistogramError> {
        Ok(Self {
            batches: Batches::decode(r.batch_s, &r.latency_us)?,
            requests: r.requests.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::recorder::new_histogram;

    fn of(n: u64, us: u64) -> Histogram<u64> {
        let mut h = new_histogram();
        h.record_n(us, n).unwrap();
        h
    }

    #[test]
    fn seconds_of_every_worker_add_up_and_read_back_from_the_record() {
        let mut g = GroupSeries::new();
        g.add(0, &of(3, 100), 3);
        g.add(0, &of(2, 200), 2);
        g.add(2, &of(1, 300), 4);
        assert_eq!(g.requests(), &[5, 0, 4]);
        assert_eq!(g.batches().len(), 6);
        let back = GroupSeries::from_record(&g.to_record()).unwrap();
        assert_eq!(back.requests(), g.requests());
        assert_eq!(back.batches().histograms(), g.batches().histograms());

        let mut shifted = GroupSeries::new();
        shifted.add_shifted(&g, 2);
        assert_eq!(shifted.requests(), &[0, 0, 5, 0, 4]);
        assert_eq!(shifted.batches().histograms()[2].len(), 5);
        assert!(GroupSeries::new().is_empty() && !g.is_empty());
    }
}
