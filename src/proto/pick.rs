//! Response header values picked for `--group-by header:NAME`, and the `Set-Cookie` values a
//! cookie jar stores, without allocating per response.
//!
//! The header names are fixed before the run ([`PickNames`], on the [`Client`](super::client::Client)
//! and so on every connection it makes); each connection owns one [`Picked`] buffer that its
//! exchanges refill: the values are copied (at most [`MAX_PICKED_BYTES`] each) into a buffer that
//! keeps its capacity, so after the first responses nothing is allocated. A connection without
//! names picks nothing and pays one emptiness test per response.

use std::sync::Arc;

/// Most header names picked per run.
pub const MAX_PICKED: usize = 8;
/// Bytes of a picked value kept; the rest is cut (the group table compares no more anyway).
pub const MAX_PICKED_BYTES: usize = 128;
/// Bytes of a `Set-Cookie` value kept (RFC 6265 §6.1 asks user agents for at least 4,096 bytes
/// per cookie, name, value and attributes included); a longer one is dropped, not cut.
pub const MAX_SET_COOKIE_BYTES: usize = 8192;
/// `Set-Cookie` headers kept per response; later ones are ignored.
pub const MAX_SET_COOKIES: usize = 50;

/// The header names to pick, lower case, in the order of their indices, and whether every
/// `Set-Cookie` value is kept (for a cookie jar).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PickNames {
    names: Arc<[http::HeaderName]>,
    cookies: bool,
}

impl PickNames {
    /// Names to pick (at most [`MAX_PICKED`]: the plan refuses more); index `i` is name `i`.
    pub fn new(names: Vec<http::HeaderName>) -> Self {
        Self {
            names: names.into_iter().take(MAX_PICKED).collect(),
            cookies: false,
        }
    }

    /// The same names, and every `Set-Cookie` value too (see [`Picked::set_cookies`]).
    pub fn with_cookies(mut self) -> Self {
        self.cookies = true;
        self
    }

    /// Whether `Set-Cookie` values are kept.
    pub fn keeps_cookies(&self) -> bool {
        self.cookies
    }

    /// Nothing to pick.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && !self.cookies
    }

    /// The names, by index.
    pub fn names(&self) -> &[http::HeaderName] {
        &self.names
    }
}

/// The values picked from the last response of a connection.
#[derive(Debug, Clone, Default)]
pub struct Picked {
    bytes: Vec<u8>,
    at: [Option<(u32, u32)>; MAX_PICKED],
    /// Where each `Set-Cookie` value lies in `bytes`, in the order received.
    cookies: Vec<(u32, u32)>,
}

