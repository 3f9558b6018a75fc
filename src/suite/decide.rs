//! A suite's `repeats = "until-decided"`: after each round, every target after the first is
//! compared with it by the sequential design `volley ab` uses
//! ([`crate::analysis::sequential`]), the round's two runs a pair; the rounds stop once every
//! comparison has stopped: decided, undecidable, or a side that runs no more. A target whose
//! comparison has stopped takes no more turns.

use crate::analysis::sequential::{Call, Design, Sequence, Stopped};
use crate::record::RunRecord;
use crate::record::suite::{Status, TargetOutcome};
use crate::record::suite_decision::{MetricCall, MetricDecision, SuiteDecision};
use std::path::Path;

use super::Progress;
use crate::report::repeats::write_spread;
use crate::report::sequential;

/// One sequence per target after the first.
pub(super) struct Rounds {
    sequences: Vec<Sequence>,
}

impl Rounds {
    /// The sequences of `targets` targets under `design`.
    pub(super) fn new(design: &Design, targets: usize) -> Self {
        let sequences = (1..targets)
            .map(|_| Sequence::new(design.clone()))
            .collect();
        Self { sequences }
    }

    /// Whether target `i` takes the next round's turn: the first while any comparison goes
    /// on, another while its own does (one decided early runs no more).
    pub(super) fn takes_turn(&self, i: usize) -> bool {
        match i.checked_sub(1) {
            None => self.sequences.iter().any(|s| s.stopped.is_none()),
            Some(j) => self.sequences.get(j).is_some_and(|s| s.stopped.is_none()),
        }
    }

    /// What was decided, in words (a block of lines per target after the first, then the
    /// table's note) and typed; a sequence still going when the rounds ended stopped for
    /// `interrupted`, or else at the most rounds. The spread of each target's runs is written
    /// in its folder under `folder`: a target decided early took no more turns, and its last
    /// turn was not the suite's last.
    pub(super) fn finish(
        mut self,
        interrupted: bool,
        targets: &[TargetOutcome],
        (folder, say): (&Path, Progress<'_>),
    ) -> (Vec<String>, Vec<SuiteDecision>) {
        for t in targets.iter().filter(|t| t.runs.len() > 1) {
            if let Err(e) = write_spread(&folder.join(&t.name), &t.name, &t.runs, None) {
                say(&format!(
                    "{}: cannot write the spread of the repeats: {e}",
                    t.name
                ));
            }
        }
        let stopped = match interrupted {
            true => Stopped::Interrupted,
            false => Stopped::MaxRuns,
        };
        let base = targets.first().map_or("", |t| t.name.as_str());
        let (mut lines, mut typed) = (Vec::new(), Vec::new());
        for (seq, t) in self.sequences.iter_mut().zip(&targets[1..]) {
            seq.stopped.get_or_insert(stopped);
            let text = sequential::text(seq);
            lines.push(format!("{} against {base}: {}", t.name, text.trim_end()));
            typed.push(decision(seq, &t.name, base));
        }
        if !lines.is_empty() {
            lines.push(sequential::TABLE_NOTE.to_string());
        }
        (lines, typed)
    }

    /// After round `round` (from 1): adds each target's pair (the first target's run of the
    /// round, and its own) where both ran, and stops each sequence that is settled — decided,
    /// or undecidable ([`Sequence::settled`]) — or whose side ran no more (it, or the first
    /// target, failed, aborted or was interrupted); returns whether every sequence has
    /// stopped.
    pub(super) fn after_round(&mut self, round: u32, targets: &[TargetOutcome]) -> bool {
        // A whole run of this round: a target aborted or interrupted in it ran part of one.
        fn of_round(t: &TargetOutcome, round: u32) -> Option<&RunRecord> {
            let whole = matches!(t.status, Status::Ran | Status::ThresholdsFailed);
            t.runs
                .last()
                .filter(|_| whole && t.runs.len() as u32 == round)
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
                    _ if [first, t]
                        .iter()
                        .any(|t| matches!(t.status, Status::Interrupted | Status::NotRun)) =>
                    {
                        Some(Stopped::Interrupted)
                    }
                    _ => Some(Stopped::Failed),
                };
            }
            all &= seq.stopped.is_some();
        }
        all
    }
}

/// The comparison `seq` of `target` with `baseline`, typed for `suite.json`.
fn decision(seq: &Sequence, target: &str, baseline: &str) -> SuiteDecision {
    let metrics = seq.design.metrics.iter().zip(&seq.looks);
    let metrics = metrics.map(|(f, look)| MetricDecision {
        metric: crate::analysis::gate::metric_name(f.metric).to_string(),
        part: f.part.clone(),
        call: look.map_or(MetricCall::Undecided, |l| match l.call {
            Call::Better => MetricCall::Better,
            Call::Worse => MetricCall::Worse,
            Call::Equivalent => MetricCall::Equivalent,
            Call::Undecided => MetricCall::Undecided,
        }),
        change: look.map(|l| l.change),
        interval: look.map(|l| [l.interval.0, l.interval.1]),
        decided_at_pair: look.filter(|l| l.call.decided()).map(|l| l.pairs),
    });
    SuiteDecision {
        target: target.into(),
        baseline: baseline.into(),
        pairs: seq.pairs,
        stopped: seq.stopped.unwrap_or(Stopped::MaxRuns),
        metrics: metrics.collect(),
    }
}
