//! Colour in terminal output: one policy for everything volley writes to a terminal (clap's help
//! and errors today; the live view and any coloured summary later).
//!
//! The decision, for one output stream, in this order:
//!
//! 1. `--color always` or `--color never` on the command line: that, whatever the environment.
//! 2. `NO_COLOR` set and not empty (<https://no-color.org>): no colour.
//! 3. `CLICOLOR_FORCE` set and not empty (<https://bixense.com/clicolors/>): colour, even into a
//!    pipe.
//! 4. `CLICOLOR=0`: no colour.
//! 5. Otherwise colour only when the stream is a terminal that can show it: `TERM` set and not
//!    `dumb`, or `CLICOLOR` set (not `0`), or `CI` set (CI logs render colour).
//!
//! Steps 2–5 are exactly what clap's own output (through `anstream`) does for `--color auto`, so
//! volley's help and errors and volley's other output never disagree. Colour means ANSI SGR
//! sequences only: cursor movement and line clearing (the progress line's `\r` + `ESC[K`) are not
//! colour and are governed by whether stderr is a terminal, not by this policy.

use std::io::IsTerminal;

/// What the user asked for with `--color`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ColorChoice {
    /// Colour when the stream is a terminal and the environment allows it.
    #[default]
    Auto,
    /// Always colour, even into a pipe or a file.
    Always,
    /// Never colour.
    Never,
}

impl ColorChoice {
    /// Parses `auto`, `always` or `never` (as `--color` takes them).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "auto" => Some(Self::Auto),
            "always" => Some(Self::Always),
            "never" => Some(Self::Never),
            _ => None,
        }
    }

    /// The value of the last `--color WHEN` / `--color=WHEN` before a `--` in a process's
    /// arguments (the program's name first), read before clap parses them so that its own help
    /// and errors follow it; auto when absent or not one of the three (clap then refuses it).
    pub fn in_args(args: &[std::ffi::OsString]) -> Self {
        let mut choice = Self::Auto;
        let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
        while let Some(word) = words.next() {
            if word == "--" {
                break;
            }
            let value = match word.strip_prefix("--color") {
                Some("") => words.next().map(|v| v.into_owned()),
                Some(rest) => rest.strip_prefix('=').map(str::to_owned),
                None => None,
            };
            if let Some(parsed) = value.as_deref().and_then(Self::parse) {
                choice = parsed;
            }
        }
        choice
    }
}

/// The environment variables the policy reads, as read at one moment (so that the decision is a
/// pure function and can be tested without touching the process environment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColorEnv {
    /// `NO_COLOR`.
    pub no_color: Option<String>,
    /// `CLICOLOR_FORCE`.
    pub clicolor_force: Option<String>,
    /// `CLICOLOR`.
    pub clicolor: Option<String>,
    /// `TERM`.
    pub term: Option<String>,
    /// Whether `CI` is set (to anything).
    pub ci: bool,
}

impl ColorEnv {
    /// Reads the variables from the process environment (a value that is not UTF-8 counts as
    /// set and not empty).
    pub fn from_process() -> Self {
        let var = |name: &str| {
            std::env::var_os(name).map(|v| v.to_str().map_or_else(|| "?".into(), str::to_owned))
        };
        Self {
            no_color: var("NO_COLOR"),
            clicolor_force: var("CLICOLOR_FORCE"),
            clicolor: var("CLICOLOR"),
            term: var("TERM"),
            ci: std::env::var_os("CI").is_some(),
        }
    }
}

/// Whether to colour one stream: the policy of this module's documentation.
pub fn should_color(choice: ColorChoice, env: &ColorEnv, is_terminal: bool) -> bool {
    let non_empty = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.is_empty());
    let clicolor = env.clicolor.as_deref().map(|v| v != "0");
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if non_empty(&env.no_color) => false,
        ColorChoice::Auto if non_empty(&env.clicolor_force) => true,
        ColorChoice::Auto if clicolor == Some(false) => false,
        ColorChoice::Auto => {
            let term_can = env.term.as_deref().is_some_and(|t| t != "dumb");
            is_terminal && (term_can || clicolor == Some(true) || env.ci)
        }
    }
}

/// The decision for both standard streams, made once at start-up and handed to whatever writes
/// to them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColorPolicy {
    /// What the user asked for.
    pub choice: ColorChoice,
    /// Colour on stdout.
    pub stdout: bool,
    /// Colour on stderr.
    pub stderr: bool,
}

