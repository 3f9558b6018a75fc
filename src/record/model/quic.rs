//! What a run's QUIC connections carried, as quinn counts it (HTTP/3; docs/measurement.md,
//! "HTTP/3").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// UDP and loss figures of a run's QUIC connections, summed over every connection the run's
/// workers opened (warm-up included, as `tls_negotiated`), each from its start until the run
/// ended or it was replaced. Absent without HTTP/3.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QuicFigures {
    /// QUIC connections counted.
    pub connections: u64,
    /// UDP datagrams sent.
    pub datagrams_sent: u64,
    /// Their payloads (QUIC packets, encrypted), bytes.
    pub udp_bytes_sent: u64,
    /// System calls that sent them: fewer than the datagrams when the kernel segments several
    /// per call (GSO).
    pub send_calls: u64,
    /// UDP datagrams received.
    pub datagrams_received: u64,
    /// Their payloads, bytes.
    pub udp_bytes_received: u64,
    /// System calls that received them: fewer than the datagrams when the kernel coalesces
    /// several per call (GRO).
    pub receive_calls: u64,
    /// QUIC packets sent.
    pub packets_sent: u64,
    /// Packets declared lost (their frames were sent again in new packets).
    pub packets_lost: u64,
    /// Bytes of the packets declared lost, bytes.
    pub bytes_lost: u64,
    /// Congestion events: times the congestion controller cut its window.
    pub congestion_events: u64,
    /// Connections that resumed a TLS session and sent their first requests as 0-RTT early
    /// data, before the handshake completed (`--zero-rtt`; 0 without it).
    #[serde(default)]
    pub zero_rtt_sent: u64,
    /// Of those, the connections whose early data the server accepted.
    #[serde(default)]
    pub zero_rtt_accepted: u64,
    /// Of those, the connections whose early data the server rejected: their requests were
    /// sent again on a new connection with a full handshake. Sent less accepted less rejected
    /// ended before the handshake said which.
    #[serde(default)]
    pub zero_rtt_rejected: u64,
}

impl QuicFigures {
    /// These counts less `earlier`'s (counts only grow: what came since `earlier` was read).
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            connections: self.connections.saturating_sub(earlier.connections),
            datagrams_sent: self.datagrams_sent.saturating_sub(earlier.datagrams_sent),
            udp_bytes_sent: self.udp_bytes_sent.saturating_sub(earlier.udp_bytes_sent),
            send_calls: self.send_calls.saturating_sub(earlier.send_calls),
            datagrams_received: self
                .datagrams_received
                .saturating_sub(earlier.datagrams_received),
            udp_bytes_received: self
                .udp_bytes_received
                .saturating_sub(earlier.udp_bytes_received),
            receive_calls: self.receive_calls.saturating_sub(earlier.receive_calls),
            packets_sent: self.packets_sent.saturating_sub(earlier.packets_sent),
            packets_lost: self.packets_lost.saturating_sub(earlier.packets_lost),
            bytes_lost: self.bytes_lost.saturating_sub(earlier.bytes_lost),
            congestion_events: self
                .congestion_events
                .saturating_sub(earlier.congestion_events),
            zero_rtt_sent: self.zero_rtt_sent.saturating_sub(earlier.zero_rtt_sent),
            zero_rtt_accepted: self
                .zero_rtt_accepted
                .saturating_sub(earlier.zero_rtt_accepted),
            zero_rtt_rejected: self
                .zero_rtt_rejected
                .saturating_sub(earlier.zero_rtt_rejected),
        }
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Self) {
        self.connections += other.connections;
        self.datagrams_sent += other.datagrams_sent;
        self.udp_bytes_sent += other.udp_bytes_sent;
        self.send_calls += other.send_calls;
        self.datagrams_received += other.datagrams_received;
        self.udp_bytes_received += other.udp_bytes_received;
        self.receive_calls += other.receive_calls;
        self.packets_sent += other.packets_sent;
        self.packets_lost += other.packets_lost;
        self.bytes_lost += other.bytes_lost;
        self.congestion_events += other.congestion_events;
        self.zero_rtt_sent += other.zero_rtt_sent;
        self.zero_rtt_accepted += other.zero_rtt_accepted;
        self.zero_rtt_rejected += other.zero_rtt_rejected;
    }
}
