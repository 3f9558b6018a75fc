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

/// The documented quick-mode commands aimed at the built-in target (`http://127.0.0.1:8080`)
/// really run, against a built-in target of this test: its address in place of 8080's, the
/// load made small (durations 1 s, at most 300 requests, 300/s, 8 connections, 2 repeats), the
/// metrics page on any free port, the results in a scratch folder. Each must end well (exit 0)
/// and leave records that pass the verifier. (Commands for other hosts — a coordinator, a TLS
/// port, `api` — and those that need files of an earlier step are parsed above, not run.)
#[test]
fn the_documented_quick_mode_commands_run_against_the_target() {
    let target = common::target();
    let addr = target.base_url().trim_start_matches("http://").to_string();
    let scratch = common::temp_dir("docs-run");
    let mut ran = 0;
    for f in volley_commands() {
        let runs_here = f
            .words
            .first()
            .is_some_and(|w| w.starts_with("http://127.0.0.1:8080"));
        if !runs_here || f.words.iter().any(|w| w == "--join") {
            continue;
        }
        let out = scratch.join(format!("run-{ran}"));
        let mut args = small(&f.words, &addr, &out);
        if !args.iter().any(|w| w == "--out") {
            args.extend(["--out".to_string(), out.display().to_string()]);
        }
        if !args.iter().any(|w| w == "-q" || w == "--quiet") {
            args.push("-q".into());
        }
        let done = common::volley().args(&args).output().unwrap();
        assert_eq!(
            done.status.code(),
            Some(0),
            "{}: volley {}\n{}",
            f.at,
            args.join(" "),
            String::from_utf8_lossy(&done.stderr)
        );
        let records = common::records_under(&out);
        assert!(!records.is_empty(), "{}: no record written", f.at);
        records.iter().for_each(|r| common::verified(r));
        ran += 1;
    }
    assert!(ran >= 8, "only {ran} documented quick-mode commands ran");
}

/// `words` with the load made small and the target's address in (see the test above).
fn small(words: &[String], addr: &str, out: &std::path::Path) -> Vec<String> {
    let cap = |value: &str, most: f64| {
        let (number, unit) = value.split_at(value.find('/').unwrap_or(value.len()));
        let n: f64 = number.parse().unwrap_or(most);
        format!("{}{unit}", n.min(most))
    };
    let mut args = Vec::with_capacity(words.len());
    let mut flag: Option<&str> = None;
    for word in words {
        let value = match flag {
            Some("-d" | "--duration") => "1s".to_string(),
            Some("-n" | "--requests") => cap(word, 300.0),
            Some("--rate") => cap(word, 300.0),
            Some("-c" | "--connections") => cap(word, 8.0),
            Some("--repeat") => cap(word, 2.0),
            Some("--metrics-listen") => "127.0.0.1:0".to_string(),
            // Nothing of ours listens there: the pushes fail, as the docs' runs without a
            // Prometheus would, and the record says so.
            Some("--prometheus-rw") => {
                format!("http://127.0.0.1:{}/api/v1/write", common::closed_port())
            }
            Some("--out") => out.join(word).display().to_string(),
            _ => word.replace("127.0.0.1:8080", addr),
        };
        flag = word.starts_with('-').then_some(word.as_str());
        args.push(value);
    }
    args
}

