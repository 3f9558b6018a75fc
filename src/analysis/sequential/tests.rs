use super::*;

fn design(metrics: Vec<Metric>) -> Design {
    Design {
        metrics: metrics.into_iter().map(Figure::of_runs).collect(),
        max_pairs: 20,
        threshold_pct: 2.0,
        comparisons: 1,
    }
}

#[test]
fn a_percentile_of_too_few_responses_is_never_looked_at() {
    // 500 responses a run: p99.9 is the run's slowest; p50 is judged.
    let r = crate::record::fixture::record("r", 5, 100, 1_000, 0, 0.0);
    let mut seq = Sequence::new(design(vec![Metric::P99_9, Metric::P50]));
    for _ in 0..3 {
        seq.add_pair(&r, &r);
    }
    assert!(
        seq.looks[0].is_none() && seq.looks[1].is_some(),
        "{:?}",
        seq.looks
    );
}

#[test]
fn no_errors_anywhere_is_equivalent_only_over_enough_attempts() {
    let runs = |per_second: u64| {
        let mut seq = Sequence::new(design(vec![Metric::ErrorRate]));
        let r = crate::record::fixture::record("r", 10, per_second, 1_000, 0, 0.0);
        for _ in 0..3 {
            seq.add_pair(&r, &r);
        }
        seq.looks[0].expect("looked")
    };
    // 30 attempts a run: the runs' rates agree exactly, the counts show nothing.
    let few = runs(3);
    assert_eq!(few.call, Call::Undecided, "{few:?}");
    assert!(few.interval.1 > 1.0, "{few:?}");
    // Shown at the look's level, 1 − a: the counts' interval at that level, not at 1 − 2a.
    let side = (90, 0); // 3 runs of 30 attempts, no error
    let wide = crate::analysis::proportion::difference_pp(side, side, 1.0 - few.level);
    assert_eq!(few.interval, wide.expect("an interval"), "{few:?}");
    // 20,000 a run: 0 of 60,000 a side is within ±0.1 pp.
    assert_eq!(runs(2_000).call, Call::Equivalent);
}

#[test]
fn the_looks_spend_exactly_alpha_over_the_horizon() {
    let d = design(vec![Metric::Throughput, Metric::P99]);
    let total: f64 = (1..=20).map(|j| d.level(j) * 2.0).sum();
    assert!((total - ALPHA).abs() < 1e-12, "{total}");
    assert_eq!(d.level(2), 0.0);
    // Pocock-type: the first look gets what three pairs' worth of the horizon spend.
    assert!(d.level(3) > d.level(4) && d.level(4) > d.level(20));
    assert_eq!(d.level(25), 0.0, "nothing left beyond the horizon");
}

#[test]
fn a_large_change_is_called_early_in_its_direction() {
    let d = design(vec![Metric::Throughput, Metric::P50]);
    let a = [1000.0, 1010.0, 990.0, 1005.0, 995.0];
    let b = [1200.0, 1190.0, 1210.0, 1195.0, 1205.0];
    let look = d.look(Metric::Throughput, &a, &b, 5).unwrap();
    assert_eq!(look.call, Call::Better);
    assert!((look.change - 20.0).abs() < 0.5, "{look:?}");
    let la = [2.0, 2.02, 1.98, 2.01, 1.99];
    let lb = [2.4, 2.42, 2.38, 2.41, 2.39];
    assert_eq!(d.look(Metric::P50, &la, &lb, 5).unwrap().call, Call::Worse);
}

#[test]
fn equal_sides_are_equivalent_only_once_the_interval_is_inside_the_threshold() {
    let d = design(vec![Metric::Throughput]);
    let noisy_a = [1000.0, 1080.0, 940.0];
    let noisy_b = [1010.0, 930.0, 1070.0];
    let look = d.look(Metric::Throughput, &noisy_a, &noisy_b, 3).unwrap();
    assert_eq!(look.call, Call::Undecided, "{look:?}");
    let a: Vec<f64> = (0..12).map(|i| 1000.0 + f64::from(i % 3)).collect();
    let b: Vec<f64> = (0..12).map(|i| 1001.0 - f64::from(i % 3)).collect();
    let look = d.look(Metric::Throughput, &a, &b, 12).unwrap();
    assert_eq!(look.call, Call::Equivalent, "{look:?}");
}

