//! Response header values picked for `--group-by header:NAME`, without allocating per response.
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

/// The header names to pick, lower case, in the order of their indices.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PickNames(Arc<[http::HeaderName]>);

impl PickNames {
    /// Names to pick (at most [`MAX_PICKED`]: the plan refuses more); index `i` is name `i`.
    pub fn new(names: Vec<http::HeaderName>) -> Self {
        Self(names.into_iter().take(MAX_PICKED).collect())
    }

    /// No name to pick.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The names, by index.
    pub fn names(&self) -> &[http::HeaderName] {
        &self.0
    }
}

/// The values picked from the last response of a connection.
#[derive(Debug, Clone, Default)]
pub struct Picked {
    bytes: Vec<u8>,
    at: [Option<(u32, u32)>; MAX_PICKED],
}

impl Picked {
    /// Forgets the last response's values (before each exchange: a failed one has none).
    #[inline]
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.at = [None; MAX_PICKED];
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
}
