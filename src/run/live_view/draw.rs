//! Drawing the live view from its [`State`]: pure layout and text, no I/O.

use std::time::Duration;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Gauge, Paragraph, Row, Sparkline, Table};

use super::state::{SPARK_SECONDS, State};
use super::{grouped, watched};
use crate::plan::Scenario;
use crate::record::error_kind::ErrorKind;
use crate::record::model::LoadModel;
use crate::record::model::{BoundFigure, GroupKind};
use crate::redact::redact_url_userinfo;
use crate::report::figures::steal_percent;
use crate::report::uncertainty::{goal_got, plus_minus};
use crate::units::{ms, rate, seconds, thousands};

/// What one frame shows.
pub(super) struct View<'a> {
    pub state: &'a State,
    /// A stop was asked for: the run is finishing.
    pub stopping: bool,
    pub color: bool,
}

impl View<'_> {
    fn style(&self, color: Color) -> Style {
        if self.color {
            Style::default().fg(color)
        } else {
            Style::default()
        }
    }

    fn title(&self) -> String {
        let plan = &self.state.plan;
        match &plan.quick {
            Some(q) => format!(" volley · {} {} ", q.method, redact_url_userinfo(&q.url)),
            None => format!(
                " volley · plan {} against {} ",
                plan.name,
                redact_url_userinfo(&plan.target.base_url)
            ),
        }
    }
}

/// Lines the generator and thresholds panels keep at least when the `--group-by` and `--watch`
/// panels want room.
const BOTTOM_MIN: u16 = 6;

/// Draws one frame.
pub(super) fn draw(f: &mut Frame, v: &View) {
    let s = v.state;
    let groups = s.plan.groups.len() as u16;
    let head = 3 + s.plan.scenarios.len() as u16 + u16::from(!s.plan.precision.is_empty());
    let groups = if groups == 0 { 0 } else { groups.min(8) + 3 };
    let middle = 7 + STREAM_ROWS * u16::from(s.plan.has_streams());
    let (by_value, watch) = panel_heights(v, head + 6 + middle + groups + 1, f.area().height);
    let rows = Layout::vertical([
        Constraint::Length(head),
        Constraint::Length(6),
        Constraint::Length(middle),
        Constraint::Length(groups),
        Constraint::Length(by_value),
        Constraint::Length(watch),
        Constraint::Min(5),
        Constraint::Length(1),
    ])
    .split(f.area());
    header(f, rows[0], v);
    sparklines(f, rows[1], v);
    let middle = Layout::horizontal([
        Constraint::Percentage(40),
        Constraint::Percentage(30),
        Constraint::Percentage(30),
    ])
    .split(rows[2]);
    latency(f, middle[0], v);
    statuses(f, middle[1], v);
    errors(f, middle[2], v);
    if groups > 0 {
        group_rows(f, rows[3], v);
    }
    if by_value > 0 {
        let latest = s.last_second().map(|l| (l.t_s, l.span_s));
        grouped::draw(f, rows[4], &s.grouped, latest);
    }
    if watch > 0 {
        watched::draw(f, rows[5], &s.plan, s.watched.as_ref());
    }
    let bottom =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).split(rows[6]);
    generator(f, bottom[0], v);
    thresholds(f, bottom[1], v);
    footer(f, rows[7], v);
}

/// Heights of the `--group-by` and `--watch` panels (0: the run has none): what each wants, as
/// far as the `fixed` lines of the other panels and [`BOTTOM_MIN`] leave room in `total`.
fn panel_heights(v: &View, fixed: u16, total: u16) -> (u16, u16) {
    let s = v.state;
    let mut free = total.saturating_sub(fixed + BOTTOM_MIN);
    let watch = watched::height(&s.plan, s.watched.as_ref()).min(free);
    free -= watch;
    let by_value = if s.grouped.keys.is_empty() {
        0
    } else {
        (s.grouped.rows_wanted() + 3).min(free)
    };
    (by_value, watch)
}

