//! The `--group-by` panel: per value of each key, its share of the key's exchanges so far, its
//! rate in the latest merged second, its p99 latency so far and its errors. Gathered from the
//! workers' snapshots ([`Breakdown::grouped`](crate::record::recorder::Breakdown::grouped)),
//! which carry what each value gained since the worker's last one. Definitions:
//! docs/measurement.md, "The live view".

use hdrhistogram::Histogram;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Row as TableRow, Table};

use crate::plan::Plan;
use crate::record::recorder::{ValueInterval, ValueKey, new_histogram};
use crate::units::{ms, thousands};

/// Seconds of per-value counts kept, by second index (the workers' seconds arrive within a
/// second or two of each other).
const RECENT: usize = 8;
/// Characters of a value shown; longer ones are cut with `…`.
pub(super) const VALUE_CHARS: usize = 28;
/// The narrowest a key's table is drawn: keys side by side only when each gets this much.
const KEY_WIDTH: u16 = 60;
/// Value rows a key's table shows at most.
const MAX_ROWS: u16 = 10;

/// One value (or `(other)`, `(none)`) of one key, summed over the snapshots received.
#[derive(Debug, Clone)]
pub(super) struct Value {
    pub key: ValueKey,
    /// Exchanges so far (responses and failed attempts).
    pub exchanges: u64,
    /// Failed exchanges so far.
    pub errors: u64,
    /// Latency of its responses so far, µs.
    pub latency: Histogram<u64>,
    /// Exchanges per second index, the latest [`RECENT`]: slot `second % RECENT` holds
    /// `(second, exchanges)`.
    recent: [(u64, u64); RECENT],
}

impl Value {
    fn new(key: ValueKey) -> Self {
        Self {
            key,
            exchanges: 0,
            errors: 0,
            latency: new_histogram(),
            recent: [(u64::MAX, 0); RECENT],
        }
    }

    /// Its exchanges in second `second` (0 when none, or too long ago).
    pub(super) fn in_second(&self, second: u64) -> u64 {
        match self.recent[(second % RECENT as u64) as usize] {
            (s, n) if s == second => n,
            _ => 0,
        }
    }

    /// The p99 of its latency so far, ms (`None` before its first response).
    pub(super) fn p99_ms(&self) -> Option<f64> {
        (!self.latency.is_empty()).then(|| self.latency.value_at_quantile(0.99) as f64 / 1e3)
    }

    /// How the panel names it: the value as lossy UTF-8 (control characters as spaces), cut to
    /// [`VALUE_CHARS`]; `(other)` and `(none)` for those rows.
    pub(super) fn label(&self) -> String {
        let ValueKey::Value(bytes) = &self.key else {
            return match self.key {
                ValueKey::Other => "(other)".into(),
                _ => "(none)".into(),
            };
        };
        let text = String::from_utf8_lossy(bytes);
        let mut out: String = text
            .chars()
            .take(VALUE_CHARS)
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        if text.chars().nth(VALUE_CHARS).is_some() {
            out.pop();
            out.push('…');
        }
        out
    }
}

/// One `--group-by` key.
#[derive(Debug, Clone)]
pub(super) struct Key {
    /// The selector as written (`header:X-Backend`).
    pub name: String,
    /// Exchanges of all its rows so far.
    pub exchanges: u64,
    /// Its rows, in the order first received.
    pub values: Vec<Value>,
}

impl Key {
    /// Its rows, the largest share first (ties by name).
    pub(super) fn by_share(&self) -> Vec<&Value> {
        let mut rows: Vec<&Value> = self.values.iter().collect();
        rows.sort_by(|a, b| {
            b.exchanges
                .cmp(&a.exchanges)
                .then_with(|| a.label().cmp(&b.label()))
        });
        rows
    }

    /// A row's share of the key's exchanges, %.
    pub(super) fn share_pct(&self, v: &Value) -> f64 {
        crate::units::share_pct(self.exchanges, v.exchanges)
    }
}

/// Every `--group-by` key of the run.
#[derive(Debug, Clone, Default)]
pub(super) struct Grouped {
    pub keys: Vec<Key>,
}

impl Grouped {
    /// The keys of `plan`, none seen yet.
    pub(super) fn new(plan: &Plan) -> Self {
        let keys = plan
            .target
            .group_by
            .iter()
            .map(|g| Key {
                name: g.selector.to_string(),
                exchanges: 0,
                values: Vec::new(),
            })
            .collect();
        Self { keys }
    }

    /// Adds one worker's snapshot of second `second`: per table, what its values gained.
    pub(super) fn add(&mut self, second: u64, tables: &[Vec<ValueInterval>]) {
        for (key, gained) in self.keys.iter_mut().zip(tables) {
            for g in gained {
                let at = match key.values.iter().position(|v| v.key == g.key) {
                    Some(i) => i,
                    None => {
                        key.values.push(Value::new(g.key.clone()));
                        key.values.len() - 1
                    }
                };
                let v = &mut key.values[at];
                v.exchanges += g.exchanges;
                v.errors += g.errors;
                for &(us, n) in &g.latency_us {
                    let _ = v.latency.record_n(us, n);
                }
                let slot = &mut v.recent[(second % RECENT as u64) as usize];
                if slot.0 != second {
                    *slot = (second, 0);
                }
                slot.1 += g.exchanges;
                key.exchanges += g.exchanges;
            }
        }
    }

