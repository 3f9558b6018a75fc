//! Open model: a sample of when iterations were due and when they went out, per scenario, for
//! the schedule's self-check (`docs/measurement.md`, "The schedule kept").
//!
//! Each worker keeps, per open scenario, a reservoir of [`BLOCKS`] blocks of [`BLOCK`]
//! consecutive measured iterations (consecutive as the worker recorded them): a block holds their
//! due times and, for those sent, their send instants; an iteration dropped at the in-flight cap
//! has a due time and no send. The blocks are a uniform sample of the run's (Algorithm R over
//! blocks, seeded per scenario), so a stall anywhere in the run can land in it. Recording copies
//! two integers into a buffer allocated once; a full block either replaces one of the reservoir
//! (their buffers swap) or is cleared.

/// Iterations per block.
pub const BLOCK: usize = 64;
/// Blocks kept per worker and scenario.
pub const BLOCKS: usize = 32;

/// One measured iteration of the open model: when it was due and when its first request went
/// out, µs since measuring began (`None`: dropped at the in-flight cap, never sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Send {
    /// When the schedule made it due (its grid point), µs.
    pub due_us: u64,
    /// When its first request went out, µs; `None` when it was dropped.
    pub sent_us: Option<u64>,
}

/// One scenario's blocks on one worker (or, merged, on all of them).
#[derive(Debug, Clone)]
struct Stream {
    filling: Vec<Send>,
    blocks: Vec<Vec<Send>>,
    /// Blocks completed so far (kept or not).
    completed: u64,
    rng: fastrand::Rng,
}

impl Stream {
    fn new(scenario: usize) -> Self {
        Self {
            filling: Vec::with_capacity(BLOCK),
            blocks: Vec::new(),
            completed: 0,
            rng: fastrand::Rng::with_seed(0x5EED ^ scenario as u64),
        }
    }

    #[inline]
    fn push(&mut self, send: Send) {
        self.filling.push(send);
        if self.filling.len() < BLOCK {
            return;
        }
        let j = self.completed;
        self.completed += 1;
        if self.blocks.len() < BLOCKS {
            let next = Vec::with_capacity(BLOCK);
            self.blocks.push(std::mem::replace(&mut self.filling, next));
            return;
        }
        let r = self.rng.u64(0..=j) as usize;
        if let Some(kept) = self.blocks.get_mut(r) {
            std::mem::swap(kept, &mut self.filling);
        }
        self.filling.clear();
    }

    /// Every block, the one being filled included.
    fn all(&self) -> impl Iterator<Item = &Vec<Send>> {
        self.blocks.iter().chain(std::iter::once(&self.filling))
    }
}

/// The sample of one worker's open-model iterations, per scenario (index in the plan).
#[derive(Debug, Clone, Default)]
pub struct SendSample {
    streams: Vec<Option<Stream>>,
}

/// The gaps a [`SendSample`] holds, µs, each sorted: between consecutive due times (what the
/// schedule planned) and between consecutive sends (what the generator did), within each block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SendGaps {
    /// Gaps between consecutive due times, every iteration of a block counted, µs, sorted.
    pub planned_us: Vec<u64>,
    /// Gaps between consecutive sends of the iterations sent, µs, sorted.
    pub achieved_us: Vec<u64>,
}

impl SendSample {
    /// Records one measured iteration of scenario `scenario`.
    #[inline]
    pub fn record(&mut self, scenario: usize, send: Send) {
        if self.streams.len() <= scenario {
            self.streams.resize_with(scenario + 1, || None);
        }
        self.streams[scenario]
            .get_or_insert_with(|| Stream::new(scenario))
            .push(send);
    }

    /// Adds another worker's sample: its blocks (the one being filled too) join this one's.
    pub fn merge(&mut self, other: &SendSample) {
        if self.streams.len() < other.streams.len() {
            self.streams.resize_with(other.streams.len(), || None);
        }
        for (i, theirs) in other.streams.iter().enumerate() {
            let Some(theirs) = theirs else { continue };
            let ours = self.streams[i].get_or_insert_with(|| Stream::new(i));
            ours.blocks
                .extend(theirs.all().filter(|b| !b.is_empty()).cloned());
        }
    }

    /// The gaps within each block, planned and achieved, each sorted.
    pub fn gaps(&self) -> SendGaps {
        let mut out = SendGaps::default();
        let (mut due, mut sent) = (Vec::with_capacity(BLOCK), Vec::with_capacity(BLOCK));
        for block in self.streams.iter().flatten().flat_map(Stream::all) {
            due.clear();
            sent.clear();
            due.extend(block.iter().map(|s| s.due_us));
            sent.extend(block.iter().filter_map(|s| s.sent_us));
            due.sort_unstable();
            sent.sort_unstable();
            out.planned_us.extend(due.windows(2).map(|w| w[1] - w[0]));
            out.achieved_us.extend(sent.windows(2).map(|w| w[1] - w[0]));
        }
        out.planned_us.sort_unstable();
        out.achieved_us.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(due_us: u64, lag_us: u64) -> Send {
        Send {
            due_us,
            sent_us: Some(due_us + lag_us),
        }
    }

    #[test]
    fn the_reservoir_keeps_at_most_its_blocks_and_samples_the_whole_run() {
        let mut s = SendSample::default();
        let n = (BLOCKS * BLOCK * 20) as u64;
        for i in 0..n {
            s.record(0, sent(i * 1_000, 10));
        }
        let stream = s.streams[0].as_ref().unwrap();
        assert_eq!(stream.blocks.len(), BLOCKS);
        // Some kept block comes from the second half of the run.
        let late = stream.blocks.iter().any(|b| b[0].due_us >= n / 2 * 1_000);
        assert!(late, "the reservoir kept only the start");
        let g = s.gaps();
        assert!(g.planned_us.iter().all(|&g| g == 1_000));
        assert_eq!(g.planned_us.len(), g.achieved_us.len());
    }

    #[test]
    fn dropped_iterations_count_in_the_plan_and_leave_a_longer_gap_in_what_was_sent() {
        let mut s = SendSample::default();
        for i in 0..10u64 {
            let send = match i {
                4 => Send {
                    due_us: i * 1_000,
                    sent_us: None,
                },
                _ => sent(i * 1_000, 0),
            };
            s.record(2, send);
        }
        let g = s.gaps();
        assert_eq!(g.planned_us, vec![1_000; 9]);
        assert_eq!(g.achieved_us.len(), 8);
        assert_eq!(g.achieved_us.last(), Some(&2_000));
    }

    #[test]
    fn merging_joins_the_workers_blocks_without_gaps_between_workers() {
        let (mut a, mut b) = (SendSample::default(), SendSample::default());
        for i in 0..5u64 {
            a.record(0, sent(i * 2_000, 0));
            b.record(0, sent(1_000_000 + i * 2_000, 0));
        }
        a.merge(&b);
        let g = a.gaps();
        assert_eq!(g.planned_us, vec![2_000; 8]);
        assert!(SendSample::default().gaps().planned_us.is_empty());
    }
}
