//! Source addresses: the local IPs outgoing connections are bound to, round-robin.
//!
//! A TCP connection is identified by (source IP, source port, destination IP, destination port).
//! Against one target, a single source IP offers only the ephemeral port range (about 28 000
//! ports by default) — fewer still while closed connections sit in TIME_WAIT — so a load test that
//! opens connections quickly runs out ("address not available", EADDRNOTAVAIL). Every address of
//! 127.0.0.0/8 is local on Linux, so spreading connections over `127.0.0.2-127.0.0.40` multiplies
//! the ports available against a loopback target by 39.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Most addresses one list may expand to.
pub const MAX_SOURCE_ADDRS: usize = 65_536;

/// Why a source-address list did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceAddrError {
    /// The list was empty.
    #[error("no source address given (expected e.g. 127.0.0.2-127.0.0.40 or 10.0.0.1,10.0.0.2)")]
    Empty,
    /// An item is not an IP address.
    #[error("{item:?} is not an IP address")]
    NotAnAddress {
        /// The offending item.
        item: String,
    },
    /// A range mixes IPv4 and IPv6.
    #[error("range {item:?} mixes IPv4 and IPv6")]
    MixedFamilies {
        /// The offending range.
        item: String,
    },
    /// A range ends before it starts.
    #[error("range {item:?} ends before it starts")]
    Backwards {
        /// The offending range.
        item: String,
    },
    /// The list expands to too many addresses.
    #[error("the list expands to more than {MAX_SOURCE_ADDRS} addresses")]
    TooMany,
}

/// Parses `127.0.0.2-127.0.0.40`, `10.0.0.1,10.0.0.5`, `::1`, or a comma-separated mix of single
/// addresses and inclusive ranges, in order, duplicates kept.
pub fn parse_source_addrs(text: &str) -> Result<Vec<IpAddr>, SourceAddrError> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let ip = |s: &str| {
            s.trim()
                .parse::<IpAddr>()
                .map_err(|_| SourceAddrError::NotAnAddress { item: s.into() })
        };
        match item.split_once('-') {
            None => out.push(ip(item)?),
            Some((from, to)) => {
                let (from, to) = (ip(from)?, ip(to)?);
                let (lo, hi, v4) = match (from, to) {
                    (IpAddr::V4(a), IpAddr::V4(b)) => {
                        (u128::from(u32::from(a)), u128::from(u32::from(b)), true)
                    }
                    (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b), false),
                    _ => return Err(SourceAddrError::MixedFamilies { item: item.into() }),
                };
                if hi < lo {
                    return Err(SourceAddrError::Backwards { item: item.into() });
                }
                if hi - lo >= (MAX_SOURCE_ADDRS - out.len()) as u128 {
                    return Err(SourceAddrError::TooMany);
                }
                out.extend((lo..=hi).map(|n| {
                    if v4 {
                        IpAddr::V4(Ipv4Addr::from(n as u32))
                    } else {
                        IpAddr::V6(Ipv6Addr::from(n))
                    }
                }));
            }
        }
        if out.len() > MAX_SOURCE_ADDRS {
            return Err(SourceAddrError::TooMany);
        }
    }
    if out.is_empty() {
        return Err(SourceAddrError::Empty);
    }
    Ok(out)
}

/// Local addresses handed out round-robin to new connections; shared by every connection of a
/// run (one atomic increment per new connection, nothing per request).
#[derive(Debug)]
pub struct SourceAddrs {
    addrs: Vec<IpAddr>,
    next: AtomicUsize,
}

impl SourceAddrs {
    /// Round-robin over `addrs`; `None` when the list is empty (connections are then not bound).
    pub fn new(addrs: Vec<IpAddr>) -> Option<Self> {
        (!addrs.is_empty()).then(|| Self {
            addrs,
            next: AtomicUsize::new(0),
        })
    }

    /// The address for the next new connection.
    pub fn next_addr(&self) -> IpAddr {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        self.addrs[i % self.addrs.len()]
    }

    /// All the addresses, in order.
    pub fn addrs(&self) -> &[IpAddr] {
        &self.addrs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn parses_ranges_and_lists() {
        let a = parse_source_addrs("127.0.0.2-127.0.0.4").unwrap();
        assert_eq!(a, vec![v4("127.0.0.2"), v4("127.0.0.3"), v4("127.0.0.4")]);
        let a = parse_source_addrs(" 10.0.0.1 , 10.0.0.255-10.0.1.0,::1").unwrap();
        assert_eq!(
            a,
            vec![v4("10.0.0.1"), v4("10.0.0.255"), v4("10.0.1.0"), v4("::1")]
        );
        assert_eq!(parse_source_addrs("::1-::2").unwrap().len(), 2);
        assert_eq!(parse_source_addrs("127.0.0.9-127.0.0.9").unwrap().len(), 1);
    }

    #[test]
    fn rejects_with_clear_errors() {
        assert_eq!(parse_source_addrs(" , "), Err(SourceAddrError::Empty));
        let e = parse_source_addrs("127.0.0.1-foo").unwrap_err();
        assert_eq!(e.to_string(), "\"foo\" is not an IP address");
        assert!(matches!(
            parse_source_addrs("127.0.0.5-127.0.0.1"),
            Err(SourceAddrError::Backwards { .. })
        ));
        assert!(matches!(
            parse_source_addrs("127.0.0.1-::1"),
            Err(SourceAddrError::MixedFamilies { .. })
        ));
        assert_eq!(
            parse_source_addrs("10.0.0.0-10.255.255.255"),
            Err(SourceAddrError::TooMany)
        );
        assert_eq!(
            parse_source_addrs("::-ffff::"),
            Err(SourceAddrError::TooMany)
        );
    }

    #[test]
    fn round_robin() {
        let s = SourceAddrs::new(vec![v4("127.0.0.2"), v4("127.0.0.3")]).unwrap();
        let got: Vec<_> = (0..4).map(|_| s.next_addr()).collect();
        assert_eq!(
            got,
            [
                v4("127.0.0.2"),
                v4("127.0.0.3"),
                v4("127.0.0.2"),
                v4("127.0.0.3")
            ]
        );
        assert!(SourceAddrs::new(vec![]).is_none());
    }
}
