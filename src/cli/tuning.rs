//! How the generator paces the open model: the tick of its send grid.

use std::time::Duration;

use clap::Args;
use volley::plan::flags::parse_send_grid;

/// Generator tuning.
#[derive(Debug, Clone, Copy, Default, Args)]
#[command(next_help_heading = "Generator tuning")]
pub struct TuningArgs {
    /// Open model: each worker sends its arrivals on a grid of this tick, all of a tick's
    /// together at its point, and latency is measured from the point (default 1ms; 0: each at
    /// its own instant, one timer wake-up per request; at most 10ms).
    #[arg(
        long = "send-grid",
        alias = "pacer-tick",
        value_name = "DURATION",
        value_parser = parse_send_grid
    )]
    pub send_grid: Option<Duration>,
}