fn header(f: &mut Frame, area: Rect, v: &View) {
    let s = v.state;
    let block = Block::bordered().title(v.title());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let lines = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).split(inner);
    let elapsed = s.elapsed();
    let (ratio, total) = match s.planned() {
        Some(p) if !p.is_zero() => (
            (elapsed.as_secs_f64() / p.as_secs_f64()).min(1.0),
            seconds(p.as_secs_f64()),
        ),
        _ => (0.0, "until done".into()),
    };
    let (requests, errors) = (s.counts.requests + s.counts.not_sent, s.counts.errors);
    let mut label = format!(
        "{} / {total} · {} requests · {} errors",
        seconds(elapsed.as_secs_f64()),
        thousands(requests),
        thousands(errors)
    );
    if !s.streams.is_empty() {
        let st = s.streams;
        label += &format!(
            " · {} streams · messages {} received, {} sent",
            thousands(st.streams),
            thousands(st.received),
            thousands(st.sent)
        );
    }
    let gauge = Gauge::default()
        .ratio(ratio)
        .label(label)
        .gauge_style(v.style(Color::Blue));
    f.render_widget(gauge, lines[0]);
    let warmup = s.clock.measure_start.duration_since(s.clock.start);
    let mut load: Vec<Line> = s
        .plan
        .scenarios
        .iter()
        .map(|sc| {
            let counts = sc
                .group
                .and_then(|g| s.groups.get(g))
                .map_or(&s.counts, |g| &g.total);
            let shape = match finished(sc, counts) {
                Some(n) if sc.group.is_some() => format!("{}: finished ({n} iterations)", sc.name),
                Some(n) => format!("finished ({n} iterations)"),
                None => shape_now(sc, elapsed, warmup, s.plan.quick.is_none()),
            };
            Line::from(shape)
        })
        .collect();
    load.extend(precision_so_far(s).map(Line::from));
    f.render_widget(Paragraph::new(load), lines[1]);
}

/// How precise the figures a run must make precise are so far, each from its own interval (the
/// run's, or its part's): `precision: p99{step=pay} ±3.1 % (asked ±2 %)`; none without goals.
fn precision_so_far(s: &State) -> Option<String> {
    let goals = &s.plan.precision;
    let got: Vec<String> = goals
        .iter()
        .map(|g| {
            let ci = match &g.part {
                Some(part) => s.plan.group_of(part).and_then(|i| s.group_ci95.get(i)),
                None => s.ci95.as_ref(),
            };
            let share = ci
                .and_then(|c| c.get(g.figure))
                .and_then(crate::record::model::Bound::relative);
            goal_got(
                g,
                &share.map_or_else(|| "no interval yet".into(), plus_minus),
            )
        })
        .collect();
    (!got.is_empty()).then(|| format!("precision: {}", got.join(", ")))
}

/// A scenario that ends by a count and has done it: its iterations, all ended (an open
/// scenario's dropped ones included); `None` while it runs, and for scenarios that end by time.
fn finished(sc: &Scenario, c: &crate::record::recorder::Counters) -> Option<u64> {
    let p = &sc.profile;
    let asked = p
        .iteration_count()
        .or_else(|| p.per_vu_iterations().map(|n| n * u64::from(sc.max_vus())))?;
    (c.completed + c.dropped >= asked).then_some(asked)
}

/// The load a scenario is asked for now, and its phase.
fn shape_now(sc: &Scenario, elapsed: Duration, warmup: Duration, named: bool) -> String {
    let name = if named {
        format!("{}: ", sc.name)
    } else {
        String::new()
    };
    let Some(t) = elapsed.checked_sub(sc.start_after) else {
        let wait = sc.start_after.saturating_sub(elapsed).as_secs_f64();
        return format!("{name}starts in {}", seconds(wait));
    };
    let level = match sc.profile.model() {
        LoadModel::Closed => format!(
            "{} (closed model)",
            crate::units::vus(sc.profile.level_at(t).ceil())
        ),
        LoadModel::Open => format!(
            "{} req/s asked (open model, at most {} in flight)",
            rate(sc.profile.level_at(t)),
            sc.max_vus()
        ),
    };
    let end = sc.duration();
    if end.is_some_and(|e| t >= e) {
        return format!("{name}ended");
    }
    let phase = if elapsed < warmup {
        "warm-up".to_string()
    } else if let Some(p) = sc.phases.iter().find(|p| p.start <= t && t < p.end) {
        p.name.clone()
    } else {
        "measuring".to_string()
    };
    format!("{name}{level} · {phase}")
}

fn sparklines(f: &mut Frame, area: Rect, v: &View) {
    let halves =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).split(area);
    let per_s = |n: u64, span: f64| (n as f64 / span.max(1e-3)).round() as u64;
    let seconds = &v.state.seconds;
    let reqs: Vec<u64> = seconds
        .iter()
        .map(|s| per_s(s.requests, s.span_s))
        .collect();
    let errs: Vec<u64> = seconds.iter().map(|s| per_s(s.errors, s.span_s)).collect();
    let last = v.state.last_second();
    let now_reqs = last.map_or(0, |s| per_s(s.requests, s.span_s));
    let now_errs = last.map_or(0, |s| per_s(s.errors, s.span_s));
    // Each on its own scale: a few errors a second still show beside thousands of requests.
    for (area, data, what, now, color) in [
        (halves[0], &reqs, "requests/s", now_reqs, Color::Green),
        (halves[1], &errs, "errors/s", now_errs, Color::Red),
    ] {
        let title = format!(" {what}: {} now · last {SPARK_SECONDS} s ", thousands(now));
        // The newest second on the right: only as many as fit.
        let width = area.width.saturating_sub(2) as usize;
        let shown = &data[data.len().saturating_sub(width)..];
        let spark = Sparkline::default()
            .block(Block::bordered().title(title))
            .data(shown)
            .max(data.iter().copied().max().unwrap_or(1).max(1))
            .style(v.style(color));
        f.render_widget(spark, area);
    }
}

