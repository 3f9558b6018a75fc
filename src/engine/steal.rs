//! CPU steal: time the hypervisor gave this machine's CPUs to someone else (Linux `/proc/stat`,
//! its `steal` column). On a virtual machine with a shared host, a vCPU waits while other guests
//! run, and the generator and any target on the same machine pause with it: on the 2-core bench
//! VM, a second's throughput fell as its steal rose (correlation −0.85 to −0.89, closed model,
//! `bench/README.md`, "CPU steal"). The run's share is `generator.steal_share`
//! (docs/measurement.md, "The generator's own figures").

use std::time::Instant;

use super::usage::EverySecond;

/// The machine's CPU time counters at one moment, summed over its CPUs, in the kernel's ticks
/// (`USER_HZ`, 1/100 s on Linux): how much of it was stolen, and how much there was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTimes {
    /// Ticks the CPUs wanted to run but the hypervisor ran something else.
    pub steal: u64,
    /// Ticks of CPU time in all: user, nice, system, idle, iowait, irq, softirq and steal.
    pub total: u64,
}

impl CpuTimes {
    /// Reads `/proc/stat` now; `None` where there is none, or it has no steal column (not
    /// Linux, or a kernel before 2.6.11).
    pub fn now() -> Option<Self> {
        parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// The share of the CPU time from `earlier` to `self` that was stolen, 0–1; `None` when no
    /// CPU time passed between them (two readings within one tick).
    pub fn steal_share_since(&self, earlier: &Self) -> Option<f64> {
        let total = self.total.checked_sub(earlier.total).filter(|&t| t > 0)?;
        let steal = self.steal.saturating_sub(earlier.steal).min(total);
        Some(steal as f64 / total as f64)
    }
}

/// The aggregate `cpu` line of a `/proc/stat` text: `cpu user nice system idle iowait irq
/// softirq steal [guest guest_nice]`. Guest time is already counted in user and nice, so the
/// total is the first eight columns.
pub fn parse(stat: &str) -> Option<CpuTimes> {
    let line = stat.lines().find_map(|l| l.strip_prefix("cpu "))?;
    let columns: Vec<u64> = line
        .split_ascii_whitespace()
        .take(8)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    (columns.len() == 8).then(|| CpuTimes {
        steal: columns[7],
        total: columns.iter().sum(),
    })
}

/// The steal share of the last second or so, for the live view: sampled at each tick, a new
/// share once 900 ms have passed since the previous one (as [`super::CpuShare`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct StealShare {
    every: EverySecond<CpuTimes>,
}

impl StealShare {
    /// Takes a reading `times` at `now`: the steal share since the previous reading once 900 ms
    /// have passed, else `None` (also when there is no reading).
    pub fn sample(&mut self, now: Instant, times: Option<CpuTimes>) -> Option<f64> {
        let times = times?;
        let (before, _) = self.every.next(now, times)?;
        times.steal_share_since(&before)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const STAT: &str = "cpu  1847227 2495 191370 2502772 4150 0 68789 18758 0 0\n\
                        cpu0 923000 1200 95000 1250000 2000 0 34000 9000 0 0\n\
                        intr 123\n";

    #[test]
    fn the_aggregate_line_gives_steal_and_the_first_eight_columns() {
        let t = parse(STAT).unwrap();
        assert_eq!(t.steal, 18758);
        assert_eq!(
            t.total,
            1847227 + 2495 + 191370 + 2502772 + 4150 + 68789 + 18758
        );
    }

    #[test]
    fn a_stat_without_a_steal_column_or_cpu_line_gives_none() {
        assert_eq!(parse("cpu  1 2 3 4 5 6 7\n"), None);
        assert_eq!(parse("cpu0 1 2 3 4 5 6 7 8\n"), None);
        assert_eq!(parse("cpu  1 2 x 4 5 6 7 8\n"), None);
    }

    #[test]
    fn the_share_is_steal_over_all_cpu_time_between_two_readings() {
        let a = CpuTimes {
            steal: 100,
            total: 10_000,
        };
        let b = CpuTimes {
            steal: 130,
            total: 10_200,
        };
        assert_eq!(b.steal_share_since(&a), Some(0.15));
        assert_eq!(a.steal_share_since(&a), None);
        // Counters that went backwards (a reading of another machine) give no share, or 0.
        assert_eq!(a.steal_share_since(&b), None);
    }

    #[test]
    fn the_live_share_waits_900_ms_between_readings() {
        let t0 = Instant::now();
        let at = |steal, total| Some(CpuTimes { steal, total });
        let mut s = StealShare::default();
        assert_eq!(s.sample(t0, at(0, 0)), None);
        assert_eq!(s.sample(t0 + Duration::from_millis(500), at(5, 100)), None);
        assert_eq!(
            s.sample(t0 + Duration::from_secs(1), at(10, 200)),
            Some(0.05)
        );
        assert_eq!(s.sample(t0 + Duration::from_secs(2), None), None);
    }
}
