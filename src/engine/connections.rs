//! The connections a worker's VUs use: one each over HTTP/1.1, shared by `streams` VUs over
//! HTTP/2.

use crate::plan::Connect;
use crate::proto::client::{Client, Connection};

/// The connections a scenario's VUs on one worker get: for HTTP steps, and for gRPC steps when
/// those need a client of their own.
pub(super) struct VuConnections {
    http: Connections,
    grpc: Option<Connections>,
}

impl VuConnections {
    /// A scenario's connections on one worker, none opened yet.
    pub(super) fn new(connect: &Connect) -> Self {
        Self {
            http: Connections::new(&connect.client, connect.streams),
            grpc: connect
                .grpc_client
                .as_ref()
                .map(|c| Connections::new(c, connect.streams)),
        }
    }

    /// The next VU's pair.
    pub(super) fn next(&mut self) -> (Connection, Option<Connection>) {
        (self.http.next(), self.grpc.as_mut().map(Connections::next))
    }
}

/// The VUs' connections of one scenario on one worker: with HTTP/2, `streams` VUs share each.
struct Connections {
    client: Client,
    streams: u32,
    handed: u32,
    last: Option<Connection>,
}

impl Connections {
    fn new(client: &Client, streams: u32) -> Self {
        Self {
            client: client.clone(),
            streams: streams.max(1),
            handed: 0,
            last: None,
        }
    }

    /// The next VU's connection: a share of the current one until it carries `streams` VUs.
    fn next(&mut self) -> Connection {
        let shared = if self.handed % self.streams == 0 {
            None
        } else {
            self.last.as_ref().and_then(Connection::share)
        };
        self.handed += 1;
        let conn = shared.unwrap_or_else(|| self.client.connection());
        self.last = conn.share();
        conn
    }
}
