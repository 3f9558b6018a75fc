//! The values of command-line flags that are not plain numbers or names: durations as plan
//! files write them, rates (`2000/s`, `600/m`), `KEY=VALUE` settings and time scales. Quick
//! mode's flags desugar into a plan through these, so a flag and a plan key read the same.

use std::time::Duration;

use super::set_key::{SetKey, UnknownSetKey};
use crate::record::model::{BoundFigure, LoadModel, PrecisionGoal};
use crate::schedule::ArrivalProcess;

/// Why a flag's value is unusable (clap prints it after the flag's name).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArgError {
    /// `--set` without `=`.
    #[error("`{0}` is not KEY=VALUE")]
    NotKeyValue(String),
    /// `--set =VALUE`.
    #[error("`{0}` has no key")]
    NoKey(String),
    /// `--set` with a key that names nothing a plan has.
    #[error(transparent)]
    SetKey(#[from] UnknownSetKey),
    /// A time scale that is not a positive, finite number.
    #[error("`{0}` is not a positive factor like 0.1")]
    NotAFactor(String),
    /// A rate that is not a number (per second or per minute).
    #[error("`{0}` is not a rate like 2000, 2000/s or 600/m")]
    NotARate(String),
    /// A rate of zero, below or infinite.
    #[error("`{0}`: the rate must be greater than 0")]
    RateNotPositive(String),
    /// A duration, as plan files write them (the plan reader's message).
    #[error("{0}")]
    Duration(String),
    /// Not a list of statuses and classes.
    #[error("`{0}` is not a list of statuses like 2xx,422 (codes 100–599, classes 1xx–5xx)")]
    NotStatuses(String),
    /// A tag whose key is not one a tag may have.
    #[error("{0}")]
    Tag(String),
    /// Latency bucket bounds that are not ascending, or too many.
    #[error("{0}")]
    Buckets(String),
    /// Not a precision goal like `p99=2%`.
    #[error("{0}")]
    Precision(String),
    /// A share that is not a percentage (like `1%`; the setting it is for bounds it).
    #[error("{0}")]
    Share(String),
    /// A send grid above [`MAX_SEND_GRID`].
    #[error("`{0}` is longer than the longest send grid, 10ms")]
    GridTooLong(String),
}

/// The longest `--send-grid` accepted: a longer one would send a hundredth of a second's
/// arrivals in one burst.
pub const MAX_SEND_GRID: Duration = Duration::from_millis(10);

/// Parses a send grid's tick: a duration from 0 to [`MAX_SEND_GRID`].
pub fn parse_send_grid(text: &str) -> Result<Duration, ArgError> {
    let tick = parse_duration(text)?;
    if tick > MAX_SEND_GRID {
        return Err(ArgError::GridTooLong(text.to_string()));
    }
    Ok(tick)
}

/// Parses `--set KEY=VALUE`, its key one a plan has ([`SetKey`]).
pub fn parse_set(text: &str) -> Result<(SetKey, String), ArgError> {
    let (key, value) = key_value(text)?;
    Ok((SetKey::parse(&key)?, value))
}

/// Splits `KEY=VALUE` at the first `=`; the key trimmed and not empty.
fn key_value(text: &str) -> Result<(String, String), ArgError> {
    let (k, v) = text
        .split_once('=')
        .ok_or_else(|| ArgError::NotKeyValue(text.to_string()))?;
    if k.trim().is_empty() {
        return Err(ArgError::NoKey(text.to_string()));
    }
    Ok((k.trim().to_string(), v.to_string()))
}

/// Parses a tag, `KEY=VALUE`, its key a label name of its own (see [`super::tags`]).
pub fn parse_tag(text: &str) -> Result<(String, String), ArgError> {
    let (key, value) = key_value(text)?;
    match super::tags::key_problem(&key) {
        Some(why) => Err(ArgError::Tag(why)),
        None => Ok((key, value)),
    }
}

/// Expected statuses (`--expect-status`), sorted, each once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statuses(pub Vec<u16>);

