use super::*;

fn table_of(values: &[(&str, u64, u16)]) -> GroupTable {
    let mut t = GroupTable::new();
    for &(v, latency_us, status) in values {
        let error = ErrorKind::from_status(status);
        t.record(Some(v.as_bytes()), latency_us, Some(status), error);
    }
    t
}

fn row<'a>(t: &'a GroupTable, value: &str) -> &'a GroupRow {
    t.values()
        .find(|(v, _)| *v == value.as_bytes())
        .map(|(_, r)| r)
        .unwrap_or_else(|| panic!("no row {value}"))
}

#[test]
fn rows_per_value_with_statuses_errors_and_latency() {
    let mut t = table_of(&[
        ("b1", 1_000, 200),
        ("b2", 20_000, 200),
        ("b1", 3_000, 503),
        ("b2", 22_000, 200),
    ]);
    t.record(None, 0, None, Some(ErrorKind::ConnectRefused));
    let b1 = row(&t, "b1");
    assert_eq!((b1.exchanges, b1.responses), (2, 2));
    assert_eq!(b1.statuses().collect::<Vec<_>>(), [(200, 1), (503, 1)]);
    assert_eq!(b1.error_count(), 1);
    assert_eq!(b1.latency.max(), b1.latency.highest_equivalent(3_000));
    let b2 = row(&t, "b2");
    assert_eq!(b2.error_count(), 0);
    assert_eq!(b2.latency.min(), b2.latency.lowest_equivalent(20_000));
    let none = t.none().unwrap();
    assert_eq!(
        (none.exchanges, none.responses, none.error_count()),
        (1, 0, 1)
    );
    assert_eq!(none.latency.len(), 0, "no response, no latency");
    assert!(t.other().is_none());
    assert_eq!(
        t.distinct(),
        Distinct {
            count: 2,
            saturated: false
        }
    );
    assert_eq!(t.exchanges(), 5);
    let order: Vec<&[u8]> = t.values().map(|(v, _)| v).collect();
    assert_eq!(order, [b"b1".as_slice(), b"b2"], "first seen first");
}

#[test]
fn values_past_the_fiftieth_go_to_other_and_are_still_counted_as_distinct() {
    let mut t = GroupTable::new();
    for i in 0..70 {
        for _ in 0..2 {
            t.record(Some(format!("v{i}").as_bytes()), 100, Some(200), None);
        }
    }
    assert_eq!(t.values().count(), MAX_VALUES);
    assert_eq!(t.other().unwrap().exchanges, 2 * 20);
    assert_eq!(t.distinct().count, 70);
    assert_eq!(t.exchanges(), 140);
    // A kept value stays in its row after the table is full.
    t.record(Some(b"v0"), 100, Some(200), None);
    assert_eq!(row(&t, "v0").exchanges, 3);
}

#[test]
fn long_values_are_compared_on_their_first_bytes() {
    let a = format!("{}a", "x".repeat(MAX_VALUE_BYTES));
    let b = format!("{}b", "x".repeat(MAX_VALUE_BYTES));
    let t = table_of(&[(&a, 10, 200), (&b, 10, 200)]);
    assert_eq!(t.values().count(), 1);
    assert_eq!(t.values().next().unwrap().0.len(), MAX_VALUE_BYTES);
    assert_eq!(t.distinct().count, 1);
}

#[test]
fn distinct_values_saturate_at_the_cap() {
    let mut t = GroupTable::new();
    for i in 0..DISTINCT_CAP + 100 {
        t.record(Some(i.to_string().as_bytes()), 10, Some(200), None);
    }
    let d = t.distinct();
    assert_eq!(
        d,
        Distinct {
            count: DISTINCT_CAP as u64,
            saturated: true
        }
    );
    assert_eq!(t.exchanges(), (DISTINCT_CAP + 100) as u64, "nothing lost");
}

#[test]
fn merge_adds_rows_and_unites_distinct_values() {
    let mut a = table_of(&[("b1", 1_000, 200), ("b2", 2_000, 200)]);
    let b = table_of(&[("b2", 4_000, 500), ("b3", 3_000, 200), ("b3", 3_000, 200)]);
    a.merge(&b);
    assert_eq!(row(&a, "b2").exchanges, 2);
    assert_eq!(
        row(&a, "b2").statuses().collect::<Vec<_>>(),
        [(200, 1), (500, 1)]
    );
    assert_eq!(row(&a, "b2").latency.len(), 2);
    assert_eq!(row(&a, "b3").exchanges, 2);
    assert_eq!(a.distinct().count, 3);
    assert_eq!(a.exchanges(), 5);
    // Recording into a merged table still finds the merged rows.
    a.record(Some(b"b3"), 10, Some(200), None);
    assert_eq!(row(&a, "b3").exchanges, 3);
}

#[test]
fn merged_table_keeps_the_bound_and_loses_nothing() {
    let mut a = GroupTable::new();
    for i in 0..MAX_VALUES {
        a.record(Some(format!("a{i}").as_bytes()), 10, Some(200), None);
    }
    let mut b = GroupTable::new();
    for i in 0..10 {
        b.record(Some(format!("b{i}").as_bytes()), 10, Some(200), None);
    }
    b.record(Some(b"a0"), 10, Some(200), None);
    b.record(None, 0, None, Some(ErrorKind::Timeout));
    a.merge(&b);
    assert_eq!(a.values().count(), MAX_VALUES);
    assert_eq!(row(&a, "a0").exchanges, 2);
    assert_eq!(a.other().unwrap().exchanges, 10);
    assert_eq!(a.none().unwrap().exchanges, 1);
    assert_eq!(a.distinct().count, (MAX_VALUES + 10) as u64);
    assert_eq!(a.exchanges(), (MAX_VALUES + 12) as u64);
    // A value merged into (other) is recorded there afterwards too, not given a row.
    a.record(Some(b"b0"), 10, Some(200), None);
    assert_eq!(a.other().unwrap().exchanges, 11);
}

#[test]
fn merging_is_order_independent_in_its_totals() {
    let x = table_of(&[("p", 10, 200), ("q", 20, 404)]);
    let y = table_of(&[("q", 30, 200), ("r", 40, 200)]);
    let mut xy = x.clone();
    xy.merge(&y);
    let mut yx = y.clone();
    yx.merge(&x);
    for v in ["p", "q", "r"] {
        assert_eq!(row(&xy, v).exchanges, row(&yx, v).exchanges, "{v}");
        assert_eq!(row(&xy, v).latency, row(&yx, v).latency, "{v}");
    }
    assert_eq!(xy.distinct(), yx.distinct());
}