/// Rows of stream latencies under the request latencies, in a run with streaming steps.
const STREAM_ROWS: u16 = 3;

/// The whole run's stream latencies so far: time to the first message, the gaps between
/// messages and the round trips, p50/p90/p99 ("-" before any).
fn stream_rows(s: &State) -> Vec<Row<'static>> {
    if !s.plan.has_streams() {
        return Vec::new();
    }
    let l = s.stream_latency.as_deref();
    let figures = |name: &str, h: Option<&hdrhistogram::Histogram<u64>>| {
        let at = |q: f64| {
            h.filter(|h| !h.is_empty())
                .map(|h| h.value_at_quantile(q) as f64 / 1e3)
        };
        Row::new([name.to_string(), ms(at(0.5)), ms(at(0.9)), ms(at(0.99))])
    };
    vec![
        figures("first message", l.map(|l| &l.first)),
        figures("message gap", l.map(|l| &l.gap)),
        figures("round trip", l.map(|l| &l.round_trip)),
    ]
}

fn latency(f: &mut Frame, area: Rect, v: &View) {
    let s = v.state;
    let last = s.last_second();
    let run = |q: f64| (!s.latency.is_empty()).then(|| s.latency.value_at_quantile(q) as f64 / 1e3);
    let head =
        Row::new(["", "p50", "p90", "p99"]).style(Style::default().add_modifier(Modifier::BOLD));
    let mut rows = vec![
        Row::new([
            "last second".to_string(),
            ms(last.and_then(|l| l.p50_ms)),
            ms(last.and_then(|l| l.p90_ms)),
            ms(last.and_then(|l| l.p99_ms)),
        ]),
        Row::new([
            "whole run".to_string(),
            ms(run(0.5)),
            ms(run(0.9)),
            ms(run(0.99)),
        ]),
        Row::new(
            [BoundFigure::P50, BoundFigure::P90, BoundFigure::P99]
                .into_iter()
                .fold(vec!["± 95 %".to_string()], |mut row, f| {
                    let half = s.ci95.as_ref().and_then(|c| c.get(f)).map(|b| b.half_width);
                    row.push(half.map_or_else(|| "-".into(), |h| format!("±{}", ms(Some(h)))));
                    row
                }),
        ),
    ];
    rows.extend(stream_rows(s));
    let widths = [
        Constraint::Length(13),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
    ];
    let table = Table::new(rows, widths)
        .header(head)
        .block(Block::bordered().title(" latency (ms) "));
    f.render_widget(table, area);
}

fn statuses(f: &mut Frame, area: Rect, v: &View) {
    let rows: Vec<Row> = v
        .state
        .statuses
        .iter()
        .map(|(code, n)| {
            let color = if *code >= 400 {
                Color::Red
            } else {
                Color::Green
            };
            Row::new([code.to_string(), thousands(*n)]).style(v.style(color))
        })
        .collect();
    let empty = rows.is_empty();
    let widths = [Constraint::Length(6), Constraint::Min(8)];
    let table = Table::new(rows, widths).block(Block::bordered().title(" status codes "));
    f.render_widget(table, area);
    if empty {
        none_yet(f, area);
    }
}

fn errors(f: &mut Frame, area: Rect, v: &View) {
    let rows: Vec<Row> = ErrorKind::ALL
        .into_iter()
        .filter(|k| v.state.errors[k.index()] > 0)
        .map(|k| {
            Row::new([k.name().to_string(), thousands(v.state.errors[k.index()])])
                .style(v.style(Color::Red))
        })
        .collect();
    let empty = rows.is_empty();
    let widths = [Constraint::Min(12), Constraint::Length(12)];
    let table = Table::new(rows, widths).block(Block::bordered().title(" error kinds "));
    f.render_widget(table, area);
    if empty {
        none_yet(f, area);
    }
}

fn none_yet(f: &mut Frame, area: Rect) {
    let inner = Block::bordered().inner(area);
    f.render_widget(Paragraph::new("none"), inner);
}

