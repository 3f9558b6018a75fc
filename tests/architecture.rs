//! The layers of `src/lib.rs`'s layout doc, enforced: every `crate::` path in the library points
//! down the table (to a strictly lower layer), never up and never sideways, so the top-level
//! modules form no cycle. The built-in target (`server`) is imported by no module of the
//! pipeline. Test code (what follows a top-level `#[cfg(test)]`, and `tests.rs`/`*_tests.rs`
//! files) is not part of the layering and is not checked. A module missing from the table fails
//! the test: a new module takes its place in the table on purpose.
//!
//! Also here: no source file over 600 lines, no function over 100, a thin command line. The
//! seams (profiles, protocols, outputs, a run's tail) are kept in `tests/seams.rs`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::source::{code_only, sources, src};

/// Top-level modules by layer, top (1) to bottom: the table of `src/lib.rs`'s layout doc (the
/// test [`the_layout_doc_shows_these_layers`] keeps the two the same). The binary (`src/main.rs`,
/// `src/cli/`) is above them all and imports through `volley::`, so it is not listed.
const LAYERS: &[(f64, &[&str])] = &[
    (1.0, &["suite"]),
    (2.0, &["findmax", "distributed"]),
    (3.0, &["run"]),
    (3.5, &["export"]),
    (4.0, &["engine"]),
    (5.0, &["plan"]),
    (6.0, &["proto", "schedule"]),
    (7.0, &["report"]),
    (8.0, &["analysis"]),
    (9.0, &["record"]),
    (9.5, &["watch"]),
    (
        10.0,
        &["units", "redact", "location", "timer", "error", "color"],
    ),
];

/// The built-in target: a program of its own beside the pipeline, which may use the lower layers
/// but which nothing in the pipeline imports.
const SERVER: &str = "server";
/// Where the built-in target sits for its own imports.
const SERVER_LAYER: f64 = 1.0;

/// The command line (`src/cli/`) at most this many lines in all: argument definitions, dispatch,
/// printing and exit codes; what decides anything lives in the library, under the layer rules.
/// (2,600 until `volley ab`, whose ~100 lines are its flags, the refusal of flags it cannot
/// honour and the two plans built from quick mode's flags; its loop is `suite::ab`.)
const CLI_MAX_LINES: usize = 2_720;

/// Files allowed over [`MAX_LINES`]: none today.
const LONG_FILES: &[&str] = &[];
const MAX_LINES: usize = 600;

fn layer(module: &str) -> Option<f64> {
    if module == SERVER {
        return Some(SERVER_LAYER);
    }
    LAYERS
        .iter()
        .find(|(_, modules)| modules.contains(&module))
        .map(|(l, _)| *l)
}

/// The top-level module a file of `src/` belongs to (`None`: the binary or the crate root).
fn owner(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (!matches!(name.as_str(), "main" | "lib" | "cli")).then_some(name)
}

fn is_test_file(file: &Path) -> bool {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    stem == "tests" || stem.ends_with("_tests")
}

/// The library code of a file: comments removed, test code (from a top-level `#[cfg(test)]` on)
/// cut off; lines kept in place so offsets map back to line numbers.
fn library_code(text: &str) -> String {
    let mut code = String::new();
    for line in text.lines() {
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        code.push_str(line.split("//").next().unwrap_or(""));
        code.push('\n');
    }
    code
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Every top-level module a file's library code names through `crate::`, with its line:
/// `crate::a::X` and each member of `use crate::{a::X, b::{Y, Z}}`.
fn imports(text: &str) -> Vec<(usize, String)> {
    let code = library_code(text);
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let path = &code[at + "crate::".len()..];
        let Some(group) = path.strip_prefix('{') else {
            found.push((line_of(at), ident(path)));
            continue;
        };
        // The members at the group's top level: after `{` and after each `,` at depth 1.
        let base = at + "crate::{".len();
        let (mut depth, mut start) = (1usize, Some(0usize));
        for (i, c) in group.char_indices() {
            if let Some(s) = start
                && !c.is_whitespace()
            {
                let name = ident(&group[s.max(i)..]);
                if !name.is_empty() && name != "self" {
                    found.push((line_of(base + i), name));
                }
                start = None;
            }
            match c {
                '{' => depth += 1,
                '}' if depth == 1 => break,
                '}' => depth -= 1,
                ',' if depth == 1 => start = Some(i + 1),
                _ => {}
            }
        }
    }
    found
}

