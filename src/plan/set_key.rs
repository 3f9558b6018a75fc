//! `--set KEY=VALUE`: what an override names, typed once where the flag is read, so the plan
//! and suite readers match on a [`SetKey`], never on its spelling.

use std::fmt;

/// What a `--set` overrides in a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetKey {
    /// `target.base_url`: where the requests go.
    BaseUrl,
    /// `target.timeout`: the per-request timeout (a duration, `5s`).
    Timeout,
    /// `target.protocol`: the protocol HTTP steps speak (`http1`, `http2`, …).
    Protocol,
    /// `target.tls.insecure`: accept any certificate (`true` or `false`).
    TlsInsecure,
    /// `target.tls.sni`: the server name sent and verified, instead of the URL's host.
    TlsSni,
    /// `vars.NAME`, or a bare `NAME`: a plan variable, over the plan's own `[vars]`.
    Var(String),
}

/// Why a `--set` key names nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}`: use vars.NAME (or NAME), {keys}", keys = SetKey::list(&SetKey::TARGET))]
pub struct UnknownSetKey(pub String);

impl SetKey {
    /// The target's keys, in the order the help names them.
    pub const TARGET: [SetKey; 5] = [
        Self::BaseUrl,
        Self::Timeout,
        Self::Protocol,
        Self::TlsInsecure,
        Self::TlsSni,
    ];

    /// Reads a key as `--set` writes it: one of [`Self::TARGET`] as [`fmt::Display`] spells
    /// it, `vars.NAME` or `NAME` (a name without a dot).
    pub fn parse(key: &str) -> Result<Self, UnknownSetKey> {
        if let Some(target) = Self::TARGET.into_iter().find(|k| k.to_string() == key) {
            return Ok(target);
        }
        let name = key.strip_prefix("vars.").unwrap_or(key);
        if name.is_empty() || name.contains('.') {
            return Err(UnknownSetKey(key.to_string()));
        }
        Ok(Self::Var(name.to_string()))
    }

    /// `keys` for a message: `a, b or c`.
    fn list(keys: &[SetKey]) -> String {
        let names: Vec<String> = keys.iter().map(ToString::to_string).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }
}

/// The key as `--set` writes it, a variable as `vars.NAME` (so `NAME` and `vars.NAME`, one
/// override, read the same in a distributed test's plan hash).
impl fmt::Display for SetKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BaseUrl => f.write_str("target.base_url"),
            Self::Timeout => f.write_str("target.timeout"),
            Self::Protocol => f.write_str("target.protocol"),
            Self::TlsInsecure => f.write_str("target.tls.insecure"),
            Self::TlsSni => f.write_str("target.tls.sni"),
            Self::Var(name) => write!(f, "vars.{name}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_and_print_one_way() {
        for (text, key, shown) in [
            ("target.base_url", SetKey::BaseUrl, "target.base_url"),
            ("target.timeout", SetKey::Timeout, "target.timeout"),
            ("target.protocol", SetKey::Protocol, "target.protocol"),
            (
                "target.tls.insecure",
                SetKey::TlsInsecure,
                "target.tls.insecure",
            ),
            ("target.tls.sni", SetKey::TlsSni, "target.tls.sni"),
            ("vars.pools", SetKey::Var("pools".into()), "vars.pools"),
            ("pools", SetKey::Var("pools".into()), "vars.pools"),
        ] {
            assert_eq!(SetKey::parse(text), Ok(key.clone()), "{text}");
            assert_eq!(key.to_string(), shown);
        }
        for bad in [
            "target.tls",
            "target.tls.cert",
            "target.headers.x",
            "vars.",
            "vars.a.b",
            "a.b",
            "",
        ] {
            let e = SetKey::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains(&format!("`{bad}`")) && e.contains("vars.NAME"),
                "{e}"
            );
        }
    }
}
