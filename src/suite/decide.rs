//! A suite's `repeats = "until-decided"`: after each round, every target after the first is
//! compared with it by the sequential design `volley ab` uses
//! ([`crate::analysis::sequential`]), the round's two runs a pair; the rounds stop once every
//! comparison has stopped: decided, undecidable, or a side that runs no more.

use crate::analysis::sequential::{Design, Sequence, Stopped};
use crate::record::RunRecord;
use crate::record::suite::{Status, TargetOutcome};
use std::path::Path;

use super::Progress;
use crate::report::repeats::write_spread;
use crate::report::sequential;

/// One sequence per target after the first, and what they decided once every one has.
pub(super) struct Rounds {
    sequences: Vec<Sequence>,
    decided: Option<Vec<String>>,
}

impl Rounds {
    /// The sequences of `targets` targets under `design`.
    pub(super) fn new(design: &Design, targets: usize) -> Self {
        let sequences = (1..targets)
            .map(|_| Sequence::new(design.clone()))
            .collect();
        Self {
            sequences,
            decided: None,
        }
    }

    /// After round `round` (from 1): adds each target's pair (the first target's run of the
    /// round, and its own) where both ran, and stops each sequence that is settled — decided,
    /// or undecidable ([`Sequence::settled`]) — or whose side ran no more (it, or the first
    /// target, failed, aborted or was interrupted); returns whether every sequence has
    /// stopped. Once they have, the spread of each target's runs is written in its folder
    /// under `folder`.
    pub(super) fn after_round(
        &mut self,
        round: u32,
        targets: &[TargetOutcome],
        folder: &Path,
        say: Progress<'_>,
    ) -> bool {
        if !self.all_stopped(round, targets) {
            return false;
        }
        self.decided = Some(self.lines(Stopped::Decided, targets));
        for t in targets.iter().filter(|t| t.runs.len() > 1) {
            if let Err(e) = write_spread(&folder.join(&t.name), &t.name, &t.runs, None) {
                say(&format!(
                    "{}: cannot write the spread of the repeats: {e}",
                    t.name
                ));
            }
        }
        true
    }

    /// What was decided: once every sequence stopped, or else when the rounds ended
    /// (`interrupted` or all run).
    pub(super) fn finish(mut self, interrupted: bool, targets: &[TargetOutcome]) -> Vec<String> {
        let stopped = match interrupted {
            true => Stopped::Interrupted,
            false => Stopped::MaxRuns,
        };
        match self.decided.take() {
            Some(lines) => lines,
            None => self.lines(stopped, targets),
        }
    }

    fn all_stopped(&mut self, round: u32, targets: &[TargetOutcome]) -> bool {
        fn of_round(t: &TargetOutcome, round: u32) -> Option<&RunRecord> {
            t.runs.last().filter(|_| t.runs.len() as u32 == round)
        }
        let Some(first) = targets.first() else {
            return false;
        };
        let mut all = true;
        for (seq, t) in self.sequences.iter_mut().zip(&targets[1..]) {
            if seq.stopped.is_none() {
                seq.stopped = match (of_round(first, round), of_round(t, round)) {
                    (Some(base), Some(run)) => {
                        seq.add_pair(base, run);
                        seq.settled()
                    }
                    // A side without this round's run takes no more turns.
                    _ if [first, t].iter().any(|t| t.status == Status::Interrupted) => {
                        Some(Stopped::Interrupted)
                    }
                    _ => Some(Stopped::Failed),
                };
            }
            all &= seq.stopped.is_some();
        }
        all
    }

    /// What each comparison decided, `stopped` saying why the rounds ended: a block of lines
    /// per target after the first.
    fn lines(&mut self, stopped: Stopped, targets: &[TargetOutcome]) -> Vec<String> {
        let base = targets.first().map_or("", |t| t.name.as_str());
        let mut out = Vec::new();
        for (seq, t) in self.sequences.iter_mut().zip(&targets[1..]) {
            seq.stopped.get_or_insert(stopped);
            let text = sequential::text(seq);
            out.push(format!("{} against {base}: {}", t.name, text.trim_end()));
        }
        if !out.is_empty() {
            out.push(sequential::TABLE_NOTE.to_string());
        }
        out
    }
}