/// Parses expected statuses, `2xx,422`: codes (100–599) and classes (`2xx`: 200–299).
pub fn parse_statuses(text: &str) -> Result<Statuses, ArgError> {
    expand_statuses(text.split(','))
        .map(Statuses)
        .ok_or_else(|| ArgError::NotStatuses(text.to_string()))
}

/// Codes (100–599) and classes (`2xx`: 200–299) → the codes they name, sorted, each once;
/// `None` when an item is neither. Quick mode's `--expect-status` and a plan's `checks.status`
/// both read their lists here.
pub fn expand_statuses<'a>(items: impl IntoIterator<Item = &'a str>) -> Option<Vec<u16>> {
    let mut codes = Vec::new();
    for item in items.into_iter().map(str::trim) {
        match item.to_ascii_lowercase().strip_suffix("xx") {
            Some(class) => {
                let c: u16 = class.parse().ok()?;
                if !(1..=5).contains(&c) || class.len() != 1 {
                    return None;
                }
                codes.extend(c * 100..c * 100 + 100);
            }
            None => match item.parse::<u16>() {
                Ok(code) if (100..=599).contains(&code) => codes.push(code),
                _ => return None,
            },
        }
    }
    codes.sort_unstable();
    codes.dedup();
    (!codes.is_empty()).then_some(codes)
}

/// Parses a precision goal, `p99=2%`: a figure (rps, mean, p50, p90, p95, p99, p99.9), of the
/// run or of one part of a plan (`p99{step=pay}=2%`, see [`precision_goal`]), and the largest
/// half-width of its 95 % interval, as a share of the figure, above 0 % and up to 50 %.
pub fn parse_precision(text: &str) -> Result<PrecisionGoal, ArgError> {
    // The `=` after the part's braces, if any: `p99{step=pay}=2%`.
    let after = text.rfind('}').map_or(0, |i| i + 1);
    let (name, share) = text[after..]
        .find('=')
        .map(|i| (&text[..after + i], &text[after + i + 1..]))
        .filter(|(name, _)| !name.trim().is_empty())
        .ok_or_else(|| ArgError::Precision(format!("`{text}` is not FIGURE=SHARE like p99=2%")))?;
    precision_goal(name.trim(), share.trim()).map_err(ArgError::Precision)
}

/// A precision goal from a figure's name (`p99`, or `p99{step=pay}` for one scenario, step or
/// phase of a plan, whose existence the plan's reading checks) and a share like `2%`, or what
/// is wrong with them.
pub fn precision_goal(name: &str, share: &str) -> Result<PrecisionGoal, String> {
    let names = BoundFigure::ALL.map(BoundFigure::name).join(", ");
    let (figure_name, part) = crate::record::model::Part::split(name)?;
    let figure = BoundFigure::parse(figure_name)
        .ok_or_else(|| format!("`{figure_name}` is not a figure with an interval ({names})"))?;
    if share.contains(',') {
        return Err(format!(
            "`{share}`: one goal at a time, e.g. p99=2% (repeat the flag for more)"
        ));
    }
    Ok(PrecisionGoal {
        figure,
        share: share_of(share)?,
        part,
    })
}

/// A share like `2%` → 0.02: a percentage above 0 % and up to 50 %, or what is wrong with it.
pub fn share_of(share: &str) -> Result<f64, String> {
    match percentage(share)? {
        s if s > 0.0 && s <= 0.5 => Ok(s),
        _ => Err(format!(
            "`{share}` is not a share above 0% and up to 50%, like 2%"
        )),
    }
}

/// A percentage like `2%` → 0.02, of any finite size (the setting it is for bounds it), or
/// what is wrong with it.
pub fn percentage(share: &str) -> Result<f64, String> {
    if share.trim().parse::<f64>().is_ok() {
        return Err(format!(
            "`{share}` has no `%`: a share is a percentage, like 2%"
        ));
    }
    share
        .trim()
        .strip_suffix('%')
        .and_then(|n| n.trim().parse::<f64>().ok())
        .filter(|p| p.is_finite())
        .map(|p| p / 100.0)
        .ok_or_else(|| format!("`{share}` is not a share, like 2%"))
}

