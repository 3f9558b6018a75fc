//! The layers of `src/lib.rs`'s layout doc, enforced: every `crate::` path in the library points
//! down the table (to a strictly lower layer), never up and never sideways, so the top-level
//! modules form no cycle. The built-in target (`server`) is imported by no module of the
//! pipeline. Test code (what follows a top-level `#[cfg(test)]`, and `tests.rs`/`*_tests.rs`
//! files) is not part of the layering and is not checked. A module missing from the table fails
//! the test: a new module takes its place in the table on purpose.
//!
//! Also here: no source file over 600 lines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
const CLI_MAX_LINES: usize = 2_500;

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

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
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

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
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

/// The files that may name the variants of `plan::Profile` (and its `Iterations`): the profile
/// itself and its reading from a plan. Everything else asks a profile through its methods, so a
/// new executor is a variant there, not a match arm in every module that runs or reports load.
const PROFILE_FILES: &[&str] = &["plan/profile.rs", "plan/read/profile.rs"];

/// `file:line: text` for every naming of a profile variant (`Profile::Vus`, `Iterations::PerVu`,
/// `Profile::{…}`) in `src/` outside [`PROFILE_FILES`], test code included.
fn profile_variant_uses(src: &Path) -> Vec<String> {
    variant_uses(src, PROFILE_FILES, &["Profile::", "Iterations::"])
}

/// The file that may name the variants of `proto::client::Protocol` and of the per-protocol
/// enums beside it (`Wire`, `Connection`): the client seam. Everything else asks a protocol
/// through its methods (`name`, `for_grpc`, `multiplexes`, `wire_name`, …) and plans and flags
/// read it by name, so a new protocol is its module, its `pub mod`, its arms in this file and
/// its `run.json` name.
const PROTOCOL_FILES: &[&str] = &["proto/client.rs"];

/// `file:line: text` for every naming of a protocol variant (`Protocol::Http2`, `Wire::Http1`,
/// `Connection::Http2Tls`, `Protocol::{…}`) in `src/` outside [`PROTOCOL_FILES`], test code
/// included. Constants (`Protocol::ALL`) and methods are not variants.
fn protocol_variant_uses(src: &Path) -> Vec<String> {
    variant_uses(
        src,
        PROTOCOL_FILES,
        &["Protocol::", "Wire::", "Connection::"],
    )
}

/// `file:line: text` for every `Enum::Variant` (or `Enum::{…}`, `Enum::*`) of the enums whose
/// paths are `names` (`"Profile::"`) in `src/` outside `allowed`. A variant is a name in
/// CamelCase: `Enum::method` and `Enum::CONSTANT` are not; neither is `OtherEnum::` (a longer
/// name ending in the same letters).
fn variant_uses(src: &Path, allowed: &[&str], names: &[&str]) -> Vec<String> {
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap().display().to_string();
        if allowed.contains(&rel.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = code_only(&text);
        for name in names {
            for (at, _) in code.match_indices(name) {
                let before = code[..at].chars().next_back();
                let rest = &code[at + name.len()..];
                let ident: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let own_name = !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
                let variant = ident.starts_with(|c: char| c.is_uppercase())
                    && ident.chars().any(|c| c.is_lowercase());
                let glob = rest.starts_with(['{', '*']);
                if own_name && (variant || glob) {
                    let line = code[..at].matches('\n').count() + 1;
                    let source = text.lines().nth(line - 1).unwrap_or("").trim();
                    found.push(format!("{rel}:{line}: {source}"));
                }
            }
        }
    }
    found
}

