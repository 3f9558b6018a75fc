//! Redaction: the values of secret headers never leave the process in anything volley writes —
//! summaries, `run.json` (its configuration and the command line it records), reports, `volley
//! check`'s rendered requests, error messages. Requests still carry the real values.
//!
//! Secret are `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` always, and any
//! header the user marks (`--secret-header NAME`, `[target] secret_headers = [..]`). In the
//! command line, the values of `-H`/`--header` arguments naming a secret header are redacted, and
//! so are `--set NAME=VALUE` values of plan variables used by a secret header's template,
//! `--token`, and the user information of any URL (`http://user:password@host/`,
//! `http://TOKEN@host/`). The command line is read as its parser read it ([`Argv`]: which
//! argument holds which flag's value), so that every spelling clap accepts (`-kH 'Authorization:
//! …'`, `-kqHAuthorization:…`, `--token=…`) is redacted, not only the ones a pattern foresaw.

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

/// What an argument of the command line holds, as the command line's parser read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgRole {
    /// A header, `Name: value` (`-H`): its value is secret when its name is.
    Header,
    /// `NAME=VALUE` of `--set`: secret when the variable is.
    Set,
    /// A secret as a whole (`--token`).
    Secret,
    /// A URL: its user information is secret.
    Url,
}

/// A command line with the values its parser read from it, each with its role: a value is
/// in the command line as a whole argument (`-H VALUE`, a positional URL) or as an argument's
/// end (`-HVALUE`, `-qHVALUE`, `--header=VALUE`), which is where redaction finds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Argv {
    args: Vec<String>,
    values: Vec<(ArgRole, String)>,
}

impl Argv {
    /// `args` (argv\[0\] first) with nothing known of their values: secrets are found by their
    /// spelling alone.
    pub fn plain(args: Vec<String>) -> Self {
        Self {
            args,
            values: Vec::new(),
        }
    }

    /// Says that the parser read `value`, of `role`, from one of the arguments.
    pub fn mark(&mut self, role: ArgRole, value: String) {
        if !value.is_empty() {
            self.values.push((role, value));
        }
    }

    /// The arguments as given (secrets included: for the process itself, never to be written).
    pub fn args(&self) -> &[String] {
        &self.args
    }

    /// The value read from `arg`, if any: the longest one that is `arg` itself or the end of a
    /// flag argument (`-…`) holding it.
    fn value_in(&self, arg: &str) -> Option<(ArgRole, &str)> {
        self.values
            .iter()
            .filter(|(_, v)| arg == v || (arg.starts_with('-') && arg.ends_with(v.as_str())))
            .max_by_key(|(_, v)| v.len())
            .map(|(role, v)| (*role, v.as_str()))
    }
}

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

    /// A command line with every secret in it redacted (see the module docs), each argument
    /// as its parser read it; one whose role is unknown by its spelling.
    pub fn command(&self, argv: &Argv) -> Vec<String> {
        let by_spelling = self.argv(&argv.args);
        argv.args
            .iter()
            .zip(by_spelling)
            .enumerate()
            .map(|(i, (arg, spelled))| match argv.value_in(arg) {
                Some((role, value)) if i > 0 => self.redact_value(arg, role, value),
                _ => spelled,
            })
            .collect()
    }

    /// `arg` with `value` (the whole argument, or its end after the flag) redacted as `role`
    /// says.
    fn redact_value(&self, arg: &str, role: ArgRole, value: &str) -> String {
        let redacted = match role {
            ArgRole::Header => self.header_line(value),
            ArgRole::Set => self.set(value),
            ArgRole::Secret => REDACTED.to_string(),
            ArgRole::Url => redact_url_userinfo(value),
        };
        match arg.strip_suffix(value) {
            Some(flag) => format!("{flag}{redacted}"),
            // The parser changed the value (it cannot, for these flags): all of it goes.
            None => REDACTED.to_string(),
        }
    }

    /// A command line with every secret in it redacted, found by its spelling (see the module
    /// docs); for a command line of unknown roles (an older record's). `argv[0]` and
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
        redact_url_userinfo(arg)
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
                    redact_url_userinfo(arg)
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

/// `user:password` from a URL's user information, percent-decoded (a user alone: an empty
/// password); `None` when it has no user.
pub fn url_userinfo(url: &url::Url) -> Option<String> {
    if url.username().is_empty() {
        return None;
    }
    let decode = |s: &str| {
        url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
            .next()
            .map_or_else(|| s.to_string(), |(_, v)| v.into_owned())
    };
    Some(format!(
        "{}:{}",
        decode(url.username()),
        decode(url.password().unwrap_or_default())
    ))
}

/// The `Authorization` value that sends a URL's user information as curl and browsers do:
/// `Basic base64(user:password)`; `None` when it has no user.
pub fn url_basic_auth(url: &url::Url) -> Option<String> {
    use base64::Engine as _;
    url_userinfo(url).map(|pair| {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    })
}

/// `scheme://user:password@host…` and `scheme://TOKEN@host…` with the user information
/// redacted (`scheme://[redacted]@host…`): a user name alone is often the secret (a token), and
/// it is sent as the password is (`Authorization: Basic`); any other text unchanged.
pub fn redact_url_userinfo(text: &str) -> String {
    let Some(scheme_end) = text.find("://") else {
        return text.to_string();
    };
    let authority_start = scheme_end + 3;
    let rest = &text[authority_start..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    match authority.rfind('@') {
        Some(at) => format!(
            "{}{REDACTED}{}",
            &text[..authority_start],
            &text[authority_start + at..]
        ),
        None => text.to_string(),
    }
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
    fn values_the_parser_read_are_redacted_wherever_they_sit() {
        let s = Secrets::new(["X-None"]);
        let mut a = Argv::plain(argv(&[
            "volley",
            "http://tok@h/",
            "-kqH",
            "Authorization: A1",
            "-kHCookie: C1",
            "--token=T1",
            "--token",
            "T2",
            "-HX-Trace: t",
            "--body",
            "T1",
        ]));
        for (role, v) in [
            (ArgRole::Url, "http://tok@h/"),
            (ArgRole::Header, "Authorization: A1"),
            (ArgRole::Header, "Cookie: C1"),
            (ArgRole::Header, "X-Trace: t"),
            (ArgRole::Secret, "T1"),
            (ArgRole::Secret, "T2"),
        ] {
            a.mark(role, v.to_string());
        }
        assert_eq!(
            s.command(&a),
            argv(&[
                "volley",
                "http://[redacted]@h/",
                "-kqH",
                "Authorization: [redacted]",
                "-kHCookie: [redacted]",
                "--token=[redacted]",
                "--token",
                "[redacted]",
                "-HX-Trace: t",
                "--body",
                // The same text as a secret elsewhere: redacted too, rather than guessed apart.
                "[redacted]",
            ])
        );
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
                "http://[redacted]@127.0.0.1:1/",
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
                "target.base_url=http://[redacted]@[::1]:8/x@y",
            ])
        );
        assert_eq!(
            redact_url_userinfo("http://host/a@b:c"),
            "http://host/a@b:c"
        );
        // A user name alone is often the secret itself (a token).
        assert_eq!(
            redact_url_userinfo("http://TOKEN@host/"),
            "http://[redacted]@host/"
        );
    }
}
