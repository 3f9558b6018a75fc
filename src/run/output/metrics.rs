//! `--metrics-listen ADDR`: volley's live metrics as a Prometheus page, served while the run
//! lasts and, with `--metrics-linger`, a while after it.

use std::net::SocketAddr;
use std::time::Duration;

use super::{Kept, Output, OutputError};
use crate::error::Error;
use crate::export::live::Shared;
use crate::export::serve::MetricsServer;
use crate::record::RunRecord;

/// The metrics page (see the module doc).
pub struct MetricsPage {
    addr: SocketAddr,
    linger: Duration,
    server: Option<MetricsServer>,
}

impl MetricsPage {
    /// A page at `addr` (port 0: any free port), kept up `linger` after the last run so that a
    /// scraper reads the final figures.
    pub fn new(addr: SocketAddr, linger: Duration) -> Self {
        Self {
            addr,
            linger,
            server: None,
        }
    }
}

impl Output for MetricsPage {
    fn name(&self) -> &'static str {
        "the metrics page"
    }

    fn reads_live_figures(&self) -> bool {
        true
    }

    /// Listens (an error if it cannot) and says where.
    fn start(&mut self, live: &Shared) -> Result<Option<String>, OutputError> {
        let server = MetricsServer::bind(self.addr, live.clone())?;
        let said = format!("live metrics at http://{}/metrics", server.addr());
        self.server = Some(server);
        Ok(Some(said))
    }

    /// The page shows the final figures already: nothing to write.
    fn finish(&mut self, _: &RunRecord) -> Result<Option<Kept>, Error> {
        Ok(None)
    }

    fn close(self: Box<Self>) {
        if self.server.is_some() && !self.linger.is_zero() {
            // The feature itself: the page stays up so that a scraper reads the final figures.
            std::thread::sleep(self.linger);
        }
    }
}
