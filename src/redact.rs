//! Redaction: the values of secret headers never leave the process in anything volley writes —
//! summaries, `run.json` (its configuration and the command line it records), reports, `volley
//! check`'s rendered requests, error messages. Requests still carry the real values.
//!
//! Secret are `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` always, and any
//! header the user marks (`--secret-header NAME`, `[target] secret_headers = [..]`). In the
//! command line, the values of `-H`/`--header` arguments naming a secret header are redacted, and
//! so are `--set NAME=VALUE` values of plan variables used by a secret header's template, and the
//! password of any URL (`http://user:password@host/`).

use std::collections::BTreeSet;

/// What a secret value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Headers whose values are always secret (lower case).
pub const ALWAYS_SECRET: [&str; 4] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
];

/// Which headers (and plan variables) of a test are secret.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    /// Headers the user marked secret, lower case (besides [`ALWAYS_SECRET`]).
    headers: BTreeSet<String>,
    /// Plan variables a secret header's value uses: their `--set` values are secret too.
    vars: BTreeSet<String>,
}

impl Secrets {
    /// The always-secret headers plus `marked` (header names, any case).
    pub fn new<S: AsRef<str>>(marked: impl IntoIterator<Item = S>) -> Self {
        Self {
            headers: marked
                .into_iter()
                .map(|n| n.as_ref().trim().to_ascii_lowercase())
                .filter(|n| !n.is_empty() && !ALWAYS_SECRET.contains(&n.as_str()))
                .collect(),
            vars: BTreeSet::new(),
        }
    }

    /// Also treats the `--set` value of plan variable `name` as secret.
    pub fn add_var(&mut self, name: &str) {
        self.vars.insert(name.to_string());
    }

    /// The headers the user marked secret (lower case), for the record.
    pub fn marked(&self) -> impl Iterator<Item = &str> {
        self.headers.iter().map(String::as_str)
    }

    /// Whether the value of header `name` (any case) is secret.
    pub fn is_secret(&self, name: &str) -> bool {
        let name = name.trim().to_ascii_lowercase();
        ALWAYS_SECRET.contains(&name.as_str()) || self.headers.contains(&name)
    }

    /// `Name: value` with the value redacted if the header is secret; other text unchanged.
    pub fn header_line(&self, line: &str) -> String {
        match line.split_once(':') {
            Some((name, _)) if self.is_secret(name) => format!("{}: {REDACTED}", name.trim()),
            _ => line.to_string(),
        }
    }

    /// A command line with every secret in it redacted (see the module docs). `argv[0]` and
    /// everything else are kept as they are.
    pub fn argv(&self, argv: &[String]) -> Vec<String> {
        let mut out = Vec::with_capacity(argv.len());
        // What the previous argument announced the next one to be.
        let mut next_is = Next::Other;
        for arg in argv {
            let redacted = match next_is {
                Next::Header => self.header_line(arg),
                Next::Set => self.set(arg),
                Next::Other => self.inline(arg),
            };
            next_is = match arg.as_str() {
                "-H" | "--header" => Next::Header,
                "--set" => Next::Set,
                a if short_cluster_ending_in_h(a) => Next::Header,
                _ => Next::Other,
            };
            out.push(redacted);
        }
        out
    }

    /// An argument that may carry its value inline: `--header=…`, `-H…`, `-qH…`, `--set=…`, or a
    /// URL.
    fn inline(&self, arg: &str) -> String {
        if let Some(v) = arg.strip_prefix("--header=") {
            return format!("--header={}", self.header_line(v));
        }
        if let Some(v) = arg.strip_prefix("--set=") {
            return format!("--set={}", self.set(v));
        }
        if let Some(at) = short_header_value(arg) {
            let (flags, value) = arg.split_at(at);
            return match value.strip_prefix('=') {
                Some(value) => format!("{flags}={}", self.header_line(value)),
                None => format!("{flags}{}", self.header_line(value)),
            };
        }
        redact_url_password(arg)
    }

    /// `NAME=VALUE` of `--set`, its value redacted if `NAME` (or `vars.NAME`) is secret.
    fn set(&self, arg: &str) -> String {
        match arg.split_once('=') {
            Some((key, _)) => {
                let name = key.trim();
                let name = name.strip_prefix("vars.").unwrap_or(name);
                if self.vars.contains(name) {
                    format!("{key}={REDACTED}")
                } else {
                    redact_url_password(arg)
                }
            }
            None => arg.to_string(),
        }
    }
}

#[derive(Clone, Copy)]
enum Next {
    Header,
    Set,
    Other,
}

