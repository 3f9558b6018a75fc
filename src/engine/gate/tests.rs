use super::*;

fn ticket() -> Ticket {
    let now = Instant::now();
    Ticket {
        due: Some(now),
        arrival: now,
        measured: true,
    }
}

#[tokio::test(flavor = "current_thread")]
async fn vus_are_started_as_needed_up_to_the_cap_and_reused() {
    let d = std::rc::Rc::new(OpenDispatch::new(2));
    assert_eq!(d.started(), 0, "nothing up front");
    assert_eq!(d.hand_out(ticket()), HandOut::Start(0));
    // Slot 0 takes its ticket at once, then waits for the next.
    assert!(d.next(0).await.is_some());
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let d0 = d.clone();
            let vu0 = tokio::task::spawn_local(async move { d0.next(0).await });
            tokio::task::yield_now().await;
            // Slot 0 is idle: it gets the next ticket, no new VU.
            assert_eq!(d.hand_out(ticket()), HandOut::Handed);
            assert!(vu0.await.unwrap().is_some());
            // Slot 0 is busy now (it has not asked again): a second VU, then the cap.
            assert_eq!(d.hand_out(ticket()), HandOut::Start(1));
            assert_eq!(d.hand_out(ticket()), HandOut::Dropped);
            assert_eq!(d.started(), 2);
            // Closing releases the waiting VUs.
            assert!(d.next(1).await.is_some(), "slot 1 holds its ticket");
            let d1 = d.clone();
            let vu1 = tokio::task::spawn_local(async move { d1.next(1).await });
            tokio::task::yield_now().await;
            d.close();
            assert!(vu1.await.unwrap().is_none());
        })
        .await;
}

/// A VU waiting in `next` is released by a hand-out, not before; the cap's next ticket drops.
#[tokio::test(flavor = "current_thread")]
async fn an_idle_vu_waits_until_a_ticket_is_handed_to_it() {
    let d = OpenDispatch::new(1);
    assert_eq!(d.hand_out(ticket()), HandOut::Start(0));
    assert!(d.next(0).await.is_some());
    let mut waiting = std::pin::pin!(d.next(0));
    assert!(poll_once(waiting.as_mut()).is_pending());
    assert!(poll_once(waiting.as_mut()).is_pending(), "still nothing");
    let t = ticket();
    assert_eq!(d.hand_out(t), HandOut::Handed);
    let Poll::Ready(Some(got)) = poll_once(waiting.as_mut()) else {
        panic!("released by the hand-out");
    };
    assert_eq!(got.due, t.due);
    // Its VU is busy now and the cap is 1: the next iteration is dropped, not queued.
    assert_eq!(d.hand_out(ticket()), HandOut::Dropped);
}

/// Polls `fut` once, in place.
fn poll_once<F: std::future::Future>(fut: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    let mut cx = std::task::Context::from_waker(Waker::noop());
    fut.poll(&mut cx)
}

mod closed {
    //! The closed model's rule, on tokio's paused clock.

    use std::time::Duration;

    use super::*;
    use crate::engine::clock::PausedClock;
    use crate::schedule::Stage;

    /// 0 → 10 VUs over 10 s: VU `i` becomes active at `i + 1` seconds.
    fn ramp() -> Ramp {
        Ramp::new(
            0.0,
            vec![Stage {
                duration: Duration::from_secs(10),
                target: 10.0,
            }],
        )
    }

    fn rule<'a>(
        ramp: &'a Ramp,
        start: Instant,
        remaining: Option<&'a AtomicU64>,
    ) -> ClosedRule<'a> {
        ClosedRule {
            ramp,
            per_vu: None,
            start,
            end: Some(start + ramp.total()),
            measure_start: start,
            remaining,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_vu_waits_until_the_ramp_reaches_it() {
        let ramp = ramp();
        let start = PausedClock.now();
        let rule = rule(&ramp, start, None);
        let mut next = std::pin::pin!(closed_ticket(&rule, &PausedClock, || false, 4, 0));
        assert!(poll_once(next.as_mut()).is_pending());
        tokio::time::advance(Duration::from_millis(4_990)).await;
        assert!(poll_once(next.as_mut()).is_pending(), "level 4.99 < 5");
        tokio::time::advance(Duration::from_millis(10)).await;
        let Poll::Ready(Some(ticket)) = poll_once(next.as_mut()) else {
            panic!("VU 4 is active at 5 s");
        };
        assert_eq!(ticket.arrival, start + Duration::from_secs(5));
        assert_eq!(
            ticket.due, None,
            "a closed iteration is measured from its send"
        );
        assert!(ticket.measured);
        // Past the scenario's end no VU starts.
        tokio::time::advance(Duration::from_secs(5)).await;
        assert!(
            closed_ticket(&rule, &PausedClock, || false, 0, 1)
                .await
                .is_none()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_shared_count_admits_exactly_n() {
        let ramp = Ramp::constant(3.0, Duration::from_secs(10));
        let start = PausedClock.now();
        let remaining = AtomicU64::new(4);
        let rule = rule(&ramp, start, Some(&remaining));
        let mut admitted = 0;
        for done in 0..3 {
            for vu in 0..3 {
                if closed_ticket(&rule, &PausedClock, || false, vu, done)
                    .await
                    .is_some()
                {
                    admitted += 1;
                }
            }
        }
        assert_eq!(admitted, 4, "3 VUs × 3 asks, 4 iterations to share");
        assert_eq!(remaining.load(Ordering::Relaxed), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn warm_up_tickets_are_unmeasured_and_take_no_count() {
        let ramp = Ramp::constant(1.0, Duration::from_secs(10));
        let start = PausedClock.now();
        let remaining = AtomicU64::new(1);
        let counted = ClosedRule {
            per_vu: Some(2),
            measure_start: start + Duration::from_secs(1),
            ..rule(&ramp, start, Some(&remaining))
        };
        let warm = closed_ticket(&counted, &PausedClock, || false, 0, 0).await;
        assert!(warm.is_some_and(|t| !t.measured));
        assert_eq!(remaining.load(Ordering::Relaxed), 1);
        tokio::time::advance(Duration::from_secs(1)).await;
        let first = closed_ticket(&counted, &PausedClock, || false, 0, 1).await;
        assert!(first.is_some_and(|t| t.measured));
        // Two per VU: done, shared count or not.
        assert!(
            closed_ticket(&counted, &PausedClock, || false, 0, 2)
                .await
                .is_none()
        );
        let per_vu = ClosedRule {
            per_vu: Some(2),
            ..rule(&ramp, start, None)
        };
        assert!(
            closed_ticket(&per_vu, &PausedClock, || false, 0, 1)
                .await
                .is_some()
        );
        assert!(
            closed_ticket(&per_vu, &PausedClock, || false, 0, 2)
                .await
                .is_none()
        );
        // A stopped run admits no one.
        assert!(
            closed_ticket(&counted, &PausedClock, || true, 1, 0)
                .await
                .is_none()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn before_its_start_a_scenario_waits() {
        let ramp = Ramp::constant(2.0, Duration::from_secs(10));
        let start = PausedClock.now() + Duration::from_secs(3);
        let rule = rule(&ramp, start, None);
        let mut next = std::pin::pin!(closed_ticket(&rule, &PausedClock, || false, 1, 0));
        assert!(poll_once(next.as_mut()).is_pending());
        tokio::time::advance(Duration::from_secs(3)).await;
        let Poll::Ready(Some(ticket)) = poll_once(next.as_mut()) else {
            panic!("active from the start");
        };
        assert_eq!(ticket.arrival, start);
    }
}