/// A row per scenario, step and phase of a plan (per value of `--group-by`: `grouped`).
fn group_rows(f: &mut Frame, area: Rect, v: &View) {
    let s = v.state;
    let head = Row::new([
        "",
        "name",
        "requests",
        "req/s",
        "errors",
        "error %",
        "p99 ms (95 %)",
    ])
    .style(Style::default().add_modifier(Modifier::BOLD));
    let latest = s.last_second().map(|l| l.t_s);
    let rows: Vec<Row> = s
        .plan
        .groups
        .iter()
        .zip(&s.groups)
        .enumerate()
        .map(|(i, (g, counts))| {
            let kind = match g.kind {
                GroupKind::Scenario => "scenario",
                GroupKind::Step => "  step",
                GroupKind::Phase => "  phase",
            };
            let total = &counts.total;
            let now = latest
                .and_then(|t| counts.in_second(t))
                .map_or(0, |c| c.requests);
            let attempts = total.attempts();
            let share = if attempts == 0 {
                "-".to_string()
            } else {
                format!("{:.2}", 100.0 * total.errors as f64 / attempts as f64)
            };
            Row::new([
                kind.to_string(),
                g.name.clone(),
                thousands(total.requests),
                thousands(now),
                thousands(total.errors),
                share,
                group_p99(s, i),
            ])
        })
        .collect();
    let widths = [
        Constraint::Length(9),
        Constraint::Min(12),
        Constraint::Length(12),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(8),
        Constraint::Length(16),
    ];
    let table = Table::new(rows, widths)
        .header(head)
        .block(Block::bordered().title(" scenarios, steps and phases "));
    f.render_widget(table, area);
}

/// Group `i`'s p99 with its 95 % interval so far (`5.38 ± 0.02`), once it has one.
fn group_p99(s: &State, i: usize) -> String {
    s.group_ci95.get(i).and_then(|c| c.p99_ms).map_or_else(
        || "-".into(),
        |b| crate::report::uncertainty::bare_interval(BoundFigure::P99, &b),
    )
}

fn generator(f: &mut Frame, area: Rect, v: &View) {
    let s = v.state;
    let cpu = s.cpu.map_or_else(
        || "measuring…".to_string(),
        |c| format!("{:.0}% of {} worker thread(s)", c * 100.0, s.plan.threads),
    );
    let mut lines = vec![Line::from(format!("CPU: {cpu}"))];
    if let Some(steal) = s.steal {
        lines.push(Line::from(format!(
            "CPU steal (hypervisor): {} last second, {} since the start",
            steal_percent(steal.last_second),
            steal_percent(steal.so_far)
        )));
    }
    if s.is_open() {
        let lag = s.lag_p99_ms.map(|(_, l)| l);
        lines.push(Line::from(format!(
            "send lag p99, last second: {} ms",
            ms(lag)
        )));
    }
    let in_flight = s.last_second().map_or(0, |l| l.in_flight);
    lines.push(Line::from(format!("in flight: {}", thousands(in_flight))));
    if s.warnings.is_empty() {
        lines.push(Line::from("no warnings"));
    }
    for w in &s.warnings {
        let times = if w.times > 1 {
            format!(" (×{})", w.times)
        } else {
            String::new()
        };
        lines.push(Line::from(Span::styled(
            format!("{}: {}{times}", seconds(w.at_s), w.message),
            v.style(Color::Yellow),
        )));
    }
    let p = Paragraph::new(lines)
        .wrap(ratatui::widgets::Wrap { trim: true })
        .block(Block::bordered().title(" generator "));
    f.render_widget(p, area);
}

fn thresholds(f: &mut Frame, area: Rect, v: &View) {
    let all = v.state.thresholds();
    let mut lines: Vec<Line> = all
        .iter()
        .map(|(what, observed, passes, live)| {
            let (mark, color) = match (observed, passes) {
                (None, _) => ("…", Color::Gray),
                (Some(_), true) => ("✓", Color::Green),
                (Some(_), false) => ("✗", Color::Red),
            };
            let value = match observed {
                Some(o) => format!("{o:.3}"),
                None if *live => "nothing measured yet".to_string(),
                None => "judged on the record".to_string(),
            };
            let value = if observed.is_some() {
                format!("now {value}")
            } else {
                value
            };
            Line::from(Span::styled(
                format!("{mark} {what} ({value})"),
                v.style(color),
            ))
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::from("none in this run"));
    }
    let p = Paragraph::new(lines).block(Block::bordered().title(" thresholds "));
    f.render_widget(p, area);
}

fn footer(f: &mut Frame, area: Rect, v: &View) {
    let text = if v.stopping {
        "stopping: finishing the requests in flight, then the record is written…"
    } else {
        "q or Ctrl-C: stop the run (its record is still written)"
    };
    let style = Style::default().add_modifier(Modifier::REVERSED);
    f.render_widget(Paragraph::new(text).style(style), area);
}

#[cfg(test)]
#[path = "draw_tests.rs"]
mod tests;
