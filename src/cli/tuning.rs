//! Flags for measuring the generator itself, hidden from the help.

use std::time::Duration;

use clap::Args;

/// The longest `--pacer-tick` accepted: a longer one would add more send lag than any CPU saving
/// is worth (and the scheduling-lag warning fires above 1 ms already).
const MAX_PACER_TICK: Duration = Duration::from_millis(10);

/// Generator tuning (hidden).
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct TuningArgs {
    /// Open model: the pacer wakes at most once per this long and sends every request due by then,
    /// e.g. 250us, 1ms; 0 wakes once per request (default 250us; at most 10ms).
    #[arg(long, hide = true, value_name = "DURATION", value_parser = parse_pacer_tick)]
    pub pacer_tick: Option<Duration>,
}

/// A `--pacer-tick` that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TickError {
    /// Not a duration (the plan reader's message).
    #[error("{0}")]
    Duration(String),
    /// Above [`MAX_PACER_TICK`].
    #[error("`{0}` is longer than the longest pacer tick, 10ms")]
    TooLong(String),
}

/// Parses a pacer tick: a duration from 0 to [`MAX_PACER_TICK`].
pub fn parse_pacer_tick(text: &str) -> Result<Duration, TickError> {
    let tick = volley::plan::read::parse_duration(text)
        .map_err(|why| TickError::Duration(why.to_string()))?;
    if tick > MAX_PACER_TICK {
        return Err(TickError::TooLong(text.to_string()));
    }
    Ok(tick)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_parse_from_zero_to_ten_milliseconds() {
        assert_eq!(parse_pacer_tick("0").unwrap(), Duration::ZERO);
        assert_eq!(
            parse_pacer_tick("250us").unwrap(),
            Duration::from_micros(250)
        );
        assert_eq!(parse_pacer_tick("10ms").unwrap(), MAX_PACER_TICK);
        assert!(matches!(
            parse_pacer_tick("11ms"),
            Err(TickError::TooLong(_))
        ));
        assert!(matches!(
            parse_pacer_tick("fast"),
            Err(TickError::Duration(_))
        ));
    }
}
