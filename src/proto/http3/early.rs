//! What became of a connection's 0-RTT early data (`--zero-rtt`): undecided while the
//! handshake runs, then accepted or rejected by the server.

use tokio::sync::watch;

/// The server's answer to a connection's early data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answer {
    /// The server read the early data: requests sent in it were served.
    Accepted,
    /// The server dropped the early data unread (the connection went on as 1-RTT): nothing of
    /// the requests sent in it reached the application.
    Rejected,
    /// The connection ended before its handshake did.
    Failed,
}

/// One connection's answer, followed by a task and read by every handle that uses the
/// connection.
#[derive(Clone)]
pub(super) struct EarlyData(watch::Receiver<Option<Answer>>);

impl EarlyData {
    /// Follows `accepted`, the future of `conn` opened in 0-RTT, on a task of the current
    /// runtime (it ends with the handshake).
    pub(super) fn follow(conn: quinn::Connection, accepted: quinn::ZeroRttAccepted) -> Self {
        let (tx, rx) = watch::channel(None);
        tokio::spawn(async move {
            // quinn resolves `false` both for a rejection and for a connection lost before the
            // handshake completed; only a rejected connection lives on.
            let answer = match accepted.await {
                true => Answer::Accepted,
                false if conn.close_reason().is_none() => Answer::Rejected,
                false => Answer::Failed,
            };
            let _ = tx.send(Some(answer));
        });
        Self(rx)
    }

    /// The answer so far: `None` while the handshake runs.
    pub(super) fn answer(&self) -> Option<Answer> {
        *self.0.borrow()
    }

    /// Waits for the handshake (it is under way: a request failed on this connection); whether
    /// the server rejected the early data.
    pub(super) async fn rejected(&mut self) -> bool {
        match self.0.wait_for(Option::is_some).await {
            Ok(answer) => *answer == Some(Answer::Rejected),
            Err(_) => false,
        }
    }
}
