//! A VU's cookie jar (see [`crate::plan::cookies`]): the `Set-Cookie` values its connection
//! picked from each response are stored under the request's URL, and a request whose URL
//! matches stored cookies gets a `Cookie` header with them.
//!
//! A jar that has never stored anything costs a request one test: most targets set no cookies,
//! and their runs pay nothing else. Once it holds cookies, each request looks them up (the
//! `cookie_store` crate: a walk of the jar by domain and path, and the header's `String`).

use cookie_store::{CookieStore, RawCookie};
use url::Url;

use crate::plan::cookies::CookieJar;

/// One VU's cookies.
pub(super) struct Jar {
    store: CookieStore,
    mode: CookieJar,
    /// Something was stored since the jar was last emptied.
    filled: bool,
}

impl Jar {
    /// The jar of a VU of a scenario whose mode is `mode`; `None` when it keeps no cookies.
    pub(super) fn new(mode: CookieJar) -> Option<Self> {
        mode.is_on().then(|| Self {
            store: CookieStore::default(),
            mode,
            filled: false,
        })
    }

    /// Whether a lookup can find anything.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        !self.filled
    }

    /// An iteration starts: a per-iteration jar is emptied.
    #[inline]
    pub(super) fn new_iteration(&mut self) {
        if self.mode == CookieJar::PerIteration && self.filled {
            self.store.clear();
            self.filled = false;
        }
    }

    /// The `Cookie` header's value for a request to `url` (`name=value` pairs joined by `; `,
    /// RFC 6265 §5.4), or `None` when no stored cookie matches it.
    pub(super) fn header(&self, url: &Url) -> Option<String> {
        let mut out = String::new();
        for (name, value) in self.store.get_request_values(url) {
            if !out.is_empty() {
                out.push_str("; ");
            }
            out.push_str(name);
            out.push('=');
            out.push_str(value);
        }
        (!out.is_empty()).then_some(out)
    }

    /// Stores the `Set-Cookie` values of a response to a request to `url` (a value that is not
    /// UTF-8 or not a cookie is ignored, as a browser ignores it).
    pub(super) fn store<'a>(&mut self, set_cookies: impl Iterator<Item = &'a [u8]>, url: &Url) {
        for raw in set_cookies {
            let Ok(text) = std::str::from_utf8(raw) else {
                continue;
            };
            let Ok(cookie) = RawCookie::parse(text) else {
                continue;
            };
            if self.store.insert_raw(&cookie, url).is_ok() {
                self.filled = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn cookies_follow_path_secure_and_expiry() {
        let mut jar = Jar::new(CookieJar::PerVu).unwrap();
        assert!(jar.is_empty());
        // Not a loopback host: there, as in browsers, Secure cookies go over http:// too.
        let from = url("http://shop.test:8080/account/login");
        let set: [&[u8]; 3] = [
            b"session=abc; Path=/; HttpOnly",
            b"scoped=1; Path=/account",
            b"gone=x; Max-Age=0",
        ];
        jar.store(set.into_iter(), &from);
        let secure: [&[u8]; 1] = [b"secret=s; Secure"];
        jar.store(secure.into_iter(), &url("https://shop.test/"));
        assert!(!jar.is_empty());
        let header = jar
            .header(&url("http://shop.test:8080/account/me"))
            .unwrap();
        let mut pairs: Vec<&str> = header.split("; ").collect();
        pairs.sort_unstable();
        assert_eq!(
            pairs,
            ["scoped=1", "session=abc"],
            "Secure needs https, Max-Age=0 is gone"
        );
        assert_eq!(
            jar.header(&url("http://shop.test:8080/other")).as_deref(),
            Some("session=abc"),
            "a path cookie stays on its path"
        );
        assert!(
            jar.header(&url("http://other.test:8080/")).is_none(),
            "another host gets none"
        );
        let removal: [&[u8]; 1] = [b"session=; Path=/; Max-Age=0"];
        jar.store(removal.into_iter(), &from);
        assert!(jar.header(&url("http://shop.test:8080/other")).is_none());
        assert!(
            jar.header(&url("https://shop.test:8080/"))
                .is_some_and(|h| h.contains("secret=s")),
            "Secure goes over https"
        );
    }

    #[test]
    fn a_per_iteration_jar_is_emptied_and_a_vu_jar_kept() {
        let from = url("http://127.0.0.1:1/");
        let set: [&[u8]; 1] = [b"a=1"];
        for (mode, kept) in [(CookieJar::PerIteration, false), (CookieJar::PerVu, true)] {
            let mut jar = Jar::new(mode).unwrap();
            jar.store(set.into_iter(), &from);
            jar.new_iteration();
            assert_eq!(jar.header(&from).is_some(), kept, "{mode:?}");
        }
        assert!(Jar::new(CookieJar::Off).is_none());
    }
}