#[test]
fn only_the_profile_names_its_variants() {
    let found = profile_variant_uses(&src());
    assert!(
        found.is_empty(),
        "profile variants named outside {PROFILE_FILES:?} (ask the profile through its methods, \
         or dispatch on its model):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_profile_variant_named_elsewhere_is_caught() {
    let dir = std::env::temp_dir().join(format!("volley-profile-seam-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("plan")).unwrap();
    std::fs::create_dir_all(dir.join("run")).unwrap();
    std::fs::write(
        dir.join("plan/profile.rs"),
        "fn m(p: &Profile) { match p { Profile::Vus { .. } => {} } }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("run/load.rs"),
        "// Profile::Vus in a comment\nfn k() -> ProfileKind { ProfileKind::Ladder }\n\
         fn f(p: &Profile) -> bool {\n    matches!(p, Profile::Arrival { .. })\n}\n\
         use crate::plan::Iterations::{PerVu};\n",
    )
    .unwrap();
    let found = profile_variant_uses(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with("run/load.rs:4: "), "{found:#?}");
    assert!(found[1].starts_with("run/load.rs:6: "), "{found:#?}");
}

#[test]
fn only_the_client_seam_names_protocol_variants() {
    let found = protocol_variant_uses(&src());
    assert!(
        found.is_empty(),
        "protocol variants named outside {PROTOCOL_FILES:?} (ask the protocol through its \
         methods, or read it by name):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_protocol_variant_named_elsewhere_is_caught() {
    let dir = std::env::temp_dir().join(format!("volley-protocol-seam-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("proto")).unwrap();
    std::fs::create_dir_all(dir.join("plan")).unwrap();
    std::fs::write(
        dir.join("proto/client.rs"),
        "fn m(p: Protocol) -> bool { matches!(p, Protocol::Http2) }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("plan/connect.rs"),
        "// Protocol::Http1 in a comment\nfn k() -> WireProtocol { WireProtocol::H2c }\n\
         fn f(p: Protocol) -> bool {\n    p == Protocol::Http1 && Protocol::ALL.len() > 1\n}\n\
         fn g() -> Protocol { Protocol::default() }\nfn w(w: &Wire) { if let Wire::Http2(_) = w {} }\n",
    )
    .unwrap();
    let found = protocol_variant_uses(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with("plan/connect.rs:4: "), "{found:#?}");
    assert!(found[1].starts_with("plan/connect.rs:7: "), "{found:#?}");
}

/// The folder every implementation of `run::Output` lives in, one per file: a new output is a
/// file there (and its flag), never an arm in the commands that run.
const OUTPUT_FOLDER: &str = "run/output/";

/// `file:line: text` for every `impl … Output for …` in `src/` outside [`OUTPUT_FOLDER`] (test
/// code included), and for every file there with more than one.
fn output_impls_astray(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        let code = code_only(&text);
        let impls: Vec<usize> = code
            .match_indices("impl")
            .filter(|(at, _)| {
                let rest = &code[*at..];
                let head = &rest[..rest.find('{').unwrap_or(rest.len())];
                let before = code[..*at].chars().next_back();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && head
                        .split_whitespace()
                        .any(|w| w == "Output" || w.ends_with("::Output"))
                    && head.contains(" for ")
            })
            .map(|(at, _)| code[..at].matches('\n').count() + 1)
            .collect();
        let inside = rel.starts_with(OUTPUT_FOLDER) && !rel.ends_with("mod.rs");
        let astray = match inside {
            true => impls.iter().skip(1).copied().collect(),
            false => impls,
        };
        for line in astray {
            let source = text.lines().nth(line - 1).unwrap_or("").trim();
            found.push(format!("{rel}:{line}: {source}"));
        }
    }
    found
}

#[test]
fn every_output_is_one_file_of_the_output_seam() {
    let found = output_impls_astray(&src());
    assert!(
        found.is_empty(),
        "outputs outside {OUTPUT_FOLDER} (one file each, implementing run::Output):\n{}",
        found.join("\n")
    );
}

#[test]
fn an_output_outside_the_seam_is_caught() {
    let dir = std::env::temp_dir().join(format!("volley-output-seam-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("run/output")).unwrap();
    std::fs::create_dir_all(dir.join("cli")).unwrap();
    std::fs::write(
        dir.join("run/output/json.rs"),
        "impl Output for JsonFile {\n}\nimpl Display for JsonFile {}\nimpl super::Output for Other {}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("cli/runs.rs"),
        "// impl Output for X in a comment\nimpl volley::run::Output for Mine {\n}\nimpl Outputs {}\n",
    )
    .unwrap();
    let found = output_impls_astray(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with("cli/runs.rs:2: "), "{found:#?}");
    assert!(found[1].starts_with("run/output/json.rs:4: "), "{found:#?}");
}

/// The only files of the command line that give a record to its outputs or print a run's
/// summary: the one `finish` of every command (`cli/mod.rs`) and the series of repeats.
const RUN_TAIL_FILES: &[&str] = &["cli/mod.rs", "cli/repeat.rs"];

#[test]
fn the_command_line_ends_every_run_in_one_place() {
    let mut files = Vec::new();
    sources(&src().join("cli"), &mut files);
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src()).unwrap().display().to_string();
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        for tail in [
            "outputs.finish(",
            "text::render(",
            "write_results",
            "write_record(",
        ] {
            if code.contains(tail) && !RUN_TAIL_FILES.contains(&rel.as_str()) {
                found.push(format!("{rel}: {tail}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a run's tail written outside {RUN_TAIL_FILES:?} (call cli::finish):\n{}",
        found.join("\n")
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

/// The text with comments, string and character literals blanked out (newlines kept), so that
/// braces inside them do not count.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let blank = |s: &[u8], out: &mut String| {
        for &c in s {
            out.push(if c == b'\n' { '\n' } else { ' ' });
        }
    };
    let mut i = 0;
    while i < b.len() {
        let end = if b[i..].starts_with(b"//") {
            b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n)
        } else if b[i..].starts_with(b"/*") {
            text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2)
        } else if b[i] == b'r'
            && matches!(b.get(i + 1), Some(b'"' | b'#'))
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
        {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let open = i + 1 + hashes + 1;
            text[open..]
                .find(&close)
                .map_or(b.len(), |n| open + n + close.len())
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        } else if b[i] == b'\'' && (b.get(i + 1) == Some(&b'\\') || b.get(i + 2) == Some(&b'\'')) {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'\'' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
            continue;
        };
        let end = end.min(b.len());
        blank(&b[i..end], &mut out);
        i = end;
    }
    out
}

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