/// Short flags of volley that take no value, which clap lets come before `-H` in one argument
/// (`-qH`).
const BOOLEAN_SHORTS: &[u8] = b"q";

/// `-H` or a cluster like `-qH`: the next argument is the header.
fn short_cluster_ending_in_h(arg: &str) -> bool {
    arg.len() >= 2
        && arg.starts_with('-')
        && !arg.starts_with("--")
        && arg.ends_with('H')
        && arg.as_bytes()[1..arg.len() - 1]
            .iter()
            .all(|b| BOOLEAN_SHORTS.contains(b))
}

/// In `-HName: v`, `-H=Name: v` or `-qHName: v`: where the header starts (after the `H`).
fn short_header_value(arg: &str) -> Option<usize> {
    let bytes = arg.as_bytes();
    if bytes.len() < 3 || bytes[0] != b'-' || bytes[1] == b'-' {
        return None;
    }
    let h = bytes[1..]
        .iter()
        .position(|b| !BOOLEAN_SHORTS.contains(b))?
        + 1;
    (bytes[h] == b'H' && h + 1 < bytes.len()).then_some(h + 1)
}

/// `scheme://user:password@host…` with the password redacted, the rest as written; any other
/// text unchanged.
pub fn redact_url_password(text: &str) -> String {
    let Some(scheme_end) = text.find("://") else {
        return text.to_string();
    };
    let authority_start = scheme_end + 3;
    let rest = &text[authority_start..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let Some(at) = authority.rfind('@') else {
        return text.to_string();
    };
    let Some(colon) = authority[..at].find(':') else {
        return text.to_string();
    };
    format!(
        "{}{REDACTED}{}",
        &text[..authority_start + colon + 1],
        &text[authority_start + at..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn secret_headers_are_the_usual_ones_and_the_marked_ones() {
        let s = Secrets::new(["X-Api-Key", " ", "cookie"]);
        for name in [
            "Authorization",
            "proxy-authorization",
            "COOKIE",
            "Set-Cookie",
            "x-api-key",
        ] {
            assert!(s.is_secret(name), "{name}");
        }
        assert!(!s.is_secret("Content-Type"));
        assert_eq!(s.marked().collect::<Vec<_>>(), ["x-api-key"]);
        assert_eq!(
            s.header_line("Authorization: Bearer abc"),
            "Authorization: [redacted]"
        );
        assert_eq!(s.header_line("X-Api-Key:k"), "X-Api-Key: [redacted]");
        assert_eq!(s.header_line("Accept: */*"), "Accept: */*");
        assert_eq!(s.header_line("no colon"), "no colon");
    }

    #[test]
    fn every_way_of_writing_a_header_flag_is_redacted() {
        let mut s = Secrets::new(["X-Api-Key"]);
        s.add_var("token");
        let got = s.argv(&argv(&[
            "volley",
            "http://u:pw@127.0.0.1:1/",
            "-H",
            "Authorization: Bearer one",
            "--header",
            "Cookie: two",
            "--header=X-Api-Key: three",
            "-HSet-Cookie: four",
            "-H=Proxy-Authorization: five",
            "-qH",
            "x-api-key: six",
            "-qHAuthorization: seven",
            "-H",
            "Accept: text/plain",
            "--set",
            "token=eight",
            "--set=vars.token=nine",
            "--set",
            "pools=64",
            "-c",
            "4",
            "--set",
            "target.base_url=http://a:ten@[::1]:8/x@y",
        ]));
        let joined = got.join(" ");
        for secret in [
            "pw", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        ] {
            assert!(!joined.contains(secret), "{secret} in {joined}");
        }
        assert_eq!(
            got,
            argv(&[
                "volley",
                "http://u:[redacted]@127.0.0.1:1/",
                "-H",
                "Authorization: [redacted]",
                "--header",
                "Cookie: [redacted]",
                "--header=X-Api-Key: [redacted]",
                "-HSet-Cookie: [redacted]",
                "-H=Proxy-Authorization: [redacted]",
                "-qH",
                "x-api-key: [redacted]",
                "-qHAuthorization: [redacted]",
                "-H",
                "Accept: text/plain",
                "--set",
                "token=[redacted]",
                "--set=vars.token=[redacted]",
                "--set",
                "pools=64",
                "-c",
                "4",
                "--set",
                "target.base_url=http://a:[redacted]@[::1]:8/x@y",
            ])
        );
        assert_eq!(
            redact_url_password("http://host/a@b:c"),
            "http://host/a@b:c"
        );
        assert_eq!(
            redact_url_password("http://user@host/"),
            "http://user@host/"
        );
    }
}
