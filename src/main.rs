//! The `volley` command: parses arguments and hands over to the library (see `src/lib.rs`).

mod cli;

fn main() -> std::process::ExitCode {
    abort_on_panic();
    cli::main()
}

/// A panic anywhere, on any thread, ends the process as the release build's `panic = "abort"`
/// does, whatever profile built it. The test suite's profile (`ci`) unwinds, because the test
/// harness needs unwinding and a profile that aborts makes cargo build every dependency twice;
/// its `volley` binary must still fail as loudly as the one users run, not lose a worker
/// thread or a task and go on.
fn abort_on_panic() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        std::process::abort();
    }));
}