/// Parses `find-max --resolution`, a percentage like `1%` ([`percentage`]; the search's
/// settings bound it).
pub fn parse_share(text: &str) -> Result<f64, ArgError> {
    percentage(text).map_err(ArgError::Share)
}

/// Latency bucket bounds (`--buckets 25ms,50ms,100ms,500ms`), ascending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buckets(pub Vec<Duration>);

/// The most latency buckets a run may ask for.
pub const MAX_BUCKETS: usize = 32;

/// Parses latency bucket bounds, `25ms,50ms,100ms,500ms`: durations, ascending, above 0.
pub fn parse_buckets(text: &str) -> Result<Buckets, ArgError> {
    let bounds = text
        .split(',')
        .map(|t| parse_duration(t.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    match bucket_problem(&bounds) {
        Some(why) => Err(ArgError::Buckets(why)),
        None => Ok(Buckets(bounds)),
    }
}

/// What is wrong with latency bucket bounds, if anything: they must be 1 to [`MAX_BUCKETS`]
/// durations above 0 (µs are the histogram's unit), strictly ascending.
pub fn bucket_problem(bounds: &[Duration]) -> Option<String> {
    if bounds.is_empty() || bounds.len() > MAX_BUCKETS {
        return Some(format!("give 1 to {MAX_BUCKETS} bucket bounds"));
    }
    if bounds[0] < Duration::from_micros(1) {
        return Some("a bucket bound must be at least 1µs".into());
    }
    bounds.windows(2).find(|w| w[1] <= w[0]).map(|w| {
        format!(
            "bucket bounds go up: {} is not above {}",
            humantime::format_duration(w[1]),
            humantime::format_duration(w[0])
        )
    })
}

/// Parses a positive, finite time scale.
pub fn parse_time_scale(text: &str) -> Result<f64, ArgError> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(ArgError::NotAFactor(text.to_string())),
    }
}

/// Parses `10s`, `1m30s`, `500ms`, or a bare number of seconds, as plan files do (≥ 0, at most
/// 366 days).
pub fn parse_duration(text: &str) -> Result<Duration, ArgError> {
    super::read::parse_duration(text).map_err(|why| ArgError::Duration(why.to_string()))
}

/// `text` if it is a duration [`parse_duration`] reads: for a flag passed on as written.
pub fn duration_text(text: &str) -> Result<String, ArgError> {
    parse_duration(text).map(|_| text.to_string())
}

/// A flag given on the command line: its long form as spelt in the help (`--connections`) and
/// its short letter, when it has one (`c`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenFlag {
    /// `--` and its long name.
    pub long: String,
    /// Its one-letter form, if any.
    pub short: Option<char>,
}

impl std::fmt::Display for GivenFlag {
    /// Both forms where there are two (`-c/--connections`), so that it reads as typed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.short {
            Some(c) => write!(f, "-{c}/{}", self.long),
            None => f.write_str(&self.long),
        }
    }
}

/// The flags of subcommand `sub` given on the command line.
pub fn given(sub: Option<&clap::Command>, m: &clap::ArgMatches) -> Vec<GivenFlag> {
    let given = |a: &&clap::Arg| {
        m.value_source(a.get_id().as_str()) == Some(clap::parser::ValueSource::CommandLine)
    };
    let args = sub.into_iter().flat_map(|c| c.get_arguments());
    args.filter(given)
        .filter_map(|a| {
            let long = format!("--{}", a.get_long()?);
            Some(GivenFlag {
                long,
                short: a.get_short(),
            })
        })
        .collect()
}

/// `find-max --model`: what the search varies, the arrival rate (`open`) or the VUs (`closed`).
pub fn model_parser() -> impl clap::builder::TypedValueParser<Value = LoadModel> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    let models = [LoadModel::Open, LoadModel::Closed];
    PossibleValuesParser::new(models.map(LoadModel::name))
        .map(move |name| *models.iter().find(|m| m.name() == name).expect("listed"))
}

