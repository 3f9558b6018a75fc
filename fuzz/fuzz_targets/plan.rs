//! Plan files: arbitrary bytes through the whole loader (TOML parse, validation, profiles,
//! thresholds, template compilation, data files) — `volley check PLAN` without the printing.
//!
//! Input: the plan file's bytes. Lines starting `#!set KEY=VALUE` and `#!time-scale F` also
//! become `--set` and `--time-scale` (validated as the command line does), so seeds can reach
//! those paths. Relative files (`[data.x] file`, `body_file`) resolve in `fuzz/fixtures/`, which
//! holds a good, a broken and an empty CSV file and a body file. Host names resolve to 127.0.0.1
//! without a lookup and gRPC server reflection is off: the fuzzer never leaves the machine, nor
//! calls anything on it.

#![no_main]

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use volley::plan::read::{ReadOptions, ResolveError, read_bytes};
use volley::plan::{Body, Plan, StepRequest};

fn loopback(host: &str, port: u16) -> Result<SocketAddr, ResolveError> {
    let ip = host
        .parse::<IpAddr>()
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    Ok(SocketAddr::new(ip, port))
}

fuzz_target!(|data: &[u8]| {
    let mut options = ReadOptions {
        resolve: loopback,
        // Server reflection would call the plan's target while loading it.
        reflection: false,
        threads: Some(1),
        ..ReadOptions::default()
    };
    for line in data.split(|b| *b == b'\n') {
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        if let Some(set) = line.strip_prefix("#!set ") {
            // As the command line reads it: a key no plan has is refused there.
            if let Ok(set) = volley::plan::flags::parse_set(set) {
                options.sets.push(set);
            }
        } else if let Some(f) = line.strip_prefix("#!time-scale ") {
            match f.trim().parse::<f64>() {
                Ok(f) if f.is_finite() && f > 0.0 => options.time_scale = f,
                _ => {}
            }
        }
    }
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/plan.toml"));
    if let Ok(plan) = read_bytes(data, path, &options).and_then(|draft| draft.prepare()) {
        exercise(&plan);
    }
});

/// What `volley check`, the engine's schedule and the record derive from a valid plan: a
/// panic in any of them is reachable from the plan file too.
fn exercise(plan: &Plan) {
    let extracted = BTreeMap::new();
    for sc in &plan.scenarios {
        let _ = sc.duration();
        let _ = sc.max_vus();
        let _ = sc.profile.kind(false);
        let _ = sc.profile.iterations();
        let _ = sc.profile.in_flight_cap();
        let _ = sc.profile.workers(2);
        let ramp = sc.profile.ramp();
        let end = ramp.total();
        for t in [
            Duration::ZERO,
            end / 3,
            end,
            end.saturating_add(Duration::from_secs(1)),
        ] {
            let _ = ramp.level_at(t);
            let _ = ramp.vu_active(0, t);
            let _ = ramp.vu_next_active(sc.max_vus().saturating_sub(1), t);
            let _ = ramp.count_before(t);
        }
        for n in [0, 1, 2, 1000, u64::MAX] {
            let _ = ramp.due(n);
        }
        let ctx = plan.templates.context(0, 0, &sc.name, &extracted);
        for st in &sc.steps {
            if let StepRequest::Dynamic(d) = &st.request {
                let _ = plan.templates.render(&d.path, &ctx);
                for (_, v) in &d.headers {
                    let _ = plan.templates.render(v, &ctx);
                }
                if let Body::Text(t) | Body::Json(t) = &d.body {
                    let _ = plan.templates.render(t, &ctx);
                }
            }
        }
    }
}
