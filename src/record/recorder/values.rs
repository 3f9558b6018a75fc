//! The `--group-by` tables' figures per value over each interval, for a live view that shows
//! them (an engine observer that asks for group values). Like the rest of the
//! [`Breakdown`](super::Breakdown), they are taken once a second as the difference between the
//! tables' running figures and those last reported: recording a request does nothing more for
//! them. Taking them walks each row that gained exchanges (its histogram once) and keeps, per
//! row, the figures it last reported (a histogram of the same size as the row's).

use hdrhistogram::Histogram;

use super::new_histogram;
use crate::record::group::{GroupRow, GroupTable};

/// Which row of a group-by table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ValueKey {
    /// A value with a row of its own (its first
    /// [`MAX_VALUE_BYTES`](crate::record::group::MAX_VALUE_BYTES) bytes).
    Value(Box<[u8]>),
    /// `(other)`: the values past the table's
    /// [`MAX_VALUES`](crate::record::group::MAX_VALUES).
    Other,
    /// `(none)`: exchanges without a value.
    None,
}

/// What one row of one worker's table gained over one interval.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueInterval {
    /// The row.
    pub key: ValueKey,
    /// Exchanges recorded in the interval (responses and failed attempts).
    pub exchanges: u64,
    /// Of them, failed.
    pub errors: u64,
    /// Latency of the interval's responses, µs: for each histogram bucket that gained any, a
    /// value in it and how many it gained, ascending. Recorded into a histogram of volley's
    /// bounds ([`new_histogram`]) they give exactly the row's buckets.
    pub latency_us: Vec<(u64, u64)>,
}

/// The figures one row last reported.
#[derive(Debug, Clone)]
struct RowReported {
    exchanges: u64,
    errors: u64,
    latency: Histogram<u64>,
}

impl RowReported {
    fn new() -> Self {
        Self {
            exchanges: 0,
            errors: 0,
            latency: new_histogram(),
        }
    }

    /// What `row` gained since the last call, or `None` when it recorded nothing.
    fn take(&mut self, key: impl FnOnce() -> ValueKey, row: &GroupRow) -> Option<ValueInterval> {
        if row.exchanges == self.exchanges {
            return None;
        }
        let errors = row.error_count();
        let mut latency_us = Vec::new();
        if row.latency.len() > self.latency.len() {
            for v in row.latency.iter_recorded() {
                let value = v.value_iterated_to();
                let (now, before) = (v.count_at_value(), self.latency.count_at(value));
                if now > before {
                    latency_us.push((value, now - before));
                }
            }
            for &(value, n) in &latency_us {
                // The same bounds: the value lands in the bucket it came from.
                let _ = self.latency.record_n(value, n);
            }
        }
        let out = ValueInterval {
            key: key(),
            exchanges: row.exchanges - self.exchanges,
            errors: errors.saturating_sub(self.errors),
            latency_us,
        };
        (self.exchanges, self.errors) = (row.exchanges, errors);
        Some(out)
    }
}

/// What one table's rows last reported: its kept values by row index, `(other)`, `(none)`.
#[derive(Debug, Clone, Default)]
struct TableReported {
    values: Vec<RowReported>,
    other: Option<RowReported>,
    none: Option<RowReported>,
}

/// What every table of a worker last reported (made only when a live view asks).
#[derive(Debug, Clone, Default)]
pub(super) struct ValuesReported {
    tables: Vec<TableReported>,
}

impl ValuesReported {
    /// Per table, the rows that recorded anything since the last call and what they gained.
    pub(super) fn take(&mut self, tables: &[GroupTable]) -> Vec<Vec<ValueInterval>> {
        if self.tables.len() < tables.len() {
            self.tables
                .resize_with(tables.len(), TableReported::default);
        }
        tables
            .iter()
            .zip(&mut self.tables)
            .map(|(table, reported)| {
                let mut out = Vec::new();
                for (i, (value, row)) in table.values().enumerate() {
                    if reported.values.len() <= i {
                        reported.values.push(RowReported::new());
                    }
                    let key = || ValueKey::Value(value.into());
                    out.extend(reported.values[i].take(key, row));
                }
                let specials = [
                    (ValueKey::Other, table.other(), &mut reported.other),
                    (ValueKey::None, table.none(), &mut reported.none),
                ];
                for (key, row, reported) in specials {
                    if let Some(row) = row {
                        let r = reported.get_or_insert_with(RowReported::new);
                        out.extend(r.take(|| key, row));
                    }
                }
                out
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::error_kind::ErrorKind;

    #[test]
    fn each_interval_has_what_each_row_gained_and_rows_without_news_are_left_out() {
        let mut table = GroupTable::new();
        let mut reported = ValuesReported::default();
        for _ in 0..3 {
            table.record(Some(b"a"), 1_000, Some(200), None);
        }
        table.record(None, 0, None, Some(ErrorKind::ConnectRefused));
        let first = reported.take(std::slice::from_ref(&table));
        assert_eq!(first.len(), 1);
        let a = &first[0][0];
        assert_eq!(a.key, ValueKey::Value(b"a".to_vec().into()));
        assert_eq!((a.exchanges, a.errors), (3, 0));
        assert_eq!(a.latency_us.len(), 1);
        assert_eq!(a.latency_us[0].1, 3);
        let none = &first[0][1];
        assert_eq!(
            (&none.key, none.exchanges, none.errors),
            (&ValueKey::None, 1, 1)
        );
        assert!(none.latency_us.is_empty(), "no response, no latency");

        table.record(Some(b"a"), 1_000, Some(200), None);
        table.record(Some(b"a"), 50_000, Some(500), Some(ErrorKind::Http5xx));
        let second = reported.take(std::slice::from_ref(&table));
        assert_eq!(second[0].len(), 1, "(none) recorded nothing: {second:?}");
        let a = &second[0][0];
        assert_eq!((a.exchanges, a.errors), (2, 1));
        let mut h = new_histogram();
        for &(v, n) in &a.latency_us {
            h.record_n(v, n).unwrap();
        }
        assert_eq!(h.len(), 2);
        assert_eq!(h.lowest_equivalent(h.min()), h.lowest_equivalent(1_000));
        assert!(h.max() >= 50_000);
        assert!(reported.take(std::slice::from_ref(&table))[0].is_empty());
    }
}
