//! `volley demo`: the built-in target in this process, a closed run and an open run against it,
//! summaries printed and results folders (record, summary, Markdown and HTML reports) written. Nothing to install or set up.

use std::net::{Ipv4Addr, SocketAddr};

use volley::plan::RunInput;
use volley::server::{self, TargetConfig};

use super::command_args::DemoArgs;

/// Runs the demo; returns the exit code of the worse run.
pub fn run(a: DemoArgs) -> anyhow::Result<u8> {
    let mut outputs = super::export::records(None, &a.out, 1, "");
    super::export::start(&mut outputs, None, "volley demo")?;
    // One core for the target, the other for the generator: neither starves the other.
    let server = server::spawn(TargetConfig {
        bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        threads: 1,
        capacity: None,
    })?;
    let base = server.base_url();
    eprintln!("volley demo: built-in target listening on {base}\n");

    let mut closed = RunInput::new(format!("{base}/"));
    closed.name = "demo-closed".into();
    closed.concurrency = Some(32);
    closed.duration = Some(a.duration);
    closed.threads = Some(1);

    let mut open = RunInput::new(format!("{base}/delay?ms=2&dist=exp"));
    open.name = "demo-open".into();
    open.rate_per_sec = Some(1000.0);
    open.concurrency = Some(200);
    open.duration = Some(a.duration);
    open.threads = Some(1);

    let mut worst = super::EXIT_OK;
    for (title, input) in [
        (
            "1/2 closed model: 32 connections as fast as the target answers",
            closed,
        ),
        (
            "2/2 open model: 1000 req/s on a fixed schedule, 2 ms exponential service time",
            open,
        ),
    ] {
        let spec = input.validate()?.prepare()?;
        eprintln!("== {title}");
        eprintln!("{}", volley::run::show::banner(&spec));
        let argv = volley::redact::Argv::plain(vec!["volley".to_string(), "demo".to_string()]);
        let shown = volley::run::Shown::Progress;
        let record = super::runs::execute(&spec, &argv, shown, Default::default(), &mut outputs)?;
        let (_, code) = super::finish(&record, &mut outputs, false);
        println!();
        worst = worst.max(code);
        if record.interrupted.is_some() {
            break;
        }
    }
    server.stop();
    Ok(worst)
}
