//! CPU and memory use of the generator itself, for self-diagnosis.

use std::time::Duration;

use nix::sys::resource::{UsageWho, getrusage};

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

/// Peak resident set size of the process so far, bytes.
pub fn peak_rss_bytes() -> u64 {
    // Linux reports ru_maxrss in KiB.
    getrusage(UsageWho::RUSAGE_SELF).map_or(0, |u| u.max_rss().max(0) as u64 * 1024)
}
