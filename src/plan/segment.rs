//! One generator's share of a plan (`--segment i/N`): the whole plan, validated, with each
//! scenario's load, iteration counts and data rows divided by [`crate::schedule::segment`]'s
//! rules, so that N generators running shares 0 … N − 1 send exactly the whole test.
//!
//! What is divided, per scenario: VUs (constant, ramping, ladder phases: share `i` runs the
//! whole's VUs `i`, `i + N`, … at the instants the whole would), arrival schedules (share `i`
//! sends the whole's arrivals `i`, `i + N`, … at their due instants), shared iteration counts
//! (`iterations`, `-n`: the counts add up to the whole's), the open model's VU cap (`max_vus`,
//! `-c`: split like VUs, so the cap is per share), and the rows of sequential and unique data
//! files (rows `i`, `i + N`, …: no two shares use one row). `per-vu-iterations` keeps its count
//! per VU (its VUs are divided). Names of scenarios, steps and phases stay the whole's, so the
//! shares' results line up when merged.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::read::ReadOptions;
use super::{Plan, RunInput};
use crate::error::Error;
use crate::plan::file::PlanFile;
use crate::record::shares::Share;
use crate::schedule::Segment;

/// A generator silent for less than this is never lost.
pub const MIN_LOST_AFTER: Duration = Duration::from_secs(2);

/// What a coordinated test does when a generator is lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnLost {
    /// Go on without it: the merged record names the missing share.
    #[default]
    Continue,
    /// Stop every generator.
    Stop,
}

/// `[distributed]`: a coordinated test's handling of lost generators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Distributed {
    /// A generator silent this long is lost.
    pub lost_after: Duration,
    /// What then.
    pub on_lost: OnLost,
}

impl Default for Distributed {
    fn default() -> Self {
        Self {
            lost_after: Duration::from_secs(10),
            on_lost: OnLost::Continue,
        }
    }
}

/// A plan that is one share of a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanShare {
    /// Which share.
    pub segment: Segment,
    /// The hash of the whole test (see [`Share::plan_hash`]).
    pub plan_hash: String,
}

impl PlanShare {
    /// The record's [`Share`] of a run that began measuring at `measuring` (wall clock, after
    /// the warm-up).
    pub fn record(&self, measuring: SystemTime) -> Share {
        Share {
            index: self.segment.index(),
            count: self.segment.count(),
            plan_hash: self.plan_hash.clone(),
            measure_started_at: humantime::format_rfc3339_micros(measuring).to_string(),
        }
    }
}

/// SHA-256 over named fields, each length-prefixed so that no two inputs hash alike.
struct Hasher(ring::digest::Context);

impl Hasher {
    fn new(kind: &str) -> Self {
        let mut h = Self(ring::digest::Context::new(&ring::digest::SHA256));
        h.field("volley test", kind.as_bytes());
        h
    }

    fn field(&mut self, name: &str, value: &[u8]) {
        for part in [name.as_bytes(), value] {
            self.0.update(&(part.len() as u64).to_be_bytes());
            self.0.update(part);
        }
    }

    fn finish(self) -> String {
        let digest = self.0.finish();
        let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    }
}

/// The hash of a quick-mode test: every input that shapes its load and requests, and none that
/// is the generator's own (threads, the share, the run's name).
pub fn quick_hash(input: &RunInput) -> String {
    let mut h = Hasher::new("quick");
    let whole = RunInput {
        name: String::new(),
        threads: None,
        segment: None,
        secret_headers: Vec::new(),
        ..input.clone()
    };
    // `Debug` lists every field, so a field added to RunInput is hashed without a change here;
    // records are merged only with records of the same volley version.
    h.field("input", format!("{whole:?}").as_bytes());
    h.finish()
}

/// The hash of a plan file's test: the plan's text, the data files it reads, `--set` and
/// `--time-scale`. Not the share, the threads, or which headers are marked secret.
pub fn file_hash(
    text: &str,
    path: &Path,
    file: &PlanFile,
    options: &ReadOptions,
) -> Result<String, Error> {
    let mut h = Hasher::new("plan");
    h.field("plan", text.as_bytes());
    for (key, value) in &options.sets {
        h.field("set", format!("{key}={value}").as_bytes());
    }
    h.field("time_scale", &options.time_scale.to_be_bytes());
    for (name, data) in &file.data {
        let relative = Path::new(data.file.get_ref());
        let at = path.parent().unwrap_or(Path::new(".")).join(relative);
        // A file that cannot be read is reported where the plan loads it, with its location.
        let bytes = std::fs::read(&at).unwrap_or_default();
        h.field("data", name.as_bytes());
        h.field("rows", &bytes);
    }
    Ok(h.finish())
}

/// The share `share` asks for (a segment and the whole test's hash), if any.
pub fn apply_if(plan: Plan, share: Option<(Segment, String)>) -> Result<Plan, Error> {
    match share {
        Some((segment, plan_hash)) => apply(plan, segment, plan_hash),
        None => Ok(plan),
    }
}

