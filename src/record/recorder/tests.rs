//! Recording and merging, exactly.

use super::*;

fn ok(latency_us: u64) -> RequestSample {
    RequestSample {
        latency_us,
        service_us: latency_us,
        lag_us: None,
        bytes_sent: 10,
        bytes_received: 20,
        connections_opened: 0,
        status: Some(200),
        error: None,
        grpc: None,
        timing: Timing::default(),
        window: Window::Inside,
        done_us: 0,
    }
}

#[test]
fn records_and_merges_exactly() {
    let mut a = Recorder::new();
    let mut b = Recorder::new();
    for v in 1..=1000 {
        a.record(&ok(v));
    }
    b.record(&RequestSample {
        status: None,
        error: Some(ErrorKind::Reset),
        ..ok(5)
    });
    b.record(&RequestSample {
        status: Some(503),
        error: Some(ErrorKind::Http5xx),
        ..ok(7)
    });
    a.merge(&b);
    assert_eq!(a.counters.requests, 1002);
    assert_eq!(a.counters.errors, 2);
    assert_eq!(a.counters.bytes_sent, 10_020);
    assert_eq!(a.latency.len(), 1001, "transport errors have no latency");
    assert_eq!(a.errors[ErrorKind::Reset.index()], 1);
    assert_eq!(
        a.statuses().collect::<Vec<_>>(),
        vec![(200, 1000), (503, 1)]
    );
    assert_eq!(a.latency.max(), 1000);
}

#[test]
fn intervals_reset_after_each_take() {
    let mut r = Recorder::new();
    r.record(&ok(100));
    r.record(&ok(300));
    let s = r.take_interval(0, 1.0, 3);
    assert_eq!(s.counters.requests, 2);
    assert_eq!(s.latency.len(), 2);
    assert_eq!(s.in_flight, 3);
    let s = r.take_interval(1, 1.0, 0);
    assert_eq!(s.counters.requests, 0);
    assert_eq!(r.counters.requests, 2, "totals are not reset");
}

#[test]
fn huge_values_are_clamped_not_lost() {
    let mut r = Recorder::new();
    r.record(&ok(u64::MAX));
    assert_eq!(r.latency.len(), 1);
}

#[test]
fn each_interval_tallies_what_it_added_to_the_totals() {
    let mut r = Recorder::with_groups(1, 0, true);
    let busy = RequestSample {
        status: Some(503),
        error: Some(ErrorKind::Http5xx),
        ..ok(7)
    };
    r.record_in(&ok(100), &[Some(0)]);
    r.record_in(&busy, &[Some(0)]);
    r.record_completed(Some(0));
    let first = r.take_interval(0, 1.0, 0);
    assert_eq!(first.tally.statuses, vec![(200, 1), (503, 1)]);
    assert_eq!(first.tally.errors, vec![(ErrorKind::Http5xx, 1)]);
    assert_eq!(first.tally.completed, 1);
    assert_eq!(first.groups[0].tally, first.tally);
    r.record_in(&busy, &[Some(0)]);
    r.record_dropped(Some(0));
    let second = r.take_interval(1, 1.0, 0);
    assert_eq!(second.tally.statuses, vec![(503, 1)]);
    assert_eq!(second.tally.errors, vec![(ErrorKind::Http5xx, 1)]);
    assert_eq!((second.tally.dropped, second.tally.completed), (1, 0));
    assert_eq!(second.groups[0].tally.dropped, 1);
    // Nothing new: an empty tally, and no group interval.
    let third = r.take_interval(2, 1.0, 0);
    assert_eq!(third.tally, Tally::default());
    assert!(third.groups.is_empty());
}

#[test]
fn each_interval_tallies_the_streams_that_ended_in_it() {
    let mut r = Recorder::with_groups(1, 0, true);
    let stream = StreamSample {
        ok: true,
        ending: Some(Ending::Eof),
        first_us: Some(5),
        gaps_us: &[3, 4],
        messages: 3,
        stream_us: 20,
        tokens: None,
        per_token_us: None,
        good: None,
        drained: false,
        sent: 2,
        round_trips_us: &[5, 6],
    };
    r.record_in(&ok(100), &[Some(0)]);
    r.record_stream(&stream, &[Some(0)]);
    let first = r.take_interval(0, 1.0, 0);
    let counted = StreamTally {
        streams: 1,
        received: 3,
        sent: 2,
    };
    assert_eq!(first.tally.streams, counted);
    assert_eq!(first.groups[0].tally.streams, counted);
    r.record_in(&ok(100), &[Some(0)]);
    let second = r.take_interval(1, 1.0, 0);
    assert!(second.tally.streams.is_empty(), "a second without a stream");
}

