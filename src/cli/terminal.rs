//! The command line's side of the colour policy ([`volley::color`]): `--color` is read before clap
//! parses anything, so that clap's own help and errors follow it too, and the decision is kept
//! for everything else this process writes to a terminal.

use std::ffi::OsString;
use std::sync::OnceLock;

use clap::{CommandFactory, FromArgMatches};
use volley::color::{ColorChoice, ColorPolicy, Style};
use volley::redact::{ArgRole, Argv};

use super::args::{Cli, Command};

static POLICY: OnceLock<ColorPolicy> = OnceLock::new();

/// Parses the process's arguments with clap (which exits on usage errors, code 2, and for
/// `--help`/`--version`, code 0), its output coloured as `--color` and the environment say.
pub fn parse() -> (Cli, Argv) {
    let args: Vec<OsString> = std::env::args_os().collect();
    // Lossy: an argument that is not UTF-8 must not panic here; clap then refuses it (exit 2).
    let plain: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let choice = ColorChoice::in_args(&args);
    POLICY.get_or_init(|| ColorPolicy::detect(choice));
    let clap_choice = match choice {
        ColorChoice::Auto => clap::ColorChoice::Auto,
        ColorChoice::Always => clap::ColorChoice::Always,
        ColorChoice::Never => clap::ColorChoice::Never,
    };
    let mut cmd = Cli::command().color(clap_choice);
    if let Some(near) = volley::plan::peer_flags::mistyped_command(&plain, &cmd) {
        eprintln!("{near}");
        std::process::exit(2);
    }
    let matches =
        cmd.try_get_matches_from_mut(args).unwrap_or_else(
            |e| match volley::plan::peer_flags::hint(&plain).filter(|_| e.use_stderr()) {
                Some(hint) => {
                    let _ = e.print();
                    eprintln!("\n{hint}");
                    std::process::exit(e.exit_code())
                }
                None => e.exit(),
            },
        );
    let mut argv = Argv::plain(plain);
    mark_roles(&matches, &mut argv);
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut cmd).exit());
    if let (Some(Command::Ab(a)), Some(("ab", m))) = (&mut cli.command, matches.subcommand()) {
        a.given = volley::plan::flags::given(cmd.find_subcommand("ab"), m);
    }
    (cli, argv)
}

/// The flags whose values hold secrets, by clap's id, with what they hold.
const SECRET_ARGS: [(&str, ArgRole); 7] = [
    ("headers", ArgRole::Header),
    ("sets", ArgRole::Set),
    ("token", ArgRole::Secret),
    ("url", ArgRole::Url),
    ("join", ArgRole::Url),
    ("targets", ArgRole::Url),
    ("prometheus_rw", ArgRole::Url),
];

/// Marks in `argv` every value of a secret-bearing flag as clap read it, through the
/// subcommands. (Not by clap's indices: they count a value attached to its flag, `-HVALUE`, and
/// each letter of `-qH`, as arguments of their own.)
fn mark_roles(matches: &clap::ArgMatches, argv: &mut Argv) {
    for (id, role) in SECRET_ARGS {
        // Ids this (sub)command does not have are skipped.
        let Ok(Some(values)) = matches.try_get_raw(id) else {
            continue;
        };
        for value in values {
            argv.mark(role, value.to_string_lossy().into_owned());
        }
    }
    if let Some((_, sub)) = matches.subcommand() {
        mark_roles(sub, argv);
    }
}

/// The colour decision of this process (plain until [`parse`] ran).
pub fn policy() -> ColorPolicy {
    POLICY.get().copied().unwrap_or_else(ColorPolicy::plain)
}

/// `error` as the label of an error line on stderr: red and bold when stderr is coloured, as
/// clap writes its own.
pub fn error_label() -> String {
    let on = policy().stderr;
    Style::Bold.paint(&Style::Bad.paint("error", on), on)
}