/// Makes `plan` (the whole test) into its share `segment`.
pub fn apply(mut plan: Plan, segment: Segment, plan_hash: String) -> Result<Plan, Error> {
    let invalid = |why: String| Error::Invalid {
        what: format!("--segment {segment}"),
        why,
    };
    if !plan.precision.is_empty() {
        return Err(Error::Invalid {
            what: "--precision/[precision]".into(),
            why: "a test shared among generators (--segment, --join, volley coordinate) cannot \
                  run until precise: each share would stop on its own figures, and the merged \
                  run would mix windows of different lengths"
                .into(),
        });
    }
    for sc in &mut plan.scenarios {
        let warmup_in = plan.warmup.saturating_sub(sc.start_after);
        sc.profile
            .share(segment, warmup_in)
            .map_err(|why| invalid(format!("scenario `{}`: {why}", sc.name)))?;
        for p in &mut sc.phases {
            let per_vu = p.vus.is_some();
            p.vus = p.vus.map(|v| segment.vus(v));
            p.rate = p.rate.map(|r| segment.rate(r));
            if let crate::plan::PhaseOrigin::Stage {
                ramp_from: Some(from),
            } = &mut p.origin
            {
                *from = match per_vu {
                    true => f64::from(segment.vus(from.round() as u32)),
                    false => segment.rate(*from),
                };
            }
        }
    }
    let templates = Arc::get_mut(&mut plan.templates)
        .ok_or_else(|| invalid("the plan's data files are already in use".into()))?;
    for (name, source) in &mut templates.data {
        *source = source
            .share(segment)
            .ok_or_else(|| invalid(no_rows(name, source, segment)))?;
    }
    plan.fit_threads(plan.threads);
    plan.share = Some(PlanShare { segment, plan_hash });
    Ok(plan)
}

/// Whether the whole test `plan` divides among `count` generators: every share `i/count` gets
/// a VU (or iterations, requests, data rows) of each scenario, as [`apply`] would make it. A
/// coordinator checks this before any generator joins, so a share that would get nothing is
/// refused up front, not after the test has started without it.
pub fn divides(plan: &Plan, count: u32) -> Result<(), Error> {
    let invalid = |why: String| Error::Invalid {
        what: format!("--workers {count}"),
        why,
    };
    for index in 0..count {
        let segment = Segment::new(index, count).map_err(|e| invalid(e.to_string()))?;
        for sc in &plan.scenarios {
            let warmup_in = plan.warmup.saturating_sub(sc.start_after);
            sc.profile
                .clone()
                .share(segment, warmup_in)
                .map_err(|why| invalid(format!("scenario `{}`: {why}", sc.name)))?;
        }
        for (name, source) in &plan.templates.data {
            if source.share(segment).is_none() {
                return Err(invalid(no_rows(name, source, segment)));
            }
        }
    }
    Ok(())
}

/// Why share `segment` of data file `name` would have no rows.
fn no_rows(name: &str, source: &crate::plan::data::DataSource, segment: Segment) -> String {
    format!(
        "data `{name}` has {} rows, fewer than the {} shares: share {segment} would have none",
        source.len(),
        segment.count()
    )
}

