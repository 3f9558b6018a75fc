use super::*;
use crate::record::recorder::{Counters, new_histogram};

fn register(index: Option<u32>) -> Register {
    Register {
        plan_hash: "sha256:a".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        index,
        count: None,
        host: "h".into(),
        whole: None,
    }
}

fn state(count: u32, now: Instant) -> CoordinatorState {
    CoordinatorState::new(
        count,
        None,
        Duration::from_secs(5),
        Distributed::default(),
        now,
    )
}

fn second(k: u64, requests: u64) -> IntervalSnapshot {
    IntervalSnapshot {
        second: k,
        span_s: 1.0,
        counters: Counters {
            requests,
            ..Counters::default()
        },
        latency: new_histogram(),
        in_flight: 0,
        groups: Vec::new(),
        checks: Vec::new(),
        tally: Default::default(),
        breakdown: Default::default(),
    }
}

#[test]
fn shares_are_given_as_asked_or_the_first_free_and_never_twice() {
    let now = Instant::now();
    let mut s = state(3, now);
    assert_eq!(s.register(&register(Some(2)), now).unwrap().index, 2);
    assert_eq!(s.register(&register(None), now).unwrap().index, 0);
    let taken = s.register(&register(Some(2)), now).unwrap_err();
    assert_eq!(taken.status, 409);
    assert!(taken.why.contains("share 2/3 is taken"), "{}", taken.why);
    assert!(taken.why.contains("h asked for it too"), "{}", taken.why);
    let mut other = register(None);
    other.plan_hash = "sha256:b".into();
    assert!(
        s.register(&other, now)
            .unwrap_err()
            .why
            .contains("sha256:b")
    );
    assert_eq!(
        s.start(0, now).unwrap(),
        StartReply::Waiting {
            registered: 2,
            count: 3
        }
    );
    assert_eq!(s.register(&register(None), now).unwrap().index, 1);
    let StartReply::Start { start_at_unix_ms } = s.start(1, now).unwrap() else {
        panic!("every share is registered");
    };
    assert_eq!(start_at_unix_ms % 1000, 0, "a whole second");
}

#[test]
fn the_wait_ends_naming_the_missing_shares() {
    let now = Instant::now();
    let mut s = state(3, now);
    s.register(&register(Some(1)), now).unwrap();
    s.tick(now + Duration::from_secs(6));
    assert!(s.finished());
    let StartReply::Failed { error } = s.start(1, now).unwrap() else {
        panic!("the wait is over");
    };
    assert!(error.contains("missing shares 0/3, 2/3"), "{error}");
}

#[test]
fn a_silent_share_is_lost_and_the_test_goes_on() {
    let now = Instant::now();
    let mut s = state(2, now);
    s.register(&register(None), now).unwrap();
    s.register(&register(None), now).unwrap();
    let later = now + Duration::from_secs(8);
    s.snapshot(0, &second(0, 10), later).unwrap();
    s.tick(now + Duration::from_secs(13));
    assert_eq!(s.shares[1].status, ShareStatus::Lost);
    assert_eq!(s.shares[0].status, ShareStatus::Running);
    assert!(s.stop.is_none(), "on_lost = continue");
    assert!(s.heartbeat(1, later).is_err(), "a lost share stays lost");
    assert!(!s.finished());
}

#[test]
fn on_lost_stop_tells_every_generator_to_stop() {
    let now = Instant::now();
    let settings = Distributed {
        on_lost: OnLost::Stop,
        ..Distributed::default()
    };
    let mut s = CoordinatorState::new(2, None, Duration::from_secs(5), settings, now);
    s.register(&register(None), now).unwrap();
    s.register(&register(None), now).unwrap();
    s.heartbeat(0, now + Duration::from_secs(12)).unwrap();
    s.tick(now + Duration::from_secs(13));
    let reply = s.heartbeat(0, now + Duration::from_secs(13)).unwrap();
    assert!(
        matches!(reply.stop, Some(StopOrder::Interrupt { ref why }) if why.contains("share 1/2")),
        "{reply:?}"
    );
}

#[test]
fn whole_seconds() {
    let t = SystemTime::UNIX_EPOCH + Duration::from_millis(10_001);
    assert_eq!(
        whole_second_after(t),
        SystemTime::UNIX_EPOCH + Duration::from_secs(11)
    );
    let exact = SystemTime::UNIX_EPOCH + Duration::from_secs(10);
    assert_eq!(whole_second_after(exact), exact);
}

#[test]
fn a_share_given_to_a_generator_that_did_not_ask_is_not_given_again() {
    let now = Instant::now();
    let mut s = state(2, now);
    let mut free = register(None);
    free.host = "gen-a".into();
    assert_eq!(s.register(&free, now).unwrap().index, 0);
    let mut asking = register(Some(0));
    asking.host = "gen-b".into();
    let taken = s.register(&asking, now).unwrap_err();
    assert_eq!(taken.status, 409);
    for part in [
        "share 0/2 is taken",
        "gave it to gen-a",
        "without asking for a share",
        "give every generator its share (--segment i/N or JOB_COMPLETION_INDEX) or none",
    ] {
        assert!(taken.why.contains(part), "{part}: {}", taken.why);
    }
    // Share 0 is still gen-a's; share 1 is still free, for the next generator.
    assert_eq!(s.shares[0].host, "gen-a");
    assert_eq!(s.shares[1].status, ShareStatus::Free);
    assert_eq!(s.register(&register(Some(1)), now).unwrap().index, 1);
}
