//! The seams, enforced: profile, protocol and streaming-protocol variants named only in their own
//! files, every output one file of `src/run/output/`, and a run's tail (summary, record,
//! results) written only by the command line's one `finish`. A new executor, protocol, streaming
//! protocol or output is then a file of its own, not an arm in every module that runs or
//! reports.

mod common;

use std::path::Path;

use common::source::{code_only, sources, src};

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

/// The files that may name the variants of `proto::stream::Spec`: the stream seam, where a
/// streaming protocol's state and tap are dispatched, and the plan's reading of its key. A new
/// streaming protocol is its module under `proto/stream/` plus these two files and its key in
/// `plan/file.rs`: three files outside its module. The engine, recorder, record, reports and
/// thresholds ask a [`Spec`] through its methods or see only the protocol-neutral trace.
const STREAM_FILES: &[&str] = &["proto/stream/mod.rs", "plan/read/stream.rs"];

#[test]
fn only_the_stream_seam_names_streaming_protocols() {
    let found = variant_uses(&src(), STREAM_FILES, &["Spec::"]);
    assert!(
        found.is_empty(),
        "streaming protocol variants named outside {STREAM_FILES:?} (ask the spec through its \
         methods, or read the protocol-neutral trace):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_streaming_protocol_named_elsewhere_is_caught() {
    let dir = std::env::temp_dir().join(format!("volley-stream-seam-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("engine")).unwrap();
    std::fs::write(
        dir.join("engine/stream.rs"),
        "// Spec::Sse in a comment\nfn f(s: &SseSpec) -> bool { SseSpec::default() == *s }\n\
         fn g(s: &Spec) -> bool {\n    matches!(s, Spec::Sse(_))\n}\n",
    )
    .unwrap();
    let found = variant_uses(&dir, STREAM_FILES, &["Spec::"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with("engine/stream.rs:4: "), "{found:#?}");
}