/// Why one scenario's profile cannot be divided into a share.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShareError {
    /// The share would run no VU.
    #[error(
        "share {seg} gets no VU: the profile runs at most {peak} VUs, over {} shares",
        seg.count()
    )]
    Vus {
        /// The share.
        seg: Segment,
        /// The whole's most VUs.
        peak: f64,
    },
    /// The share would get none of the shared iterations.
    #[error(
        "{total} iterations cannot be divided into {} shares: share {seg} would send none",
        seg.count()
    )]
    Iterations {
        /// The whole's iterations.
        total: u64,
        /// The share.
        seg: Segment,
    },
    /// The share would get none of the requests (`-n`).
    #[error(
        "{total} requests cannot be divided into {} shares: share {seg} would send none",
        seg.count()
    )]
    Requests {
        /// The whole's requests.
        total: u64,
        /// The share.
        seg: Segment,
    },
    /// The in-flight cap is smaller than the shares.
    #[error("an in-flight cap of {cap} cannot be divided into {shares} shares")]
    InFlightCap {
        /// The whole's cap.
        cap: u32,
        /// The shares.
        shares: u32,
    },
    /// The share's arrival schedule is empty.
    #[error("share {0} gets no arrival")]
    Arrivals(Segment),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(load: &str, data_rows: usize) -> (tempdir::Dir, Plan) {
        let (dir, plan) = try_plan(load, data_rows);
        (dir, plan.unwrap())
    }

    fn try_plan(load: &str, data_rows: usize) -> (tempdir::Dir, Result<Plan, crate::Error>) {
        let dir = tempdir::Dir::new();
        let rows: String = (0..data_rows).map(|i| format!("{i}\n")).collect();
        std::fs::write(dir.0.join("users.csv"), format!("id\n{rows}")).unwrap();
        let text = format!(
            "[target]\nbase_url = \"http://127.0.0.1:9\"\n\
             [data.users]\nfile = \"users.csv\"\nmode = \"unique\"\n\
             [[scenario]]\nname = \"s\"\n[scenario.load]\n{load}\n\
             [[scenario.step]]\nname = \"a\"\npath = \"/{{{{ data.users.id }}}}\"\n"
        );
        let path = dir.0.join("plan.toml");
        std::fs::write(&path, &text).unwrap();
        let plan =
            crate::plan::read::read_file(&path, &ReadOptions::default()).and_then(|d| d.prepare());
        (dir, plan)
    }

    mod tempdir {
        /// A temporary folder, removed when dropped.
        pub struct Dir(pub std::path::PathBuf);

        impl Dir {
            pub fn new() -> Self {
                use std::sync::atomic::{AtomicU32, Ordering};
                static N: AtomicU32 = AtomicU32::new(0);
                let p = std::env::temp_dir().join(format!(
                    "volley-segment-{}-{}",
                    std::process::id(),
                    N.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::create_dir_all(&p).unwrap();
                Self(p)
            }
        }

        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    fn seg(i: u32, n: u32) -> Segment {
        Segment::new(i, n).unwrap()
    }

    #[test]
    fn iterations_vus_and_rows_add_up_over_the_shares() {
        let (_dir, whole) = plan("profile = \"iterations\"\nvus = 10\niterations = 1000", 20);
        let mut vus = 0;
        let mut iterations = 0;
        let mut rows = 0;
        for i in 0..3 {
            let p = apply(whole.clone_fresh(), seg(i, 3), "h".into()).unwrap();
            vus += p.scenarios[0].max_vus();
            iterations += p.scenarios[0]
                .profile
                .shared_iterations()
                .expect("iterations profile");
            rows += p.templates.data["users"].len();
            assert!(p.threads <= p.scenarios[0].max_vus() as usize);
            assert_eq!(p.share.as_ref().unwrap().segment, seg(i, 3));
        }
        assert_eq!((vus, iterations, rows), (10, 1000, 20));
    }

    #[test]
    fn a_share_that_would_get_nothing_is_refused() {
        let (_dir, whole) = plan("profile = \"constant-vus\"\nvus = 2\nduration = \"1s\"", 5);
        let e = apply(whole.clone_fresh(), seg(2, 3), "h".into())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--segment 2/3") && e.contains("gets no VU"),
            "{e}"
        );
        // Unique rows short of the VUs are refused when the plan is read, before any share.
        let (_dir, e) = try_plan("profile = \"constant-vus\"\nvus = 9\nduration = \"1s\"", 2);
        let e = e.expect_err("refused").to_string();
        assert!(e.contains("`users` has 2 rows for the 9 VUs"), "{e}");
    }

    #[test]
    fn arrivals_and_ladder_phases_are_divided() {
        let (_dir, whole) = plan(
            "profile = \"ladder\"\nmax_vus = 7\n\
             phases = [{ rate = 30, duration = \"2s\" }, { rate = 60, duration = \"2s\" }]",
            9,
        );
        let mut due = 0;
        for i in 0..3 {
            let p = apply(whole.clone_fresh(), seg(i, 3), "h".into()).unwrap();
            let sc = &p.scenarios[0];
            assert!(sc.is_open());
            assert_eq!(sc.phases[1].rate, Some(20.0));
            assert_eq!(sc.phases[1].name, "phase 2: 60 req/s");
            assert_eq!(sc.profile.in_flight_cap(), Some([3, 2, 2][i as usize]));
            due += sc.profile.ramp().count_before(Duration::from_secs(4));
        }
        assert_eq!(due, 180);
    }

    #[test]
    fn the_hash_is_the_tests_not_the_shares() {
        let mut a = RunInput::new("http://127.0.0.1:9/");
        a.segment = Some(seg(0, 2));
        a.threads = Some(1);
        let mut b = a.clone();
        b.segment = Some(seg(1, 2));
        b.threads = Some(4);
        assert_eq!(quick_hash(&a), quick_hash(&b));
        assert!(quick_hash(&a).starts_with("sha256:") && quick_hash(&a).len() == 71);
        b.rate_per_sec = Some(10.0);
        assert_ne!(quick_hash(&a), quick_hash(&b));
    }

    impl Plan {
        /// A copy whose data files are not shared with the original (as a freshly read plan).
        fn clone_fresh(&self) -> Plan {
            let path = self.source.clone().unwrap();
            crate::plan::read::read_file(&path, &ReadOptions::default())
                .and_then(|d| d.prepare())
                .unwrap()
        }
    }
}
