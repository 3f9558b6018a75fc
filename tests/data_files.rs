//! A plan's data file is held compactly: a CSV of tens of megabytes costs about its own size in
//! memory (a 162 MB file once took 1.84 GB, and `/dev/zero` grew without bound).

mod common;

use std::io::Write;
use std::time::Duration;

use common::{Spawned, temp_dir};

#[test]
fn a_large_csv_costs_about_its_size_in_memory() {
    let dir = temp_dir("data-large");
    let csv = dir.join("big.csv");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&csv).unwrap());
    writeln!(f, "id,name,email,amount").unwrap();
    for i in 0..600_000u32 {
        writeln!(f, "{i},user-{i},user{i}@example.com,{}", i % 99_991).unwrap();
    }
    drop(f);
    let size = std::fs::metadata(&csv).unwrap().len();
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        "[target]\nbase_url = \"http://127.0.0.1:9\"\n[data.u]\nfile = \"big.csv\"\n\
         [[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\n\
         duration = \"1s\"\n[[scenario.step]]\nname = \"s\"\npath = \"/u/{{ data.u.email }}\"\n",
    )
    .unwrap();
    // `check` renders one request per step: the row is read through, as a run would.
    let out = |name: &str| std::fs::File::create(dir.join(name)).unwrap();
    let run = Spawned {
        child: common::volley()
            .arg("check")
            .arg(&plan)
            .stdout(out("stdout.txt"))
            .stderr(out("stderr.txt"))
            .spawn()
            .unwrap(),
        dir: dir.clone(),
        started: std::time::Instant::now(),
    };
    let finished = run.wait(Duration::from_secs(60));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let stdout = std::fs::read_to_string(dir.join("stdout.txt")).unwrap();
    assert!(stdout.contains("/u/user0@example.com"), "{stdout}");
    // volley's own few megabytes, plus at most twice the file.
    let bound = 2 * size + (48 << 20);
    assert!(
        finished.peak_rss_bytes < bound,
        "peak RSS {} MiB for a {} MiB file",
        finished.peak_rss_bytes >> 20,
        size >> 20
    );
}