impl ColorPolicy {
    /// Decides for stdout and stderr of this process.
    pub fn detect(choice: ColorChoice) -> Self {
        let env = ColorEnv::from_process();
        Self {
            choice,
            stdout: should_color(choice, &env, std::io::stdout().is_terminal()),
            stderr: should_color(choice, &env, std::io::stderr().is_terminal()),
        }
    }

    /// No colour anywhere.
    pub fn plain() -> Self {
        Self {
            choice: ColorChoice::Never,
            stdout: false,
            stderr: false,
        }
    }
}

/// A text style as ANSI SGR parameters; [`Style::paint`] writes them only when colour is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Bold.
    Bold,
    /// Dimmed (secondary figures).
    Dim,
    /// Green: passed, healthy.
    Good,
    /// Yellow: a warning.
    Warn,
    /// Red: failed.
    Bad,
}

impl Style {
    /// The SGR parameter.
    fn sgr(self) -> &'static str {
        match self {
            Self::Bold => "1",
            Self::Dim => "2",
            Self::Good => "32",
            Self::Warn => "33",
            Self::Bad => "31",
        }
    }

    /// `text` in this style when `on`, else `text` unchanged.
    pub fn paint(self, text: &str, on: bool) -> String {
        if on {
            format!("\x1b[{}m{text}\x1b[0m", self.sgr())
        } else {
            text.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(no_color: Option<&str>, force: Option<&str>, clicolor: Option<&str>) -> ColorEnv {
        ColorEnv {
            no_color: no_color.map(Into::into),
            clicolor_force: force.map(Into::into),
            clicolor: clicolor.map(Into::into),
            term: Some("xterm-256color".into()),
            ci: false,
        }
    }

    #[test]
    fn the_flag_wins_over_the_environment() {
        let no = env(Some("1"), None, None);
        assert!(should_color(ColorChoice::Always, &no, false));
        let force = env(None, Some("1"), None);
        assert!(!should_color(ColorChoice::Never, &force, true));
    }

    #[test]
    fn auto_follows_no_color_then_clicolor_then_the_terminal() {
        let auto = |e: &ColorEnv, tty| should_color(ColorChoice::Auto, e, tty);
        assert!(auto(&env(None, None, None), true));
        assert!(!auto(&env(None, None, None), false));
        // NO_COLOR: present and not empty, whatever its value; it beats CLICOLOR_FORCE.
        assert!(!auto(&env(Some("0"), None, None), true));
        assert!(!auto(&env(Some("1"), Some("1"), None), true));
        assert!(auto(&env(Some(""), None, None), true));
        assert!(auto(&env(None, Some("1"), None), false));
        assert!(!auto(&env(None, Some(""), None), false));
        assert!(!auto(&env(None, None, Some("0")), true));
        assert!(auto(&env(None, None, Some("1")), true));
        // A terminal without TERM, or a dumb one, gets no colour unless CLICOLOR or CI says so.
        let bare = ColorEnv::default();
        assert!(!auto(&bare, true));
        let dumb = ColorEnv {
            term: Some("dumb".into()),
            ..ColorEnv::default()
        };
        assert!(!auto(&dumb, true));
        let ci = ColorEnv {
            ci: true,
            ..ColorEnv::default()
        };
        assert!(auto(&ci, true));
        assert!(!auto(&ci, false));
    }

    #[test]
    fn paint_only_when_on() {
        assert_eq!(Style::Bad.paint("FAIL", true), "\x1b[31mFAIL\x1b[0m");
        assert_eq!(Style::Bad.paint("FAIL", false), "FAIL");
        assert_eq!(ColorChoice::parse("never"), Some(ColorChoice::Never));
        assert_eq!(ColorChoice::parse("sometimes"), None);
    }

    fn choice(args: &[&str]) -> ColorChoice {
        let args: Vec<std::ffi::OsString> = args.iter().map(std::ffi::OsString::from).collect();
        ColorChoice::in_args(&args)
    }

    #[test]
    fn the_flag_is_found_in_every_spelling_and_position() {
        assert_eq!(choice(&["volley", "--help"]), ColorChoice::Auto);
        assert_eq!(
            choice(&["volley", "--color", "never", "--help"]),
            ColorChoice::Never
        );
        assert_eq!(
            choice(&["volley", "run", "p.toml", "--color=always"]),
            ColorChoice::Always
        );
        assert_eq!(
            choice(&["volley", "--color=never", "--color", "always"]),
            ColorChoice::Always
        );
        assert_eq!(
            choice(&["volley", "--color", "sometimes"]),
            ColorChoice::Auto
        );
        assert_eq!(
            choice(&["volley", "--", "--color", "never"]),
            ColorChoice::Auto
        );
        assert_eq!(choice(&["volley", "--colorful"]), ColorChoice::Auto);
    }
}
