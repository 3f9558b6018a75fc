//! The `--watch` panel: the latest figures of each watch of the run, as the
//! [`Watcher`](crate::run::watching::Watcher) last published them (about once a second):
//! per Prometheus page its scrapes, failures and each kept figure's latest value; per process
//! its CPU and resident memory between its last two samples. Definitions: docs/measurement.md,
//! "The live view".

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};

use crate::plan::Plan;
use crate::report::watch::value;
use crate::run::watching::{ProcessNow, ProcessState, PromNow, WatchNow};
use crate::units::thousands;
use crate::watch::spec::Spec;

/// Lines the panel shows at most (borders aside).
const MAX_LINES: usize = 8;
/// Characters of a process's command line shown.
const COMMAND_CHARS: usize = 40;

/// The panel's lines: what `now` says, or that nothing came yet.
pub(super) fn lines(watches: &[Spec], now: Option<&WatchNow>) -> Vec<String> {
    let Some(now) = now else {
        return watches
            .iter()
            .map(|w| format!("{}: waiting for the first sample…", w.describe()))
            .collect();
    };
    let mut out = Vec::new();
    for p in &now.processes {
        out.push(process(p));
    }
    for p in &now.prom {
        prom(p, &mut out);
    }
    out
}

/// Lines the panel wants (borders included), at most [`MAX_LINES`] of text.
pub(super) fn height(plan: &Plan, now: Option<&WatchNow>) -> u16 {
    if plan.watch.is_empty() {
        return 0;
    }
    lines(&plan.watch, now).len().clamp(1, MAX_LINES) as u16 + 2
}

fn process(p: &ProcessNow) -> String {
    let mut name = format!("pid {}", p.pid);
    if !p.command.is_empty() {
        let mut cmd: String = p.command.chars().take(COMMAND_CHARS).collect();
        if p.command.chars().count() > COMMAND_CHARS {
            cmd.push('…');
        }
        name = format!("{name} ({cmd})");
    }
    let state = match &p.state {
        ProcessState::Waiting => "waiting for two samples…".to_string(),
        ProcessState::Sampled {
            cpu_cores,
            rss_bytes,
        } => format!(
            "CPU {:.1}% · RSS {:.1} MiB",
            cpu_cores * 100.0,
            *rss_bytes as f64 / (1024.0 * 1024.0)
        ),
        ProcessState::Exited { at_s } => format!("exited ({at_s:.1} s into the run)"),
        ProcessState::Failed(e) => format!("error: {e}"),
    };
    format!("{name}: {state}")
}

fn prom(p: &PromNow, out: &mut Vec<String>) {
    let failure = match (&p.last_failure, p.failed) {
        (Some(last), 1..) => format!(" (last: {last})"),
        _ => String::new(),
    };
    out.push(format!(
        "prom {}: {} scrapes, {} failed{failure}",
        p.url,
        thousands(p.scrapes),
        thousands(p.failed)
    ));
    if p.figures.is_empty() {
        out.push("  no figure yet".into());
    }
    for (name, v) in &p.figures {
        out.push(format!("  {name}: {}", value(Some(*v))));
    }
}

/// Draws the panel in `area`; lines past its height are counted on the last one.
pub(super) fn draw(f: &mut Frame, area: Rect, plan: &Plan, now: Option<&WatchNow>) {
    let mut all = lines(&plan.watch, now);
    let fits = usize::from(area.height.saturating_sub(2)).max(1);
    if all.len() > fits {
        let hidden = all.len() - fits + 1;
        all.truncate(fits - 1);
        all.push(format!(
            "… {hidden} more line(s): a taller terminal shows them"
        ));
    }
    let text: Vec<Line> = all.into_iter().map(Line::from).collect();
    let block = Block::bordered().title(" target (--watch): latest figures ");
    f.render_widget(Paragraph::new(text).block(block), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_and_pages_read_as_lines() {
        let now = WatchNow {
            prom: vec![PromNow {
                url: "http://127.0.0.1:9/metrics".into(),
                scrapes: 4,
                failed: 1,
                last_failure: Some("timeout".into()),
                figures: vec![("requests_total (per s)".into(), 1234.5)],
            }],
            processes: vec![
                ProcessNow {
                    pid: 7,
                    command: "volley serve".into(),
                    state: ProcessState::Sampled {
                        cpu_cores: 0.25,
                        rss_bytes: 3 * 1024 * 1024,
                    },
                },
                ProcessNow {
                    pid: 8,
                    command: String::new(),
                    state: ProcessState::Exited { at_s: 2.0 },
                },
            ],
        };
        let l = lines(&[], Some(&now));
        assert_eq!(l[0], "pid 7 (volley serve): CPU 25.0% · RSS 3.0 MiB");
        assert_eq!(l[1], "pid 8: exited (2.0 s into the run)");
        assert_eq!(
            l[2],
            "prom http://127.0.0.1:9/metrics: 4 scrapes, 1 failed (last: timeout)"
        );
        assert_eq!(l[3], "  requests_total (per s): 1,234.5");
    }
}
