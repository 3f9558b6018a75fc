//! Every volley command in a code block of the README and of `docs/` is parsed by the binary:
//! `volley ARGS --help` makes clap read every flag and value before `--help` (an unknown flag, a
//! value its parser refuses, a subcommand that is gone: exit 2) and then print the help (exit 0)
//! without running anything. A command the docs show that the binary no longer accepts fails
//! here, with its file and line.

mod common;

/// A command found in the docs: where, and its words after `volley`.
#[derive(Debug)]
struct DocCommand {
    at: String,
    words: Vec<String>,
}

/// The shell lines of the fenced code blocks (```sh, ```bash, ```console, or none), with `\`
/// continuations joined, each with its first line number.
fn shell_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<bool> = None;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(matches!(
                    info.trim(),
                    "" | "sh" | "bash" | "console" | "shell"
                )),
            };
            continue;
        }
        if fence != Some(true) {
            continue;
        }
        let (start, mut joined) = pending.take().unwrap_or((i + 1, String::new()));
        let line = line.trim();
        match line.strip_suffix('\\') {
            Some(head) => {
                joined.push_str(head.trim_end());
                joined.push(' ');
                pending = Some((start, joined));
            }
            None => {
                joined.push_str(line);
                out.push((start, joined));
            }
        }
    }
    out
}

/// Shell words of each command of `line` (commands end at `|`, `;`, `&`, `&&`; a redirection
/// `>`/`<` ends the command's arguments; `#` starts a comment), quotes removed. Enough for the
/// docs' commands.
fn commands(line: &str) -> Vec<Vec<String>> {
    let mut s = Splitter::default();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                s.in_word = true;
                s.word.extend(chars.by_ref().take_while(|q| *q != '\''));
            }
            '"' => {
                s.in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => s.word.extend(chars.next()),
                        q => s.word.push(q),
                    }
                }
            }
            '\\' => {
                s.in_word = true;
                s.word.extend(chars.next());
            }
            c if c.is_whitespace() => s.end_word(),
            '#' if !s.in_word => break,
            '|' | ';' | '&' => s.end_command(false),
            // A redirection: its target is not an argument.
            '>' | '<' => s.end_command(true),
            c => {
                s.in_word = true;
                s.word.push(c);
            }
        }
    }
    s.end_command(false);
    s.all
}

/// The state of [`commands`].
#[derive(Default)]
struct Splitter {
    all: Vec<Vec<String>>,
    words: Vec<String>,
    word: String,
    in_word: bool,
    /// After a redirection: the words until the command's end are not arguments.
    skipping: bool,
}

impl Splitter {
    fn end_word(&mut self) {
        if self.in_word && !self.skipping {
            self.words.push(std::mem::take(&mut self.word));
        }
        self.word.clear();
        self.in_word = false;
    }

    /// Ends the command's arguments; `skip`: what follows until the next command is not.
    fn end_command(&mut self, skip: bool) {
        self.end_word();
        if !self.words.is_empty() {
            self.all.push(std::mem::take(&mut self.words));
        }
        self.skipping = skip;
    }
}

/// The volley commands of the docs: words after `volley`, `./target/release/volley` or
/// `cargo run --release --`, environment assignments before them skipped.
fn volley_commands() -> Vec<DocCommand> {
    let mut found = Vec::new();
    for doc in common::documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc.file_name().unwrap().to_string_lossy().into_owned();
        for (line_no, line) in shell_lines(&text) {
            // `$!` (the last background process) as a PID the flag can parse.
            let line = line.trim_start_matches("$ ").replace("$!", "1");
            for words in commands(&line) {
                let mut rest = words
                    .iter()
                    .skip_while(|w| w.contains('=') && !w.starts_with('-'))
                    .map(String::as_str);
                let args: Vec<String> = match rest.next() {
                    Some("volley" | "./target/release/volley" | "target/release/volley") => {
                        rest.map(str::to_string).collect()
                    }
                    Some("cargo") => {
                        let words: Vec<&str> = rest.collect();
                        match words.iter().position(|w| *w == "--") {
                            Some(i) if words.first() == Some(&"run") => {
                                words[i + 1..].iter().map(|w| w.to_string()).collect()
                            }
                            _ => continue,
                        }
                    }
                    _ => continue,
                };
                found.push(DocCommand {
                    at: format!("{name}:{line_no}"),
                    words: args,
                });
            }
        }
    }
    found
}

#[test]
fn every_volley_command_in_the_docs_is_accepted_by_the_binary() {
    let found = volley_commands();
    assert!(found.len() >= 40, "only {} commands found", found.len());
    let mut refused = Vec::new();
    for f in &found {
        // `--` ends the options: `--help` after it would be an argument.
        if f.words.iter().any(|w| w == "--") || f.words.iter().any(|w| w == "--help") {
            continue;
        }
        let out = common::volley()
            .args(&f.words)
            .arg("--help")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        if out.status.code() != Some(0) {
            refused.push(format!(
                "{}: volley {}\n    {}",
                f.at,
                f.words.join(" "),
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .unwrap_or_default()
            ));
        }
    }
    assert!(
        refused.is_empty(),
        "{} of {} documented commands are refused:\n{}",
        refused.len(),
        found.len(),
        refused.join("\n")
    );
}

#[test]
fn the_splitter_reads_the_docs_shell_as_a_shell_would() {
    assert_eq!(
        commands("volley a -H 'X: y z' --body \"{\\\"a\\\": 1}\" | head -1 # note"),
        vec![
            vec!["volley", "a", "-H", "X: y z", "--body", "{\"a\": 1}"],
            vec!["head", "-1"]
        ]
    );
    assert_eq!(
        commands("volley check p.toml && volley run p.toml > out.txt"),
        vec![
            vec!["volley", "check", "p.toml"],
            vec!["volley", "run", "p.toml"]
        ]
    );
    assert_eq!(
        shell_lines("```sh\nvolley a \\\n  -c 2\n```\n\nvolley b\n"),
        vec![(2, "volley a -c 2".to_string())]
    );
    // A command that clap refuses is refused through the harness too (so the test can fail).
    let out = common::volley()
        .args(["http://127.0.0.1:9/", "--no-such-flag", "--help"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Every chapter under `docs/` is linked from the README and named in `volley --help`.
#[test]
fn every_chapter_is_linked_from_the_readme_and_the_help() {
    let docs = common::documents();
    let readme = std::fs::read_to_string(&docs[0]).unwrap();
    let out = common::volley().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for chapter in &docs[1..] {
        let name = format!("docs/{}", chapter.file_name().unwrap().to_string_lossy());
        assert!(
            readme.contains(&format!("]({name}")),
            "the README links no {name}"
        );
        assert!(
            help.contains(&name),
            "volley --help names no {name}:\n{help}"
        );
    }
}