    /// Rows the panel would show (the most of any key), for its height.
    pub(super) fn rows_wanted(&self) -> u16 {
        let most = self.keys.iter().map(|k| k.values.len()).max().unwrap_or(0);
        (most.max(1) as u16).min(MAX_ROWS)
    }
}

/// Draws the keys side by side (as many as [`KEY_WIDTH`] lets in `area`); `latest`: the latest
/// merged second (index, span in s), whose exchanges give the rates.
pub(super) fn draw(f: &mut Frame, area: Rect, grouped: &Grouped, latest: Option<(u64, f64)>) {
    let shown = usize::from((area.width / KEY_WIDTH).max(1)).min(grouped.keys.len());
    if shown == 0 {
        return;
    }
    let areas = Layout::horizontal(vec![Constraint::Ratio(1, shown as u32); shown]).split(area);
    let hidden = grouped.keys.len() - shown;
    for (i, (key, area)) in grouped.keys.iter().zip(areas.iter()).enumerate() {
        let more = if i + 1 == shown && hidden > 0 {
            format!(" · {hidden} more key(s) need a wider terminal")
        } else {
            String::new()
        };
        draw_key(f, *area, key, latest, &more);
    }
}

fn draw_key(f: &mut Frame, area: Rect, key: &Key, latest: Option<(u64, f64)>, more: &str) {
    let fits = usize::from(area.height.saturating_sub(3));
    let rows = key.by_share();
    let cut = rows.len().saturating_sub(fits);
    let showing = if cut > 0 {
        format!(", the {} largest shown", rows.len() - cut)
    } else {
        String::new()
    };
    let title = format!(
        " grouped by {} · {} value(s){showing}{more} ",
        key.name,
        rows.len()
    );
    let head = TableRow::new(["value", "share %", "req/s", "p99 ms", "errors"])
        .style(Style::default().add_modifier(Modifier::BOLD));
    let lines: Vec<TableRow> = rows
        .iter()
        .take(fits)
        .map(|v| {
            let rate = latest.map_or(0.0, |(s, span)| v.in_second(s) as f64 / span.max(1e-3));
            TableRow::new([
                v.label(),
                format!("{:.1}", key.share_pct(v)),
                thousands(rate.round() as u64),
                ms(v.p99_ms()),
                thousands(v.errors),
            ])
        })
        .collect();
    let widths = [
        Constraint::Min(12),
        Constraint::Length(8),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
    ];
    let table = Table::new(lines, widths)
        .header(head)
        .block(Block::bordered().title(title));
    f.render_widget(table, area);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gained(value: &[u8], exchanges: u64, errors: u64, latency_us: u64) -> ValueInterval {
        ValueInterval {
            key: ValueKey::Value(value.into()),
            exchanges,
            errors,
            latency_us: vec![(latency_us, exchanges - errors)],
        }
    }

    fn one_key() -> Grouped {
        Grouped {
            keys: vec![Key {
                name: "header:X-Backend".into(),
                exchanges: 0,
                values: Vec::new(),
            }],
        }
    }

    #[test]
    fn workers_snapshots_add_up_per_value_with_shares_rates_and_p99() {
        let mut g = one_key();
        // Two workers' second 0, then one worker's second 1.
        g.add(
            0,
            &[vec![
                gained(b"b1", 30, 0, 1_000),
                gained(b"b2", 10, 0, 1_000),
            ]],
        );
        g.add(0, &[vec![gained(b"b1", 30, 3, 1_000)]]);
        let none = ValueInterval {
            key: ValueKey::None,
            exchanges: 20,
            errors: 20,
            latency_us: Vec::new(),
        };
        g.add(1, &[vec![gained(b"b2", 40, 0, 40_000), none]]);
        let key = &g.keys[0];
        assert_eq!(key.exchanges, 130);
        let rows = key.by_share();
        let labels: Vec<String> = rows.iter().map(|v| v.label()).collect();
        assert_eq!(labels, ["b1", "b2", "(none)"], "the largest share first");
        let (b1, b2, none) = (rows[0], rows[1], rows[2]);
        assert_eq!((b1.exchanges, b1.errors), (60, 3));
        assert!((key.share_pct(b1) - 100.0 * 60.0 / 130.0).abs() < 1e-9);
        assert_eq!((b1.in_second(0), b1.in_second(1)), (60, 0));
        assert_eq!((b2.in_second(0), b2.in_second(1)), (10, 40));
        assert!(b1.p99_ms().is_some_and(|p| (p - 1.0).abs() < 0.01));
        // b2: 10 at 1 ms, 40 at 40 ms: its p99 is the slow ones'.
        assert!(b2.p99_ms().is_some_and(|p| (p - 40.0).abs() < 0.1));
        assert_eq!(none.p99_ms(), None, "no response, no latency");
        assert_eq!(none.errors, 20);
        // A second long gone is not mistaken for a recent one.
        assert_eq!(b2.in_second(1 + RECENT as u64), 0);
    }

    #[test]
    fn values_are_shown_as_lossy_text_cut_to_a_width() {
        let v = |bytes: &[u8]| Value::new(ValueKey::Value(bytes.into())).label();
        assert_eq!(v(b"b1"), "b1");
        assert_eq!(v(b"a\nb\xff"), "a b\u{fffd}");
        let long = v(&[b'x'; 200]);
        assert_eq!(long.chars().count(), VALUE_CHARS);
        assert!(long.ends_with('…'));
        assert_eq!(Value::new(ValueKey::Other).label(), "(other)");
    }
}