/// `file:line: what` for every import that breaks the layering.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    for file in files {
        let Some(from) = owner(src, &file) else {
            continue;
        };
        if is_test_file(&file) {
            continue;
        }
        let Some(from_layer) = layer(&from) else {
            bad.push(format!(
                "{}: module `{from}` is in no layer of the table (tests/architecture.rs, src/lib.rs)",
                file.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("readable source");
        for (line, to) in imports(&text) {
            if to == from || to == "Error" {
                continue;
            }
            let at = format!("{}:{line}", file.display());
            if to == SERVER {
                bad.push(format!(
                    "{at}: `{from}` imports the built-in target (`server`), which nothing in the pipeline may use"
                ));
                continue;
            }
            match layer(&to) {
                None => bad.push(format!("{at}: `{from}` imports `{to}`, which is in no layer")),
                Some(to_layer) if to_layer <= from_layer => bad.push(format!(
                    "{at}: `{from}` (layer {from_layer}) imports `{to}` (layer {to_layer}): imports must point down the table"
                )),
                Some(_) => {}
            }
        }
    }
    bad
}

/// The layer table of `src/lib.rs`'s layout doc: `(layer, modules)` from each row
/// `//! | N | [`a`], [`b`] | what they are |`.
fn documented_layers(lib_rs: &str) -> Vec<(f64, Vec<String>)> {
    lib_rs
        .lines()
        .filter_map(|line| {
            let row = line.strip_prefix("//! |")?;
            let mut cells = row.split('|');
            let layer: f64 = cells.next()?.trim().parse().ok()?;
            let modules = cells
                .next()?
                .split(',')
                .map(|m| m.trim().trim_matches(|c| c == '[' || c == ']' || c == '`'))
                .map(str::to_string)
                .collect();
            Some((layer, modules))
        })
        .collect()
}

#[test]
fn the_layout_doc_shows_these_layers() {
    let lib_rs = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let documented = documented_layers(&lib_rs);
    let enforced: Vec<(f64, Vec<String>)> = LAYERS
        .iter()
        .map(|(l, m)| (*l, m.iter().map(|s| s.to_string()).collect()))
        .collect();
    assert_eq!(
        documented, enforced,
        "src/lib.rs's layer table and tests/architecture.rs's LAYERS differ"
    );
}

#[test]
fn imports_point_down_the_layers() {
    let bad = violations(&src());
    assert!(bad.is_empty(), "layering broken:\n{}", bad.join("\n"));
}

#[test]
fn an_upward_import_is_caught() {
    // A copy of two modules of `src/` with a back-edge added: the check must see it.
    let dir = std::env::temp_dir().join(format!("volley-architecture-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("record")).unwrap();
    std::fs::create_dir_all(dir.join("run")).unwrap();
    std::fs::write(
        dir.join("record/mod.rs"),
        "//! r\nuse crate::units::x;\nuse crate::{\n    error::E,\n    run::Options,\n};\n#[cfg(test)]\nmod tests { use crate::run::y; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("run/mod.rs"),
        "use crate::record::RunRecord;\nfn f() { crate::server::spawn(); }\n",
    )
    .unwrap();
    let bad = violations(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(bad.len(), 2, "{bad:#?}");
    assert!(
        bad[0].contains("record/mod.rs:5: `record` (layer 9) imports `run` (layer 3)"),
        "{bad:#?}"
    );
    assert!(
        bad[1].contains("run/mod.rs:2: `run` imports the built-in target"),
        "{bad:#?}"
    );
}

#[test]
fn source_files_stay_short() {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    let mut long: BTreeMap<String, usize> = BTreeMap::new();
    for file in files {
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        let rel = file.strip_prefix(src()).unwrap().display().to_string();
        if lines > MAX_LINES && !LONG_FILES.contains(&rel.as_str()) {
            long.insert(rel, lines);
        }
    }
    assert!(long.is_empty(), "files over {MAX_LINES} lines: {long:#?}");
}

/// Functions allowed over [`MAX_FN_LINES`] (`file::name`): none today.
const LONG_FNS: &[&str] = &[];
const MAX_FN_LINES: usize = 100;

/// `(name, first line, lines)` of every function with a body.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let code = code_only(text);
    let b = code.as_bytes();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    for (at, _) in code.match_indices("fn ") {
        if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            continue;
        }
        let name = ident(&code[at + 3..]);
        if name.is_empty() {
            continue;
        }
        // The body starts at the first `{` outside parentheses, unless a `;` ends a declaration.
        let mut depth = 0i32;
        let mut open = None;
        for (i, c) in code[at..].char_indices() {
            match c {
                '(' | '[' | '<' => depth += 1,
                ')' | ']' | '>' => depth -= 1,
                ';' if depth <= 0 => break,
                '{' if depth <= 0 => {
                    open = Some(at + i);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut depth = 0usize;
        for (i, c) in code[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        let (first, last) = (line_of(at), line_of(open + i));
                        found.push((name.clone(), first, last - first + 1));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    found
}

/// `file:line name (N lines)` for every function of `src/` over the limit.
fn long_functions(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let mut long = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        for (name, line, lines) in functions(&text) {
            let key = format!("{rel}::{name}");
            if lines > MAX_FN_LINES && !LONG_FNS.contains(&key.as_str()) {
                long.push(format!("{rel}:{line} {name} ({lines} lines)"));
            }
        }
    }
    long
}

#[test]
fn functions_stay_short() {
    let long = long_functions(&src());
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn a_long_function_is_caught_and_literals_do_not_fool_the_count() {
    let body = "    let x = 1;\n".repeat(MAX_FN_LINES);
    let text = format!(
        "//! m\n/// a {{ brace in a doc\nfn short(a: Vec<u8>) -> u8 {{\n    let s = \"}}}}\";\n    let c = '{{';\n    let r = r#\"{{\"#;\n    0\n}}\nfn long<'a>(x: &'a str) {{\n{body}}}\ntrait T {{\n    fn declared(&self);\n}}\n"
    );
    let found = functions(&text);
    let names: Vec<(&str, usize)> = found.iter().map(|(n, _, l)| (n.as_str(), *l)).collect();
    assert_eq!(
        names,
        [("short", 6), ("long", MAX_FN_LINES + 2)],
        "{found:?}"
    );
}

#[test]
fn the_command_line_stays_thin() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
    let mut files = Vec::new();
    sources(&dir, &mut files);
    let lines: usize = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap().lines().count())
        .sum();
    assert!(
        lines <= CLI_MAX_LINES,
        "src/cli/ has {lines} lines (at most {CLI_MAX_LINES}): move what decides anything into \
         the library (the rule language: analysis::gate; curl and the starter plan: plan::import; \
         the banner and volley check's listing: run::show)"
    );
}
