//! `volley completions SHELL` and `volley man`: shell completions and manual pages, generated from
//! the clap definitions, so they never drift from the flags.

use std::path::PathBuf;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::args::Cli;

/// `volley completions`.
#[derive(Debug, Args)]
#[command(after_help = "Install, e.g.:\n  \
    bash: volley completions bash > ~/.local/share/bash-completion/completions/volley\n  \
    zsh:  volley completions zsh > ~/.zfunc/_volley   (with fpath+=~/.zfunc before compinit)\n  \
    fish: volley completions fish > ~/.config/fish/completions/volley.fish")]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// `volley man`.
#[derive(Debug, Args)]
#[command(after_help = "Read it at once: volley man | man -l -")]
pub struct ManArgs {
    /// Write volley.1 and one page per subcommand (volley-run.1, …) into this folder instead of
    /// printing volley.1 to stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Prints the completion script for `a.shell` to stdout.
pub fn completions(a: CompletionsArgs) -> anyhow::Result<u8> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "volley", &mut out);
    super::to_stdout(&out)?;
    Ok(super::EXIT_OK)
}

/// Prints `volley.1`, or writes every page into `a.dir`.
pub fn man(a: ManArgs) -> anyhow::Result<u8> {
    let cmd = Cli::command();
    match a.dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|e| file_error(&dir, e))?;
            clap_mangen::generate_to(cmd, &dir).map_err(|e| file_error(&dir, e))?;
            eprintln!("wrote the manual pages into {}", dir.display());
        }
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            super::to_stdout(&out)?;
        }
    }
    Ok(super::EXIT_OK)
}

fn file_error(dir: &std::path::Path, e: std::io::Error) -> volley::Error {
    volley::Error::File {
        action: volley::error::FileAction::Write,
        path: dir.to_path_buf(),
        cause: e,
    }
}
