//! CPU and memory use of the generator itself, for self-diagnosis.

use std::time::Duration;

use nix::sys::resource::{UsageWho, getrusage};

use super::steal::{CpuTimes, StealShare};

fn cpu_of(who: UsageWho) -> Duration {
    getrusage(who).map_or(Duration::ZERO, |u| {
        to_duration(u.user_time()) + to_duration(u.system_time())
    })
}

fn to_duration(tv: nix::sys::time::TimeVal) -> Duration {
    Duration::new(
        tv.tv_sec().max(0) as u64,
        (tv.tv_usec().max(0) as u32) * 1000,
    )
}

/// CPU time (user + system) used so far by the calling thread.
pub fn thread_cpu() -> Duration {
    cpu_of(UsageWho::RUSAGE_THREAD)
}

/// CPU time (user + system) used so far by the whole process.
pub fn process_cpu() -> Duration {
    cpu_of(UsageWho::RUSAGE_SELF)
}

/// The process's CPU share of its worker threads, sampled about once a second: the CPU time
/// (every thread) between two samples at least 900 ms apart, over that wall time, over the
/// number of worker threads (0–1, above 1 when other threads are busy too). The live view's
/// "CPU" and the exported `volley_generator_cpu_ratio` (docs/measurement.md).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuShare {
    every: EverySecond<Duration>,
}

/// A counter read at each tick and compared about once a second: a reading counts once 900 ms
/// have passed since the last one that counted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EverySecond<T> {
    last: Option<(std::time::Instant, T)>,
}

impl<T> Default for EverySecond<T> {
    fn default() -> Self {
        Self { last: None }
    }
}

impl<T: Copy> EverySecond<T> {
    /// Offers `reading`, taken at `now`: the last reading that counted and the wall time since
    /// it, when 900 ms have passed (`reading` then counts); `None` for the first reading, which
    /// counts, and for one too soon, which does not.
    pub(crate) fn next(&mut self, now: std::time::Instant, reading: T) -> Option<(T, Duration)> {
        let Some((at, before)) = self.last else {
            self.last = Some((now, reading));
            return None;
        };
        let wall = now.saturating_duration_since(at);
        if wall < Duration::from_millis(900) {
            return None;
        }
        self.last = Some((now, reading));
        Some((before, wall))
    }
}

impl CpuShare {
    /// Takes a sample of `cpu` (the process's CPU time so far) at `now`: the share since the
    /// previous sample once 900 ms have passed, else `None`.
    pub fn sample(
        &mut self,
        now: std::time::Instant,
        cpu: Duration,
        threads: usize,
    ) -> Option<f64> {
        let (before, wall) = self.every.next(now, cpu)?;
        let busy = cpu.saturating_sub(before).as_secs_f64();
        Some(busy / wall.as_secs_f64() / threads.max(1) as f64)
    }
}

/// The generator's own usage as the observers show it each second (the live view, the exporter):
/// its process's CPU share over the worker threads ([`CpuShare`]) and the machine's CPU steal
/// share ([`StealShare`]), each sampled at every tick and new about once a second.
#[derive(Debug, Clone, Copy, Default)]
pub struct UsageShares {
    cpu: CpuShare,
    steal: StealShare,
    threads: usize,
}

impl UsageShares {
    /// Shares for a run of `threads` worker threads.
    pub fn new(threads: usize) -> Self {
        Self {
            threads,
            ..Self::default()
        }
    }

    /// Takes the readings of a tick at `now` (`cpu`: the process's CPU time so far; `times`: the
    /// machine's CPU counters, `None` where they cannot be read): the CPU share and the steal
    /// share of the last second or so, each `None` until a second has passed since its last.
    pub fn sample(
        &mut self,
        now: std::time::Instant,
        cpu: Duration,
        times: Option<CpuTimes>,
    ) -> (Option<f64>, Option<f64>) {
        (
            self.cpu.sample(now, cpu, self.threads),
            self.steal.sample(now, times),
        )
    }
}

/// Peak resident set size of the process so far, bytes.
///
/// Read from `VmHWM` in `/proc/self/status`, the high-water mark of this program's own memory.
/// `getrusage`'s `ru_maxrss` is only the fallback: Linux carries it across `execve`, so it also
/// counts the memory of the process volley was forked from — a 50 MB test harness or suite
/// runner would show up as volley's peak.
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| vm_hwm_bytes(&status))
        // Linux reports ru_maxrss in KiB.
        .unwrap_or_else(|| {
            getrusage(UsageWho::RUSAGE_SELF).map_or(0, |u| u.max_rss().max(0) as u64 * 1024)
        })
}

/// `VmHWM` of a `/proc/PID/status` text, bytes.
fn vm_hwm_bytes(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kib * 1024)
}

/// Raises the process's soft limit of open files to its hard limit (as most load tools do: a
/// connection is a file descriptor, and the usual soft limit, 1,024, is below many tests) and
/// returns the soft limit now in force; `None` when it cannot be read.
pub fn raise_open_files() -> Option<u64> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        return Some(hard);
    }
    Some(soft)
}

/// CPU use of one worker thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThreadUsage {
    /// CPU time used (user + system).
    pub cpu: Duration,
    /// Wall time the worker ran.
    pub wall: Duration,
}

impl ThreadUsage {
    /// CPU time over wall time, 0.0–1.0.
    pub fn utilization(&self) -> f64 {
        if self.wall.is_zero() {
            0.0
        } else {
            (self.cpu.as_secs_f64() / self.wall.as_secs_f64()).min(1.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_rss_is_read_from_proc() {
        let status = "Name:\tvolley\nVmPeak:\t  20000 kB\nVmHWM:\t    6144 kB\nVmRSS:\t 6000 kB\n";
        assert_eq!(vm_hwm_bytes(status), Some(6144 * 1024));
        assert_eq!(vm_hwm_bytes("Name:\tx\n"), None);
        let peak = peak_rss_bytes();
        assert!(peak > 1 << 20 && peak < 1 << 40, "{peak}");
    }

    #[test]
    fn the_cpu_share_is_cpu_over_wall_over_threads_at_most_once_a_second() {
        let t0 = std::time::Instant::now();
        let ms = Duration::from_millis;
        let mut share = CpuShare::default();
        assert_eq!(
            share.sample(t0, ms(100), 2),
            None,
            "the first sample is a start"
        );
        assert_eq!(share.sample(t0 + ms(500), ms(400), 2), None, "under 900 ms");
        // 1 s of CPU over 2 s of wall over 2 threads: a quarter.
        assert_eq!(share.sample(t0 + ms(2000), ms(1100), 2), Some(0.25));
        assert_eq!(share.sample(t0 + ms(3000), ms(1100), 4), Some(0.0));
    }
}