#[test]
fn an_interval_breaks_down_what_it_added() {
    let mut r = Recorder::with_groups(2, 0, false);
    r.record_in(&ok(100), &[Some(1)]);
    r.record(&RequestSample {
        status: Some(503),
        error: Some(ErrorKind::Http5xx),
        lag_us: Some(2_000),
        ..ok(7)
    });
    let s = r.take_interval(0, 1.0, 0);
    assert_eq!(s.breakdown.statuses, vec![(200, 1), (503, 1)]);
    assert_eq!(s.breakdown.errors, vec![(ErrorKind::Http5xx, 1)]);
    assert!((1_990..=2_010).contains(&s.breakdown.lag_p99_us));
    assert_eq!(s.breakdown.groups[1].requests, 1);
    assert_eq!(s.breakdown.groups[0].requests, 0);
    r.record(&ok(100));
    let s = r.take_interval(1, 1.0, 0);
    assert_eq!(
        s.breakdown.statuses,
        vec![(200, 1)],
        "only the new second's"
    );
    assert!(s.breakdown.errors.is_empty());
    assert!(s.breakdown.lag_p99_us <= 1, "{}", s.breakdown.lag_p99_us);
    assert_eq!(s.breakdown.groups[1].requests, 0);
}

#[test]
fn a_second_holds_the_responses_that_finished_in_it_even_when_taken_late() {
    let mut r = Recorder::new();
    let at = |done_us: u64| RequestSample { done_us, ..ok(100) };
    r.record(&at(999_999));
    // Second 0's snapshot is taken late, after a response of second 1 was recorded.
    r.record(&at(1_000_500));
    let s0 = r.take_interval(0, 1.0, 0);
    assert_eq!(s0.counters.requests, 1);
    assert_eq!(s0.latency.len(), 1);
    r.record(&at(1_200_000));
    let s1 = r.take_interval(1, 1.0, 0);
    assert_eq!(s1.counters.requests, 2);
    assert_eq!(s1.latency.len(), 2);
    // A worker's last interval takes everything left, what finished after its second too.
    r.record(&at(2_100_000));
    r.record(&at(3_000_001));
    let last = r.take_last_interval(2, 0.5, 0);
    assert_eq!(last.counters.requests, 2);
    assert_eq!(r.counters.requests, 5);
}

#[test]
fn group_by_values_come_with_each_interval_only_when_asked() {
    let mut off = Recorder::new().with_group_tables(1);
    let mut on = Recorder::new().with_group_tables(1).with_live_values(true);
    for r in [&mut off, &mut on] {
        r.record_grouped(0, Some(b"b1"), &ok(1_000));
        r.record_grouped(0, Some(b"b2"), &ok(2_000));
        r.record_grouped(0, Some(b"b1"), &ok(1_000));
    }
    assert!(off.take_interval(0, 1.0, 0).breakdown.grouped.is_empty());
    let first = on.take_interval(0, 1.0, 0).breakdown.grouped;
    let counts: Vec<(ValueKey, u64)> = first[0]
        .iter()
        .map(|v| (v.key.clone(), v.exchanges))
        .collect();
    let key = |v: &[u8]| ValueKey::Value(v.into());
    assert_eq!(counts, [(key(b"b1"), 2), (key(b"b2"), 1)]);
    on.record_grouped(0, Some(b"b2"), &ok(2_000));
    let next = on.take_interval(1, 1.0, 0).breakdown.grouped;
    assert_eq!(next[0].len(), 1, "only b2 recorded anything: {next:?}");
    assert_eq!((&next[0][0].key, next[0][0].exchanges), (&key(b"b2"), 1));
}

#[test]
fn stream_latencies_come_with_each_interval_only_when_asked() {
    let sample = StreamSample {
        ok: true,
        ending: Some(Ending::Eof),
        first_us: Some(2_000),
        gaps_us: &[10_000, 10_000],
        messages: 3,
        stream_us: 25_000,
        tokens: None,
        per_token_us: None,
        good: None,
        drained: false,
        sent: 3,
        round_trips_us: &[5_000, 6_000, 7_000],
    };
    let mut off = Recorder::new();
    let mut on = Recorder::new().with_live_streams(true);
    for r in [&mut off, &mut on] {
        r.record_stream(&sample, &[]);
    }
    assert!(off.take_interval(0, 1.0, 0).breakdown.streams.is_none());
    let first = on
        .take_interval(0, 1.0, 0)
        .breakdown
        .streams
        .expect("a stream ended");
    assert_eq!(
        (first.first.len(), first.gap.len(), first.round_trip.len()),
        (1, 2, 3)
    );
    assert!(first.round_trip.equivalent(first.round_trip.max(), 7_000));
    // The next interval holds only what ended in it: nothing.
    assert!(on.take_interval(1, 1.0, 0).breakdown.streams.is_none());
    on.record_stream(&sample, &[]);
    let again = on.take_interval(2, 1.0, 0).breakdown.streams.unwrap();
    assert_eq!(again.round_trip.len(), 3);
}
