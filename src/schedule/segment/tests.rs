//! Segment arithmetic: parsing, and property tests that the N shares of every kind of load add
//! up exactly to the whole, over many random inputs.

use std::time::Duration;

use super::*;

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

#[test]
fn segments_parse_from_zero() {
    assert_eq!(Segment::parse("0/3").unwrap(), Segment::new(0, 3).unwrap());
    assert_eq!(Segment::parse(" 2 / 3 ").unwrap().index(), 2);
    assert_eq!(Segment::parse("0/1").unwrap(), Segment::WHOLE);
    assert_eq!(
        Segment::from_job_index("4\n", 5).unwrap().to_string(),
        "4/5"
    );
    let e = Segment::parse("3/3").unwrap_err().to_string();
    assert!(
        e.contains("shares are numbered from 0") && e.contains("use 0/3 … 2/3"),
        "{e}"
    );
    assert!(
        Segment::parse("1/0")
            .unwrap_err()
            .to_string()
            .contains("between 1 and")
    );
    for bad in ["", "1", "a/3", "1/b", "-1/3", "1/3/4"] {
        assert!(
            matches!(Segment::parse(bad), Err(SegmentError::Syntax(_))),
            "{bad}"
        );
    }
    assert!(Segment::from_job_index("7", 3).is_err());
}

#[test]
fn counts_add_up_and_differ_by_at_most_one() {
    let mut rng = fastrand::Rng::with_seed(13);
    for _ in 0..2000 {
        let n = rng.u32(1..40);
        let total = match rng.u8(0..3) {
            0 => rng.u64(0..100),
            1 => rng.u64(0..1_000_000_000),
            _ => u64::MAX - rng.u64(0..1000),
        };
        let shares: Vec<u64> = (0..n)
            .map(|i| Segment::new(i, n).unwrap().share_of(total))
            .collect();
        assert_eq!(
            shares.iter().map(|&s| u128::from(s)).sum::<u128>(),
            u128::from(total)
        );
        let (lo, hi) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
        assert!(hi - lo <= 1, "{total} over {n}: {shares:?}");
        // The remainder goes to the first shares.
        assert!(shares.windows(2).all(|w| w[0] >= w[1]), "{shares:?}");
        let first = rng.u64(0..1_000_000);
        let count = rng.u64(0..1_000_000);
        let ranged: u64 = (0..n)
            .map(|i| Segment::new(i, n).unwrap().share_of_range(first, count))
            .sum();
        assert_eq!(ranged, count);
    }
}

#[test]
fn items_are_owned_by_exactly_one_share() {
    for n in 1..7u32 {
        for item in 0..50u64 {
            let owners: Vec<u32> = (0..n)
                .filter(|&i| Segment::new(i, n).unwrap().owns(item))
                .collect();
            assert_eq!(owners.len(), 1);
            let seg = Segment::new(owners[0], n).unwrap();
            assert_eq!(seg.whole_index(item / u64::from(n)), item);
        }
    }
}

#[test]
fn data_rows_are_split_without_overlap() {
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..300 {
        let n = rng.u32(1..12);
        let len = rng.usize(0..200);
        let mut all: Vec<usize> = (0..n)
            .flat_map(|i| Segment::new(i, n).unwrap().rows(len).collect::<Vec<_>>())
            .collect();
        let per_share: Vec<usize> = (0..n)
            .map(|i| Segment::new(i, n).unwrap().rows(len).count())
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..len).collect::<Vec<_>>(), "{len} rows over {n}");
        for (i, &c) in per_share.iter().enumerate() {
            let seg = Segment::new(i as u32, n).unwrap();
            assert_eq!(c as u64, seg.share_of(len as u64));
        }
    }
}

/// A random ramp: jumps, holds, rises and falls, whole and fractional levels.
fn random_ramp(rng: &mut fastrand::Rng, max_level: f64, max_stage_s: f64) -> Ramp {
    let level = |rng: &mut fastrand::Rng| {
        let x = rng.f64() * max_level;
        if rng.bool() { x.round() } else { x }
    };
    let start = if rng.bool() { 0.0 } else { level(rng) };
    let mut prev = start;
    let stages = (0..rng.usize(1..6))
        .map(|_| {
            let duration = if rng.u8(0..5) == 0 {
                Duration::ZERO
            } else {
                secs(0.1 + rng.f64() * max_stage_s)
            };
            let target = if rng.u8(0..3) == 0 { prev } else { level(rng) };
            prev = target;
            Stage { duration, target }
        })
        .collect();
    Ramp::new(start, stages)
}

