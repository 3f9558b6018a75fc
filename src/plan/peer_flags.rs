//! Hints for flags that mean something else in the tools volley's users come from: oha's and
//! curl's `-d` (a body; volley's `-d` is the duration), oha's `-z` (the duration) and `-q`
//! (queries per second), wrk's `-t` (threads). Shown under clap's error, never instead of it.
//! And a mistyped command ([`mistyped_command`]), which clap would take for quick mode's URL:
//! that one is the error.

/// `volley verfiy a.json`: a first argument that is neither a flag nor a URL (no `:`, `/` or
/// `.`) but one edit from a command's name (two for names of 5 letters or more), said as an
/// error; clap would read it as quick mode's URL. `None` otherwise. `args` are the process's
/// arguments, program name first; `cli` the command line's definition.
pub fn mistyped_command(args: &[String], cli: &clap::Command) -> Option<String> {
    let commands = || {
        cli.get_subcommands()
            .flat_map(|s| s.get_name_and_visible_aliases())
    };
    let word = args.get(1)?;
    if word.len() < 3 || word.starts_with('-') || word.contains([':', '/', '.']) {
        return None;
    }
    if word == "help" || commands().any(|name| name == word) {
        return None;
    }
    let name = crate::plan::read::hints::nearest(word, commands())?;
    Some(format!(
        "error: `{word}` is neither a command nor a URL: did you mean `volley {name}`? \
         (volley --help lists the commands)"
    ))
}

/// A hint for a command line clap refused, when it holds a peer tool's flag: `None` when it
/// holds none. `args` are the process's arguments, program name first.
pub fn hint(args: &[String]) -> Option<String> {
    let mut hints = Vec::new();
    for (i, arg) in args.iter().enumerate().skip(1) {
        let (flag, attached) = split(arg);
        let value = attached.or_else(|| args.get(i + 1).map(String::as_str));
        if let Some(h) = one(flag, value) {
            hints.push(h);
        }
    }
    hints.dedup();
    (!hints.is_empty()).then(|| hints.join("\n"))
}

/// `-d5s` → (`-d`, Some(`5s`)); `-d` → (`-d`, None); anything else → (itself, None).
fn split(arg: &str) -> (&str, Option<&str>) {
    match arg.get(..2) {
        Some(flag @ ("-d" | "-z" | "-q" | "-t")) if arg.len() > 2 => (flag, Some(&arg[2..])),
        _ => (arg, None),
    }
}

fn one(flag: &str, value: Option<&str>) -> Option<String> {
    let numeric = value.is_some_and(|v| v.parse::<f64>().is_ok());
    match flag {
        "-d" if value.is_some_and(|v| super::read::parse_duration(v).is_err()) => Some(
            "hint: did you mean `--body`? (oha and curl use -d for the body; volley's -d is \
             the duration, e.g. -d 10s)"
                .into(),
        ),
        "-z" => Some(
            "hint: did you mean `-d`? (oha's -z is the duration; volley's is -d, e.g. -d 30s)"
                .into(),
        ),
        "-q" if numeric => Some(
            "hint: did you mean `--rate`? (oha's -q is queries per second; volley's -q is \
             --quiet; --rate 100 sends 100 requests per second on a fixed schedule)"
                .into(),
        ),
        "-t" => Some(
            "hint: did you mean `--threads`? (wrk's -t is its threads; volley's is --threads N, \
             and by default it starts one per core that the run can use)"
                .into(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::hint;

    fn args(list: &[&str]) -> Vec<String> {
        std::iter::once("volley")
            .chain(list.iter().copied())
            .map(String::from)
            .collect()
    }

    #[test]
    fn peer_flags_get_a_hint() {
        let h = hint(&args(&["http://x/", "-d", "{\"a\":1}"])).unwrap();
        assert!(h.contains("--body"), "{h}");
        assert!(
            hint(&args(&["http://x/", "-z", "10s"]))
                .unwrap()
                .contains("-d 30s")
        );
        assert!(
            hint(&args(&["http://x/", "-q", "100"]))
                .unwrap()
                .contains("--rate")
        );
        assert!(
            hint(&args(&["http://x/", "-t4"]))
                .unwrap()
                .contains("--threads")
        );
    }

    #[test]
    fn volleys_own_use_gets_none() {
        assert_eq!(hint(&args(&["http://x/", "-d", "10s", "-q"])), None);
        assert_eq!(
            hint(&args(&["http://x/", "-d10s", "-q", "--rate", "5"])),
            None
        );
    }
}
