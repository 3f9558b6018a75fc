//! The load generator's environment, read once per run from /proc and /etc (Linux); fields that
//! cannot be read are "unknown" rather than an error.

use super::model::Environment;

/// Describes this machine.
pub fn detect() -> Environment {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key.trim() == "model name").then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("MemTotal:")?;
            let kib: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(0);
    let os = read("/etc/os-release")
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| std::env::consts::OS.to_string());
    let or_unknown = |s: String| {
        let s = s.trim().to_string();
        if s.is_empty() { "unknown".into() } else { s }
    };
    Environment {
        hostname: or_unknown(read("/proc/sys/kernel/hostname")),
        cpu_model,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes,
        os,
        kernel: or_unknown(read("/proc/sys/kernel/osrelease")),
        arch: std::env::consts::ARCH.to_string(),
    }
}
