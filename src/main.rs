//! The `volley` command: parses arguments and hands over to the library (see `src/lib.rs`).

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
