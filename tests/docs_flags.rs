//! docs/flags.md's table says which command takes which flag: every row agrees with the
//! binary's `--help` of each command, and every flag that two or more of them take has a row.

mod common;

use std::collections::{BTreeMap, BTreeSet};

/// The long flags a command's `--help` lists.
fn flags_of(sub: &str) -> BTreeSet<String> {
    let mut args: Vec<&str> = sub.split_whitespace().collect();
    args.push("--help");
    let (code, help, stderr) = common::run_volley(&args);
    assert_eq!(code, Some(0), "{sub}: {stderr}");
    help.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l
                .strip_prefix('-')
                .filter(|r| r.len() > 2 && &r[1..3] == ", ")
                .map_or(l, |r| &r[3..]);
            let flag = l.strip_prefix("--")?.split([' ', '=', '<', '[']).next()?;
            Some(format!("--{flag}"))
        })
        .filter(|f| f != "--help" && f != "--version")
        .collect()
}

#[test]
fn the_flag_table_is_the_binarys() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/flags.md")).unwrap();
    let mut lines = doc.lines().skip_while(|l| !l.starts_with("| Flag |"));
    let head: Vec<&str> = lines.next().unwrap().split('|').map(str::trim).collect();
    let commands: Vec<&str> = head[2..head.len() - 2].to_vec();
    let helps: BTreeMap<&str, BTreeSet<String>> = commands
        .iter()
        .map(|c| (*c, flags_of(if *c == "volley URL" { "" } else { c })))
        .collect();
    let mut rows = BTreeSet::new();
    for line in lines.skip(1).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let flag = cells[1].trim_matches('`').to_string();
        for (i, c) in commands.iter().enumerate() {
            let said = cells[2 + i] == "✓";
            let takes = helps[c].contains(&flag);
            assert_eq!(
                said, takes,
                "docs/flags.md: {flag} for {c}: the help says {takes}"
            );
        }
        rows.insert(flag);
    }
    let mut takers: BTreeMap<&String, usize> = BTreeMap::new();
    for flags in helps.values() {
        for f in flags {
            *takers.entry(f).or_default() += 1;
        }
    }
    for (flag, n) in takers {
        assert!(
            n < 2 || rows.contains(flag),
            "docs/flags.md has no row for {flag} ({n} commands)"
        );
    }
}

#[test]
fn color_has_a_heading_of_its_own_in_every_help() {
    for sub in [
        "",
        "run",
        "check",
        "report",
        "compare",
        "suite",
        "coordinate",
    ] {
        let mut args: Vec<&str> = sub.split_whitespace().collect();
        args.push("--help");
        let (_, help, _) = common::run_volley(&args);
        let heading = help
            .lines()
            .take_while(|l| !l.contains("--color"))
            .filter(|l| !l.starts_with(' ') && l.ends_with(':'))
            .last()
            .unwrap_or_default();
        assert_eq!(heading, "Terminal:", "volley {sub} --help:\n{help}");
    }
}