/// Every relative link of the README, `docs/` and `bench/README.md` names a file that is there,
/// and its `#anchor`, if any, one of that file's headings (as GitHub makes them: lower case,
/// punctuation dropped, spaces to `-`, `-1`, `-2`… on repeats); every path of the repository
/// they name in inline code (`tests/signals.rs`) is there too.
#[test]
fn every_link_in_the_docs_resolves() {
    let mut docs = common::documents();
    docs.push(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/README.md"));
    let mut bad = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for (line, target) in links(&text) {
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = match path {
                "" => doc.clone(),
                p => doc.parent().unwrap().join(p),
            };
            let at = format!("{}:{line}: {target}", doc.display());
            if !file.exists() {
                bad.push(format!("{at}: no such file"));
            } else if !anchor.is_empty() && file.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&file).unwrap();
                if !anchors(&text).contains(anchor) {
                    bad.push(format!("{at}: no such heading"));
                }
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for (line, path) in named_paths(&text) {
            if !root.join(&path).exists() {
                bad.push(format!("{}:{line}: `{path}`: no such file", doc.display()));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// One line of a Markdown text outside fenced code blocks: its number, its prose and its
/// inline code spans (a span may run over lines of its paragraph; a blank line ends it).
struct MdLine {
    number: usize,
    text: String,
    prose: String,
    code: Vec<String>,
}

/// The lines of `text` outside fenced code blocks, prose and inline code apart.
fn md_lines(text: &str) -> Vec<MdLine> {
    let (mut out, mut fenced, mut in_code) = (Vec::new(), false, false);
    let mut span = String::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            (fenced, in_code) = (!fenced, false);
            continue;
        }
        if fenced {
            continue;
        }
        if line.trim().is_empty() {
            in_code = false;
            span.clear();
        }
        let mut md = MdLine {
            number: i + 1,
            text: line.to_string(),
            prose: String::new(),
            code: Vec::new(),
        };
        for c in line.chars().chain(std::iter::once('\n')) {
            match (c, in_code) {
                ('`', true) => md.code.push(std::mem::take(&mut span)),
                ('`', false) => md.prose.push(' '),
                (c, true) => span.push(c),
                (c, false) => md.prose.push(c),
            }
            in_code ^= c == '`';
        }
        out.push(md);
    }
    out
}

/// Paths of the repository named in inline code (`tests/signals.rs`), with their line numbers;
/// not those with a pattern (`*`, `…`, `<`) or of what runs write (`fuzz/corpus/`, …).
fn named_paths(text: &str) -> Vec<(usize, String)> {
    let tops = [
        "src/",
        "tests/",
        "bench/",
        "examples/",
        "docs/",
        "proto/",
        "schema/",
        ".ci/",
    ];
    let plain = |code: &str| {
        code.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c))
    };
    md_lines(text)
        .into_iter()
        .flat_map(|l| l.code.into_iter().map(move |c| (l.number, c)))
        .filter(|(_, code)| plain(code) && tops.iter().any(|t| code.starts_with(t)))
        .collect()
}

/// The relative link targets of `text`'s prose (`[text](target)`, a title after the target
/// dropped), with their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for line in md_lines(text) {
        for part in line.prose.split("](").skip(1) {
            let target = part.split([')', ' ']).next().unwrap_or("");
            let external = ["http://", "https://", "mailto:"]
                .iter()
                .any(|s| target.starts_with(s));
            if !external && !target.is_empty() {
                out.push((line.number, target.to_string()));
            }
        }
    }
    out
}

/// The anchors GitHub gives the ATX headings of `text` (`#` to `######` and a space): lower
/// case, punctuation but `-` and `_` dropped, spaces to `-`, `-1`, `-2`… on repeats.
fn anchors(text: &str) -> std::collections::BTreeSet<String> {
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    let mut out = std::collections::BTreeSet::new();
    for line in md_lines(text) {
        let hashes = line.text.len() - line.text.trim_start_matches('#').len();
        let rest = &line.text[hashes..];
        if !(1..=6).contains(&hashes) || !(rest.is_empty() || rest.starts_with(' ')) {
            continue;
        }
        let slug = rest.trim().trim_end_matches('#').trim();
        let slug: String = slug
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let n = seen.entry(slug.clone()).or_default();
        out.insert(match *n {
            0 => slug.clone(),
            k => format!("{slug}-{k}"),
        });
        *n += 1;
    }
    out
}

/// The checker above reads Markdown as GitHub does: headings only with `#`…`######` and a
/// space, outside fences, closing `#` dropped; links and paths outside code, code spans over
/// lines included.
#[test]
fn the_link_checker_reads_markdown_as_github_does() {
    let text = "# A `b` c?\n## A b c\n#tag\n####### seven\n```\n# fenced\n[f](fenced.md)\n```\n\
                ### Closed ###\nsee [x](a.md#h \"title\"), `[y](code.md)`, a span `over\n\
                lines [z](span.md)` and [w](b.md) in `tests/a.rs`, `src/*.rs`\n";
    let anchors: Vec<String> = anchors(text).into_iter().collect();
    assert_eq!(anchors, ["a-b-c", "a-b-c-1", "closed"]);
    assert_eq!(
        links(text),
        [(10, "a.md#h".to_string()), (11, "b.md".to_string())]
    );
    assert_eq!(named_paths(text), [(11, "tests/a.rs".to_string())]);
}