#[test]
fn the_error_rate_is_judged_against_compares_threshold_whatever_the_relative_one() {
    // Error rates (%) 0.15 pp higher in every pair: past compare's 0.1 pp at any threshold.
    let a = [0.10, 0.12, 0.11, 0.10, 0.12, 0.11];
    let b = [0.25, 0.27, 0.26, 0.25, 0.27, 0.26];
    for threshold_pct in [2.0, 5.0] {
        let d = Design {
            threshold_pct,
            ..design(vec![Metric::ErrorRate])
        };
        let look = d.look(Metric::ErrorRate, &a, &b, 6).unwrap();
        assert_eq!(
            look.call,
            Call::Worse,
            "--threshold {threshold_pct}: {look:?}"
        );
    }
}

#[test]
fn too_few_pairs_or_unusable_values_are_not_looked_at() {
    let d = design(vec![Metric::P99]);
    assert!(d.look(Metric::P99, &[1.0, 2.0], &[1.0, 2.0], 2).is_none());
    assert!(
        d.look(Metric::P99, &[1.0, 0.0, 1.0], &[1.0, 2.0, 1.0], 3)
            .is_none()
    );
    assert!(
        d.look(Metric::ErrorRate, &[0.0; 3], &[0.0; 3], 3)
            .is_some_and(|l| l.call == Call::Equivalent)
    );
    // A run without the figure (every request failed) is never left out: the runs that
    // worked would call the sides equivalent.
    let d = design(vec![Metric::Throughput]);
    let a = [1000.0, 1001.0, 999.0, 1000.0, 1001.0, 999.0];
    let b = [1000.0, 0.0, 1001.0, 999.0, 1000.0, 1000.5];
    assert!(d.look(Metric::Throughput, &a, &b, 6).is_none());
}

#[test]
fn a_tail_call_must_survive_leaving_out_any_one_pair() {
    let d = design(vec![Metric::P99]);
    let a = [10.0, 10.1, 9.9, 10.0, 10.05];
    // Every pair 20 % slower: called once there are 4 pairs to leave one out of.
    let shifted = [12.0, 12.1, 11.9, 12.0, 12.06];
    let at3 = d.look(Metric::P99, &a[..3], &shifted[..3], 3).unwrap();
    assert_eq!(at3.call, Call::Undecided, "{at3:?}");
    assert_eq!(at3.withheld, Some(TailGuard::TooFewRuns));
    let at5 = d.look(Metric::P99, &a, &shifted, 5).unwrap();
    assert_eq!((at5.call, at5.withheld), (Call::Worse, None), "{at5:?}");
    // The same 20 % on p50, which has no guard, is called at 3 pairs.
    let p50 = design(vec![Metric::P50]).look(Metric::P50, &a[..3], &shifted[..3], 3);
    assert_eq!(p50.unwrap().call, Call::Worse);
    // B 4.5–7.6 % slower in every pair: the five pairs' interval lies beyond +2 %, but
    // leaving out one pair widens it past the threshold, so the call is withheld.
    let (base, b) = ([10.0; 5], [10.63, 10.76, 10.45, 10.70, 10.60]);
    let unguarded = paired(&base.map(f64::ln), &b.map(f64::ln)).unwrap();
    let lo = 100.0 * unguarded.interval(1.0 - d.level(5)).0.exp_m1();
    assert!(lo > 2.0, "{lo}");
    let look = d.look(Metric::P99, &base, &b, 5).unwrap();
    assert_eq!(look.call, Call::Undecided, "{look:?}");
    assert_eq!(look.withheld, Some(TailGuard::OneRunCarriesIt));
}

#[test]
fn simulated_a_a_sequences_make_few_false_calls() {
    // Normal per-run noise of 3 %, 400 A/A sequences of up to 20 pairs: the union bound
    // says at most 5 %.
    let d = design(vec![Metric::Throughput]);
    let mut rng = fastrand::Rng::with_seed(11);
    let mut normal = move || {
        let (u, v) = (rng.f64().max(1e-12), rng.f64());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let mut false_calls = 0;
    for _ in 0..400 {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for pairs in 1..=20 {
            a.push(1000.0 * (1.0 + 0.03 * normal()));
            b.push(1000.0 * (1.0 + 0.03 * normal()));
            let call = d.look(Metric::Throughput, &a, &b, pairs).map(|l| l.call);
            if matches!(call, Some(Call::Better | Call::Worse)) {
                false_calls += 1;
                break;
            }
            if call.is_some_and(Call::decided) {
                break;
            }
        }
    }
    assert!(false_calls <= 20, "{false_calls} of 400");
}