#[test]
fn vu_shares_run_exactly_the_whole_vus_at_every_instant() {
    let mut rng = fastrand::Rng::with_seed(2024);
    for case in 0..400 {
        let whole = random_ramp(&mut rng, 60.0, 20.0);
        let n = rng.u32(1..9);
        let shares: Vec<Ramp> = (0..n)
            .map(|i| Segment::new(i, n).unwrap().vu_ramp(&whole))
            .collect();
        for s in &shares {
            assert_eq!(s.total(), whole.total(), "case {case}");
            assert!(
                std::iter::once(s.level_at(Duration::ZERO))
                    .chain(s.stages().iter().map(|st| st.target))
                    .all(|l| l.fract() == 0.0),
                "case {case}: share levels are whole VU counts"
            );
        }
        // Where the whole holds its peak for a while, the shares' peaks add up to it.
        let held = held_peak(&whole);
        if whole.peak() == held
            && whole
                .stages()
                .iter()
                .any(|st| !st.duration.is_zero() && st.target == held && is_flat_at_end(&whole, st))
        {
            let peaks: f64 = shares.iter().map(Ramp::peak).sum();
            assert_eq!(peaks, (held + 1e-9).floor(), "case {case}");
        }
        let top = whole.peak().ceil() as u32 + 1;
        for _ in 0..200 {
            let t = secs(rng.f64() * (whole.total().as_secs_f64() + 1.0));
            let level = whole.level_at(t);
            if (level - level.round()).abs() < 1e-6 && t < whole.total() && !is_flat(&whole, t) {
                continue; // a VU starts or stops at this very instant
            }
            for vu in 0..top {
                let (i, j) = (vu % n, vu / n);
                assert_eq!(
                    shares[i as usize].vu_active(j, t),
                    whole.vu_active(vu, t),
                    "case {case}: VU {vu} (share {i}/{n}'s VU {j}) at {t:?}, level {level}"
                );
            }
        }
    }
}

/// The highest level a ramp holds for some time (a level jumped past at once runs no VU).
fn held_peak(r: &Ramp) -> f64 {
    let mut prev = r.level_at(Duration::ZERO);
    let mut peak = 0.0f64;
    for s in r.stages() {
        if !s.duration.is_zero() {
            peak = peak.max(prev).max(s.target);
        }
        prev = s.target;
    }
    peak
}

/// Whether stage `st` of `r` is a hold (its level at its start is its target).
fn is_flat_at_end(r: &Ramp, st: &Stage) -> bool {
    let mut t = Duration::ZERO;
    for s in r.stages() {
        if std::ptr::eq(s, st) {
            return r.level_at(t) == st.target;
        }
        t += s.duration;
    }
    false
}

/// Whether the ramp holds its level around `t` (no VU starts or stops there).
fn is_flat(r: &Ramp, t: Duration) -> bool {
    let d = Duration::from_micros(1);
    r.level_at(t.saturating_sub(d)) == r.level_at(t) && r.level_at(t + d) == r.level_at(t)
}

#[test]
fn a_constant_vu_count_splits_as_the_count() {
    let whole = Ramp::constant(10.0, secs(5.0));
    let shares: Vec<f64> = (0..3)
        .map(|i| Segment::new(i, 3).unwrap().vu_ramp(&whole))
        .map(|r| {
            assert_eq!(r.stages().len(), 1);
            r.peak()
        })
        .collect();
    assert_eq!(shares, [4.0, 3.0, 3.0]);
}

#[test]
fn arrival_shares_are_exactly_the_whole_schedule() {
    let mut rng = fastrand::Rng::with_seed(99);
    for case in 0..200 {
        let whole = random_ramp(&mut rng, 300.0, 8.0);
        if whole.due(0).is_none() {
            continue;
        }
        let n = rng.u32(1..7);
        let shares: Vec<Ramp> = (0..n)
            .map(|i| Segment::new(i, n).unwrap().arrival_ramp(&whole))
            .collect();
        let all = |r: &Ramp| (0..).map_while(|k| r.due(k)).collect::<Vec<_>>();
        let whole_due = all(&whole);
        let mut union: Vec<(Duration, u64)> = Vec::new();
        for (i, s) in shares.iter().enumerate() {
            let seg = Segment::new(i as u32, n).unwrap();
            for (k, t) in all(s).into_iter().enumerate() {
                union.push((t, seg.whole_index(k as u64)));
            }
            assert!((s.peak() * f64::from(n) - whole.peak()).abs() < 1e-9);
        }
        union.sort_by_key(|&(_, g)| g);
        assert_eq!(union.len(), whole_due.len(), "case {case}: {n} shares");
        for (g, (&(t, index), &w)) in union.iter().zip(&whole_due).enumerate() {
            assert_eq!(index, g as u64, "case {case}: every arrival once");
            let gap = t.abs_diff(w);
            assert!(
                gap <= Duration::from_nanos(2),
                "case {case}: arrival {g} at {t:?}, whole {w:?}"
            );
        }
        for _ in 0..50 {
            let t = secs(rng.f64() * (whole.total().as_secs_f64() + 1.0));
            let sum: u64 = shares.iter().map(|s| s.count_before(t)).sum();
            assert_eq!(sum, whole.count_before(t), "case {case} at {t:?}");
        }
    }
}

#[test]
fn an_arrival_count_after_a_warm_up_splits_exactly() {
    // Quick mode `--rate 3000 -n 30000 --warmup 1.0001s`: the measured arrivals are the
    // whole's [count_before(warm-up), + 30000); each share's are its own part of them.
    let whole = Ramp::constant(3000.0, secs(100.0));
    let warmup = secs(1.0001);
    let first = whole.count_before(warmup);
    let mut measured = 0;
    for i in 0..3 {
        let seg = Segment::new(i, 3).unwrap();
        let share = seg.arrival_ramp(&whole);
        let own_first = share.count_before(warmup);
        let limit = seg.share_of_range(first, 30_000);
        // The share's events own_first … own_first + limit − 1 are the whole's, in range.
        assert!(seg.whole_index(own_first) >= first);
        assert!(own_first == 0 || seg.whole_index(own_first - 1) < first);
        assert!(seg.whole_index(own_first + limit - 1) < first + 30_000);
        assert!(seg.whole_index(own_first + limit) >= first + 30_000);
        measured += limit;
    }
    assert_eq!(measured, 30_000);
}
