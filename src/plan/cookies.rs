//! A scenario's cookie jar (`cookies` in a plan): whether each VU keeps the cookies its target
//! sets (RFC 6265: domain, path, expiry, `Secure`, as the `cookie_store` crate implements them)
//! and sends them back on its later requests, and for how long it keeps them.
//!
//! The jar itself lives with the VU in the engine; the plan says which mode each scenario runs
//! and, per step, which URL its requests match cookies against ([`CookieUrl`]).

use std::borrow::Cow;

use url::Url;

/// What a scenario's VUs do with cookies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CookieJar {
    /// No jar: `Set-Cookie` is ignored and no `Cookie` header is added (quick mode, and
    /// `cookies = false`).
    Off,
    /// A jar per VU, emptied at the start of each iteration (`cookies = true` or
    /// `"iteration"`, the default in plans; k6's behaviour): each iteration is a new visitor.
    #[default]
    PerIteration,
    /// A jar per VU, kept across its iterations (`cookies = "vu"`; Gatling's session of a
    /// looping user): a VU logs in once and stays logged in.
    PerVu,
}

impl CookieJar {
    /// The mode a plan's `cookies` value names: `true`/`false`, `"iteration"`, `"vu"`, `"off"`.
    pub fn parse(value: &toml::Value) -> Option<Self> {
        match value {
            toml::Value::Boolean(true) => Some(Self::PerIteration),
            toml::Value::Boolean(false) => Some(Self::Off),
            toml::Value::String(s) => match s.as_str() {
                "iteration" => Some(Self::PerIteration),
                "vu" => Some(Self::PerVu),
                "off" => Some(Self::Off),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether VUs keep cookies at all.
    pub fn is_on(self) -> bool {
        self != Self::Off
    }
}

/// The URL a step's requests match cookies against, and store the cookies of their responses
/// under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CookieUrl {
    /// A request without templates: its URL, known before the run.
    Fixed(Url),
    /// A templated request: the target's origin, joined with each request's rendered path.
    Origin(Url),
}

impl CookieUrl {
    /// The URL of a step's request to `path_and_query` on `base_url` (the target's), or `None`
    /// when the two make no URL.
    pub fn fixed(base_url: &str, path_and_query: &str) -> Option<Self> {
        Url::parse(base_url)
            .ok()?
            .join(path_and_query)
            .ok()
            .map(Self::Fixed)
    }

    /// The origin of `base_url`, for a templated request.
    pub fn origin(base_url: &str) -> Option<Self> {
        Url::parse(base_url).ok().map(Self::Origin)
    }

    /// This request's URL: the fixed one, or the origin joined with `rendered`, the request's
    /// path and query as rendered now (`None` when it makes no URL).
    pub fn resolve(&self, rendered: &[u8]) -> Option<Cow<'_, Url>> {
        match self {
            Self::Fixed(u) => Some(Cow::Borrowed(u)),
            Self::Origin(origin) => {
                let path = std::str::from_utf8(rendered).ok()?;
                origin.join(path).ok().map(Cow::Owned)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_read_from_booleans_and_names() {
        let s = |t: &str| toml::Value::String(t.into());
        assert_eq!(
            CookieJar::parse(&toml::Value::Boolean(true)),
            Some(CookieJar::PerIteration)
        );
        assert_eq!(
            CookieJar::parse(&toml::Value::Boolean(false)),
            Some(CookieJar::Off)
        );
        assert_eq!(CookieJar::parse(&s("vu")), Some(CookieJar::PerVu));
        assert_eq!(
            CookieJar::parse(&s("iteration")),
            Some(CookieJar::PerIteration)
        );
        assert_eq!(CookieJar::parse(&s("session")), None);
        assert_eq!(CookieJar::parse(&toml::Value::Integer(1)), None);
    }

    #[test]
    fn urls_are_the_request_s_own() {
        let fixed = CookieUrl::fixed("http://127.0.0.1:8080/api", "/api/login?x=1").unwrap();
        assert_eq!(
            fixed.resolve(b"ignored").unwrap().as_str(),
            "http://127.0.0.1:8080/api/login?x=1"
        );
        let origin = CookieUrl::origin("https://example.test:8443/base").unwrap();
        let url = origin.resolve(b"/base/items/7").unwrap();
        assert_eq!(url.as_str(), "https://example.test:8443/base/items/7");
        assert!(origin.resolve(&[0xff]).is_none(), "not UTF-8");
    }
}
