//! How an open scenario's arrivals are spaced: evenly at the rate (volley's default, wrk2's and
//! k6's), or as a Poisson process of the rate (Lancet's and mutilate's default), whose gaps are
//! exponential and whose bursts are what queues at a real service feel.
//!
//! A Poisson process of rate λ(t) is a unit-rate one seen through the rate's integral Λ(t):
//! arrival `k` falls when Λ reaches the sum of `k + 1` exponential gaps of mean 1. Each worker
//! (and each `--segment` share) runs its own stream of rate λ/W: independent Poisson processes
//! add up to a Poisson process of the summed rate, so the run's arrivals are one of rate λ. A
//! stream's gaps come from a seeded generator: the same seed, threads and segment give the same
//! arrivals (with the same volley build).

/// How an open scenario's arrivals are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArrivalProcess {
    /// Evenly: arrival `n` falls when the rate's integral reaches `n`.
    #[default]
    Uniform,
    /// A Poisson process of the rate: exponential gaps, from `seed`.
    Poisson {
        /// The run's seed (`--seed`, a plan's `seed`; drawn at random and recorded otherwise).
        seed: u64,
    },
}

impl ArrivalProcess {
    /// The name in plans, flags and the record: `uniform` or `poisson`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Uniform => "uniform",
            Self::Poisson { .. } => "poisson",
        }
    }

    /// The seed of a Poisson process.
    pub fn seed(self) -> Option<u64> {
        match self {
            Self::Uniform => None,
            Self::Poisson { seed } => Some(seed),
        }
    }
}

/// The number of the Poisson stream of scenario `scenario`, share `segment` of the test, worker
/// `worker`: distinct for every such triple.
pub fn stream_id(scenario: usize, segment: u32, worker: usize) -> u64 {
    (scenario as u64) << 40 | u64::from(segment) << 20 | worker as u64
}

/// How many arrivals the Poisson streams of `workers` workers (of `scenario` and `segment`,
/// from `seed`) put in `[from, to)` of `ramp`'s time: the realised count the pacers ran, replayed
/// (the record's `due`, where evenly spaced arrivals have the rate's integral).
pub fn count_between(
    ramp: &super::Ramp,
    seed: u64,
    (scenario, segment): (usize, u32),
    workers: usize,
    from: std::time::Duration,
    to: std::time::Duration,
) -> u64 {
    let mut n = 0;
    for worker in 0..workers.max(1) {
        let mut s = PoissonStream::new(seed, stream_id(scenario, segment, worker), workers);
        while let Some(t) = ramp.due_area(s.next_area()) {
            if t >= to {
                break;
            }
            n += u64::from(t >= from);
        }
    }
    n
}

/// One stream of a Poisson process: where its arrivals fall in the rate's integral.
#[derive(Debug, Clone)]
pub struct PoissonStream {
    rng: fastrand::Rng,
    /// The integral at the last arrival.
    area: f64,
    /// The integral per unit gap: the number of streams sharing the rate.
    scale: f64,
}

impl PoissonStream {
    /// Stream `stream` (a worker's and share's own number) of `seed`, one of `streams` that share
    /// the rate evenly.
    pub fn new(seed: u64, stream: u64, streams: usize) -> Self {
        // Distinct, well-mixed seeds for neighbouring streams (splitmix64's finaliser).
        let mut z = seed ^ stream.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Self {
            rng: fastrand::Rng::with_seed(z ^ (z >> 31)),
            area: 0.0,
            scale: streams.max(1) as f64,
        }
    }

    /// The rate's integral at the stream's next arrival: the last plus an exponential gap.
    pub fn next_area(&mut self) -> f64 {
        // 1 − u lies in (0, 1]: its logarithm is finite.
        let gap = -(1.0 - self.rng.f64()).ln();
        self.area += gap * self.scale;
        self.area
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_average_the_mean_and_vary_like_exponentials() {
        let mut s = PoissonStream::new(7, 0, 1);
        let n = 200_000;
        let mut last = 0.0;
        let gaps: Vec<f64> = (0..n)
            .map(|_| {
                let a = s.next_area();
                let g = a - last;
                last = a;
                g
            })
            .collect();
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64;
        // Exponential: mean 1, coefficient of variation 1 (uniform spacing has 0).
        assert!((mean - 1.0).abs() < 0.01, "{mean}");
        assert!((var.sqrt() / mean - 1.0).abs() < 0.02, "{var}");
    }

    #[test]
    fn a_seed_gives_the_same_stream_and_streams_differ() {
        let take = |seed, stream| {
            let mut s = PoissonStream::new(seed, stream, 2);
            (0..5).map(|_| s.next_area()).collect::<Vec<_>>()
        };
        assert_eq!(take(1, 0), take(1, 0));
        assert_ne!(take(1, 0), take(1, 1));
        assert_ne!(take(1, 0), take(2, 0));
        // Two streams sharing the rate: each one's gaps average 2 in the whole's integral.
        let mut s = PoissonStream::new(3, 0, 2);
        let last = (0..100_000).map(|_| s.next_area()).last().unwrap();
        assert!((last / 100_000.0 - 2.0).abs() < 0.03, "{last}");
    }
}
