//! Runs A and B by turns, A B A B …, until the comparison is decided
//! ([`crate::analysis::sequential`]) or the budget is spent: `volley ab`.

use std::time::{Duration, Instant};

use crate::analysis::sequential::{Design, Sequence, Stopped};
use crate::record::model::RunRecord;

/// Which side a run is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The baseline.
    A,
    /// The variant compared with it.
    B,
}

/// Runs `run(side, pair)` by turns, A then B, pair after pair (from 1), and looks after each
/// pair, until every metric of `design` is decided (or those left can never be:
/// [`Sequence::settled`]), `design.max_pairs` pairs are done, the next
/// pair would end after `max_time` (judged by the last pair's length), a run comes back
/// interrupted, or `run` has no run to give (`None`: a replay's folders ran out). `after` sees
/// the sequence after each pair.
pub fn until_decided<E: From<crate::error::Error>>(
    design: Design,
    max_time: Option<Duration>,
    mut run: impl FnMut(Side, u32) -> Result<Option<RunRecord>, E>,
    mut after: impl FnMut(&Sequence),
) -> Result<Sequence, E> {
    let started = Instant::now();
    let mut seq = Sequence::new(design);
    let mut last_pair = Duration::ZERO;
    loop {
        let pair_started = Instant::now();
        let pair = seq.pairs + 1;
        let Some(a) = take(run(Side::A, pair)?, &mut seq) else {
            return Ok(seq);
        };
        let Some(b) = take(run(Side::B, pair)?, &mut seq) else {
            return Ok(seq);
        };
        if pair == 1 {
            // A part the runs lack would leave its figure undecided to the end.
            let thin = |r: &RunRecord, side| seq.design.too_few_responses(r, side);
            let thin = thin(&a, "A").or_else(|| thin(&b, "B"));
            if let Some(why) = [&a, &b]
                .iter()
                .find_map(|r| seq.design.missing_part(r))
                .or(thin)
            {
                let what = "--metric".into();
                return Err(crate::error::Error::Invalid { what, why }.into());
            }
        }
        seq.add_pair(&a, &b);
        after(&seq);
        last_pair = last_pair.max(pair_started.elapsed());
        seq.stopped = if let Some(settled) = seq.settled() {
            Some(settled)
        } else if seq.pairs >= seq.design.max_pairs {
            Some(Stopped::MaxRuns)
        } else if max_time.is_some_and(|max| started.elapsed() + last_pair > max) {
            Some(Stopped::MaxTime)
        } else {
            None
        };
        if seq.stopped.is_some() {
            return Ok(seq);
        }
    }
}

/// The run to look at, or none: then `seq` stopped, the runs given having run out or this
/// one interrupted.
fn take(run: Option<RunRecord>, seq: &mut Sequence) -> Option<RunRecord> {
    match run {
        None => seq.stopped = Some(Stopped::RunsSpent),
        Some(r) if r.interrupted.is_some() => seq.stopped = Some(Stopped::Interrupted),
        Some(r) => return Some(r),
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::metric::Metric;
    use crate::record::fixture::record;

    fn design(max_pairs: u32) -> Design {
        Design {
            metrics: vec![crate::analysis::sequential::Figure::of_runs(
                Metric::Throughput,
            )],
            max_pairs,
            threshold_pct: 2.0,
            comparisons: 1,
        }
    }

    /// A record whose throughput is `rps` (10 s, no errors).
    fn at(rps: u32) -> RunRecord {
        record("r", 10, u64::from(rps), 1000, 0, 0.0)
    }

    #[test]
    fn a_clear_difference_stops_the_sequence_early() {
        let mut order = Vec::new();
        let seq = until_decided(
            design(20),
            None,
            |side, pair| -> Result<_, crate::error::Error> {
                order.push(side);
                let jitter = pair % 3;
                Ok(Some(match side {
                    Side::A => at(1000 + jitter),
                    Side::B => at(1500 + jitter),
                }))
            },
            |_| {},
        )
        .unwrap();
        assert_eq!(seq.stopped, Some(Stopped::Decided));
        assert!(seq.pairs < 20, "{}", seq.pairs);
        assert_eq!(&order[..4], &[Side::A, Side::B, Side::A, Side::B]);
    }

    #[test]
    fn an_interrupted_run_or_the_run_budget_ends_it() {
        let noisy = |side, pair: u32| -> Result<_, crate::error::Error> {
            let odd = (pair + u32::from(side == Side::B)) % 2;
            Ok(Some(at(1000 + odd * 200)))
        };
        let seq = until_decided(design(4), None, noisy, |_| {}).unwrap();
        assert_eq!((seq.stopped, seq.pairs), (Some(Stopped::MaxRuns), 4));
        let stop =
            |side, _| -> Result<_, crate::error::Error> { Ok((side == Side::A).then(|| at(10))) };
        let seq = until_decided(design(4), None, stop, |_| {}).unwrap();
        assert_eq!((seq.stopped, seq.pairs), (Some(Stopped::RunsSpent), 0));
        let mut sent = Vec::new();
        let signal = |side, _| -> Result<_, crate::error::Error> {
            sent.push(side);
            let mut r = at(10);
            r.interrupted = Some("SIGINT".into());
            Ok(Some(r))
        };
        let seq = until_decided(design(4), None, signal, |_| {}).unwrap();
        assert_eq!((seq.stopped, seq.pairs), (Some(Stopped::Interrupted), 0));
        assert_eq!(sent, [Side::A], "B is not run after A was interrupted");
    }
}
