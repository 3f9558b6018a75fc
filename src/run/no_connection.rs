//! Ends a run in which no connection to the target works: after [`GRACE`] of measuring, when
//! every attempt so far failed for a failure of the connection (refused, unreachable, timed
//! out, TLS, a protocol the server does not speak) and not one response came back, what follows
//! would only repeat it. The record's first line then says why (`no_connection`), and the run
//! exits 1 (docs/measurement.md, "How a run ends").

use std::time::Duration;

use crate::engine::{Abort, Observer};
use crate::record::error_kind::ErrorKind;
use crate::record::recorder::IntervalSnapshot;

/// How long a run measures before a target that never connected ends it.
pub const GRACE: Duration = Duration::from_secs(1);

/// The observer: running totals of attempts, responses and how they failed.
#[derive(Debug, Default)]
pub(super) struct NoConnection {
    attempts: u64,
    errors: u64,
    responses: u64,
    /// Whether a failure of another kind than a connection's was seen.
    other_failure: bool,
}

impl Observer for NoConnection {
    fn interval(&mut self, s: &IntervalSnapshot) {
        self.attempts += s.counters.attempts();
        self.errors += s.counters.errors;
        self.responses += s.tally.statuses.iter().map(|(_, n)| n).sum::<u64>();
        self.other_failure |= s
            .tally
            .errors
            .iter()
            .any(|(kind, _)| !ErrorKind::is_connection_failure(*kind));
    }

    fn stop(&mut self, elapsed: Duration) -> Option<Abort> {
        let dead = elapsed >= GRACE
            && self.attempts > 0
            && self.errors == self.attempts
            && self.responses == 0
            && !self.other_failure;
        dead.then(|| Abort {
            at: elapsed,
            thresholds: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(second: u64, kind: ErrorKind, n: u64) -> IntervalSnapshot {
        let mut s = IntervalSnapshot::of_requests(second, 0, 1);
        s.counters.not_sent = n;
        s.counters.errors = n;
        s.tally.errors = vec![(kind, n)];
        s
    }

    #[test]
    fn a_target_that_never_connects_ends_the_run_after_the_grace() {
        let mut o = NoConnection::default();
        o.interval(&failed(0, ErrorKind::ConnectRefused, 40));
        assert_eq!(o.stop(Duration::from_millis(500)), None);
        let abort = o.stop(GRACE).expect("stops");
        assert!(abort.thresholds.is_empty());
    }

    #[test]
    fn one_response_or_another_failure_keeps_it_going() {
        let mut o = NoConnection::default();
        o.interval(&failed(0, ErrorKind::ConnectRefused, 40));
        o.interval(&IntervalSnapshot::of_requests(0, 1, 100));
        assert_eq!(o.stop(GRACE * 2), None);
        let mut o = NoConnection::default();
        o.interval(&failed(0, ErrorKind::Timeout, 3));
        assert_eq!(o.stop(GRACE * 2), None);
        // Nothing attempted yet (a slow ramp): nothing to judge.
        assert_eq!(NoConnection::default().stop(GRACE * 2), None);
    }
}
