//! How a run spoke to its target, in words and tables: the protocol line of the configuration,
//! what the TLS handshakes negotiated, where requests' time went (connect, TLS handshake,
//! waiting) and the gRPC statuses.

use super::figures::pct;
use super::table::Table;
use crate::record::model::RunRecord;
use crate::units::{bytes, ms, thousands};

/// "h2, 16 streams per connection, TLS (negotiated: TLSv1.3, ALPN h2 × 4 connections)".
pub fn protocol(r: &RunRecord) -> String {
    let c = &r.config;
    let mut protocol = c.protocol.name().to_string();
    if c.streams > 1 {
        protocol.push_str(&format!(", {} streams per connection", c.streams));
    }
    if c.tls {
        protocol.push_str(", TLS");
    }
    let negotiated = tls_negotiated(r);
    if !negotiated.is_empty() {
        protocol.push_str(&format!(" (negotiated: {negotiated})"));
    }
    protocol
}

/// What the TLS handshakes settled on: "TLSv1.3, ALPN h2 × 4 connections"; empty without TLS.
pub fn tls_negotiated(r: &RunRecord) -> String {
    r.summary
        .tls_negotiated
        .iter()
        .map(|n| {
            format!(
                "{}, ALPN {} × {} connection{}",
                n.version,
                n.alpn.as_deref().unwrap_or("none"),
                thousands(n.connections),
                if n.connections == 1 { "" } else { "s" }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// HTTP/3: what the QUIC connections carried, in one line: "4 connections; sent 18,137
/// datagrams (885.3 KiB) in 18,137 calls, received 279,897 (387.0 MiB) in 279,901; 0 of 18,141
/// packets lost"; with 0-RTT, "(3 in 0-RTT: 3 accepted, 0 rejected)" after the connections;
/// empty without HTTP/3.
pub fn quic(r: &RunRecord) -> String {
    let Some(q) = &r.summary.quic else {
        return String::new();
    };
    let early = match q.zero_rtt_sent {
        0 => String::new(),
        sent => format!(
            " ({} in 0-RTT: {} accepted, {} rejected)",
            thousands(sent),
            thousands(q.zero_rtt_accepted),
            thousands(q.zero_rtt_rejected)
        ),
    };
    format!(
        "{} connection{}{early}; sent {} datagrams ({}) in {} calls, received {} ({}) in {}; {} of {} packets lost ({}), {} congestion events",
        thousands(q.connections),
        if q.connections == 1 { "" } else { "s" },
        thousands(q.datagrams_sent),
        bytes(q.udp_bytes_sent as f64),
        thousands(q.send_calls),
        thousands(q.datagrams_received),
        bytes(q.udp_bytes_received as f64),
        thousands(q.receive_calls),
        thousands(q.packets_lost),
        thousands(q.packets_sent),
        bytes(q.bytes_lost as f64),
        thousands(q.congestion_events),
    )
}

/// Where the time of requests went (connect, TLS handshake, waiting) and gRPC statuses.
pub fn protocol_tables(r: &RunRecord) -> Vec<Table> {
    let s = &r.summary;
    let mut out = Vec::new();
    let tm = &s.timing;
    let rows = [
        ("TCP connect", tm.connect_ms, tm.connects),
        ("TLS handshake", tm.tls_handshake_ms, tm.tls_handshakes),
        ("Waiting (to first byte)", tm.waiting_ms, 0),
    ];
    if rows.iter().any(|(_, p, _)| p.is_some()) {
        let mut t = Table::new(
            "Time split, ms",
            &["<Phase", "Count", "p50", "p90", "p99", "max"],
        );
        for (name, p, count) in rows {
            let Some(p) = p else { continue };
            let count = if count > 0 {
                thousands(count)
            } else {
                "every response".into()
            };
            t.push([
                name.to_string(),
                count,
                ms(p.p50),
                ms(p.p90),
                ms(p.p99),
                ms(p.max),
            ]);
        }
        out.push(t);
    }
    if !s.grpc_status.is_empty() {
        let mut t = Table::new("gRPC status codes", &["<Status", "Calls", "Share"]);
        for (name, n) in &s.grpc_status {
            t.push([name.clone(), thousands(*n), pct(share(s.requests, *n))]);
        }
        out.push(t);
    }
    out
}

/// `n` of `total`, %; 0 when `total` is 0.
fn share(total: u64, n: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * n as f64 / total as f64
    }
}