impl Picked {
    /// Forgets the last response's values (before each exchange: a failed one has none).
    #[inline]
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.at = [None; MAX_PICKED];
        self.cookies.clear();
    }

    /// Keeps one `Set-Cookie` value (dropped past [`MAX_SET_COOKIES`] or when longer than
    /// [`MAX_SET_COOKIE_BYTES`]).
    #[inline]
    pub fn add_set_cookie(&mut self, value: &[u8]) {
        if value.len() > MAX_SET_COOKIE_BYTES || self.cookies.len() >= MAX_SET_COOKIES {
            return;
        }
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(value);
        self.cookies.push((start, self.bytes.len() as u32));
    }

    /// The `Set-Cookie` values of the last response, in the order received (none unless
    /// [`PickNames::with_cookies`]).
    pub fn set_cookies(&self) -> impl Iterator<Item = &[u8]> {
        self.cookies
            .iter()
            .map(|&(start, end)| &self.bytes[start as usize..end as usize])
    }

    /// Keeps `value` as the value of name `index` (the first occurrence wins).
    #[inline]
    pub fn set(&mut self, index: usize, value: &[u8]) {
        let Some(slot) = self.at.get_mut(index) else {
            return;
        };
        if slot.is_some() {
            return;
        }
        let value = &value[..value.len().min(MAX_PICKED_BYTES)];
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(value);
        *slot = Some((start, self.bytes.len() as u32));
    }

    /// The value of name `index` in the last response; `None` when it was absent (or the
    /// exchange failed before a response head).
    #[inline]
    pub fn get(&self, index: usize) -> Option<&[u8]> {
        let (start, end) = (*self.at.get(index)?)?;
        Some(&self.bytes[start as usize..end as usize])
    }

    /// Picks every name of `names` from HTTP/1.1 header lines (`name`, `value`) as parsed.
    #[inline]
    pub fn pick_from<'h>(
        &mut self,
        names: &PickNames,
        headers: impl Iterator<Item = (&'h [u8], &'h [u8])>,
    ) {
        for (name, value) in headers {
            for (i, wanted) in names.names().iter().enumerate() {
                if name.eq_ignore_ascii_case(wanted.as_str().as_bytes()) {
                    self.set(i, value);
                }
            }
            if names.cookies && name.eq_ignore_ascii_case(b"set-cookie") {
                self.add_set_cookie(value);
            }
        }
    }

    /// Picks every name of `names` from an HTTP/2 header map.
    #[inline]
    pub fn pick_map(&mut self, names: &PickNames, headers: &http::HeaderMap) {
        for (i, name) in names.names().iter().enumerate() {
            if let Some(v) = headers.get(name) {
                self.set(i, v.as_bytes());
            }
        }
        if names.cookies {
            for v in headers.get_all(http::header::SET_COOKIE) {
                self.add_set_cookie(v.as_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_picked_by_index_case_insensitively_and_cleared() {
        let names = PickNames::new(vec![
            http::HeaderName::from_static("x-backend"),
            http::HeaderName::from_static("x-zone"),
        ]);
        let mut p = Picked::default();
        let lines: [(&[u8], &[u8]); 3] = [
            (b"Content-Length", b"2"),
            (b"X-Backend", b"b2"),
            (b"x-backend", b"again"),
        ];
        p.pick_from(&names, lines.into_iter());
        assert_eq!(p.get(0), Some(&b"b2"[..]), "the first occurrence wins");
        assert_eq!(p.get(1), None);
        let long = vec![b'x'; 300];
        p.clear();
        assert_eq!(p.get(0), None);
        p.set(1, &long);
        assert_eq!(p.get(1).map(<[u8]>::len), Some(MAX_PICKED_BYTES));
        let cap = p.bytes.capacity();
        for _ in 0..100 {
            p.clear();
            p.set(1, &long);
        }
        assert_eq!(p.bytes.capacity(), cap, "the buffer is reused");
    }

    #[test]
    fn every_set_cookie_is_kept_only_when_asked() {
        let lines: [(&[u8], &[u8]); 3] = [
            (b"Set-Cookie", b"a=1; Path=/"),
            (b"X-Other", b"x"),
            (b"set-cookie", b"b=2"),
        ];
        let mut p = Picked::default();
        let plain = PickNames::new(Vec::new());
        assert!(plain.is_empty());
        p.pick_from(&plain, lines.into_iter());
        assert_eq!(p.set_cookies().count(), 0);
        let jar = PickNames::new(Vec::new()).with_cookies();
        assert!(!jar.is_empty());
        p.pick_from(&jar, lines.into_iter());
        let kept: Vec<&[u8]> = p.set_cookies().collect();
        assert_eq!(kept, [&b"a=1; Path=/"[..], &b"b=2"[..]]);
        let mut map = http::HeaderMap::new();
        map.append(http::header::SET_COOKIE, "c=3".parse().unwrap());
        map.append(http::header::SET_COOKIE, "d=4".parse().unwrap());
        p.clear();
        p.pick_map(&jar, &map);
        assert_eq!(
            p.set_cookies().count(),
            2,
            "HTTP/2: every value of the name"
        );
        p.clear();
        p.add_set_cookie(&vec![b'x'; MAX_SET_COOKIE_BYTES + 1]);
        assert_eq!(
            p.set_cookies().count(),
            0,
            "an over-long cookie is dropped, not cut"
        );
    }
}