/// `--arrivals`: how the open model's arrivals are spaced, `uniform` or `poisson` (its seed is
/// set when the plan is read).
pub fn arrivals_parser() -> impl clap::builder::TypedValueParser<Value = ArrivalProcess> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    let all = [ArrivalProcess::Uniform, ArrivalProcess::Poisson { seed: 0 }];
    PossibleValuesParser::new(all.map(ArrivalProcess::name))
        .map(move |name| *all.iter().find(|a| a.name() == name).expect("listed"))
}

/// Parses a rate: `2000`, `2000/s`, `600/m`; must be finite and > 0.
pub fn parse_rate(text: &str) -> Result<f64, ArgError> {
    let t = text.trim();
    let (number, per_secs) = if let Some(n) = t.strip_suffix("/s") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("/m") {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| ArgError::NotARate(text.to_string()))?;
    let rate = value / per_secs;
    if !rate.is_finite() || rate <= 0.0 {
        return Err(ArgError::RateNotPositive(text.to_string()));
    }
    Ok(rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_precision_goal_may_name_a_part() {
        use crate::record::model::{BoundFigure, Part};
        let g = parse_precision("p99{step=pay}=2%").unwrap();
        assert_eq!(
            (g.figure, g.share, g.part.clone()),
            (BoundFigure::P99, 0.02, Some(Part::Step("pay".into())))
        );
        assert_eq!(g.label(), "p99{step=pay}");
        let g = parse_precision(" rps{scenario=browse} = 5% ").unwrap();
        assert_eq!(g.part, Some(Part::Scenario("browse".into())));
        assert_eq!(parse_precision("p50=1%").unwrap().part, None);
        // As compare and ab name it.
        let g = parse_precision("throughput=2%").unwrap();
        assert_eq!((g.figure, g.label()), (BoundFigure::Rps, "rps".to_string()));
        for (bad, why) in [
            ("p99{step=pay=2%", "without its `}`"),
            ("p99{stage=pay}=2%", "unknown filter `stage`"),
            ("p98{step=pay}=2%", "`p98` is not a figure"),
            ("p99{step=pay}", "not FIGURE=SHARE"),
            ("=2%", "not FIGURE=SHARE"),
        ] {
            let err = parse_precision(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn durations_and_rates() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2.5"), Ok(Duration::from_millis(2500)));
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("soon").is_err());
        assert_eq!(parse_rate("2000"), Ok(2000.0));
        assert_eq!(parse_rate("600/m"), Ok(10.0));
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("-5").is_err());
        assert!(parse_rate("fast").is_err());
        assert_eq!(
            parse_set("a=c=d"),
            Ok((SetKey::Var("a".into()), "c=d".into()))
        );
        assert_eq!(
            parse_set(" target.timeout =5s"),
            Ok((SetKey::Timeout, "5s".into()))
        );
        assert!(parse_set("=x").is_err());
        assert!(matches!(parse_set("a.b=c"), Err(ArgError::SetKey(_))));
        assert!(parse_time_scale("0").is_err());
    }

    #[test]
    fn statuses_and_classes() {
        let codes = parse_statuses("2xx, 422").unwrap().0;
        assert_eq!(codes.len(), 101);
        assert_eq!((codes[0], codes[99], codes[100]), (200, 299, 422));
        assert_eq!(parse_statuses("404,200,404"), Ok(Statuses(vec![200, 404])));
        for bad in ["", "2x", "10xx", "0xx", "99", "1000", "ok"] {
            assert!(parse_statuses(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn grids_parse_from_zero_to_ten_milliseconds() {
        assert_eq!(parse_send_grid("0"), Ok(Duration::ZERO));
        assert_eq!(parse_send_grid("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_send_grid("10ms"), Ok(MAX_SEND_GRID));
        assert!(matches!(
            parse_send_grid("11ms"),
            Err(ArgError::GridTooLong(_))
        ));
        assert!(matches!(
            parse_send_grid("fast"),
            Err(ArgError::Duration(_))
        ));
    }
}
