//! How the generator paces the open model: the tick of its send grid.

use std::time::Duration;

use clap::Args;

/// The longest `--send-grid` accepted: a longer one would send a hundredth of a second's
/// arrivals in one burst.
const MAX_SEND_GRID: Duration = Duration::from_millis(10);

/// Generator tuning.
#[derive(Debug, Clone, Copy, Default, Args)]
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

/// A `--send-grid` that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum GridError {
    /// Not a duration (the plan reader's message).
    #[error("{0}")]
    Duration(String),
    /// Above [`MAX_SEND_GRID`].
    #[error("`{0}` is longer than the longest send grid, 10ms")]
    TooLong(String),
}

/// Parses a send grid's tick: a duration from 0 to [`MAX_SEND_GRID`].
pub fn parse_send_grid(text: &str) -> Result<Duration, GridError> {
    let tick = volley::plan::read::parse_duration(text)
        .map_err(|why| GridError::Duration(why.to_string()))?;
    if tick > MAX_SEND_GRID {
        return Err(GridError::TooLong(text.to_string()));
    }
    Ok(tick)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_parse_from_zero_to_ten_milliseconds() {
        assert_eq!(parse_send_grid("0").unwrap(), Duration::ZERO);
        assert_eq!(
            parse_send_grid("250us").unwrap(),
            Duration::from_micros(250)
        );
        assert_eq!(parse_send_grid("10ms").unwrap(), MAX_SEND_GRID);
        assert!(matches!(
            parse_send_grid("11ms"),
            Err(GridError::TooLong(_))
        ));
        assert!(matches!(
            parse_send_grid("fast"),
            Err(GridError::Duration(_))
        ));
    }
}
