#!/usr/bin/env python3
"""The table of bench/scale.sh, from its rows (TSV): medians over rounds per point and tool.

Definitions (one each):
  req/s        responses the tool counted / the nominal run time (DURATION)
  achieved     req/s / the asked rate (open model and paced closed model)
  cpu us/req   (user + sys CPU seconds of the generator process) / responses x 1e6
  rss MiB      peak resident set size of the generator process (/usr/bin/time -v)
  KiB/conn     (peak RSS at this connection count - peak RSS at the sweep's smallest count)
               / (difference of the counts): the memory of one extra open connection
  x wrk        volley's figure / wrk's at the same point (closed, paced); x vegeta likewise (open)
  volley-exact volley with --send-grid 0 (open model: each request sent at its own instant)
  bg %         CPU time other processes took on the pinned CPUs (generator's and nginx's),
               % of their capacity over the run (wall time of the tool); the worst of the rounds
"""

import csv
import statistics
import sys
from collections import defaultdict


def load(path):
    runs = defaultdict(list)
    for r in csv.DictReader(open(path), delimiter="\t"):
        key = (r["model"], int(r["threads"]), int(r["conns"]), int(r["rate"]), r["tool"])
        runs[key].append(r)
    med = {}
    for key, rs in runs.items():
        secs = float(rs[0]["seconds"])
        med[key] = {
            "rps": statistics.median(int(r["requests"]) / secs for r in rs),
            "cpu": statistics.median(
                (float(r["user_s"]) + float(r["sys_s"])) / int(r["requests"]) * 1e6 for r in rs
            ),
            "rss": statistics.median(int(r["rss_kib"]) for r in rs),
            "bg": max(float(r["bg_pct"]) for r in rs),
            "n": len(rs),
        }
    return med


def rss_per_conn(med):
    """KiB per extra connection, closed model, per (threads, tool), against the smallest count."""
    out = {}
    groups = defaultdict(list)
    for (model, th, conns, _rate, tool), m in med.items():
        if model == "closed":
            groups[(th, tool)].append((conns, m["rss"]))
    for (th, tool), pts in groups.items():
        pts.sort()
        c0, r0 = pts[0]
        for c, r in pts[1:]:
            out[("closed", th, c, 0, tool)] = (r - r0) / (c - c0)
    return out


def fmt(v, spec, none="-"):
    return none if v is None else format(v, spec)


def main():
    med = load(sys.argv[1])
    per_conn = rss_per_conn(med)
    order = {"closed": 0, "paced": 1, "open": 2}
    tool_order = {"volley": 0, "volley-exact": 1, "wrk": 2, "oha": 3, "vegeta": 4}
    keys = sorted(med, key=lambda k: (order[k[0]], k[3], k[1], k[2], tool_order.get(k[4], 9)))
    head = (f"{'model':<7} {'thr':>3} {'conns':>6} {'rate':>7} {'tool':<12} {'req/s':>9} "
            f"{'achieved':>8} {'cpu us/req':>10} {'rss MiB':>8} {'KiB/conn':>8} "
            f"{'cpu x wrk':>9} {'rps x wrk':>9} {'cpu x veg':>9} {'bg %':>5}")
    print(head)
    print("-" * len(head))
    for k in keys:
        model, th, conns, rate, tool = k
        m = med[k]
        peer = med.get((model, th, conns, rate, "wrk"))
        veg = med.get(("open", th, conns, rate, "vegeta")) if model == "open" else None
        achieved = m["rps"] / rate * 100 if rate else None
        print(f"{model:<7} {th:>3} {conns:>6} {rate or '':>7} {tool:<12} {m['rps']:>9.0f} "
              f"{fmt(achieved, '7.1f'):>7}{'%' if achieved else ' '} {m['cpu']:>10.2f} "
              f"{m['rss'] / 1024:>8.1f} {fmt(per_conn.get(k), '8.2f'):>8} "
              f"{fmt(m['cpu'] / peer['cpu'] if peer and tool != 'wrk' else None, '9.2f'):>9} "
              f"{fmt(m['rps'] / peer['rps'] if peer and tool != 'wrk' else None, '9.2f'):>9} "
              f"{fmt(m['cpu'] / veg['cpu'] if veg and tool != 'vegeta' else None, '9.2f'):>9} "
              f"{m['bg']:>5.1f}")
    threads_efficiency(med)
    open_vs_closed(med)
    worst = max((m["bg"] for m in med.values()), default=0)
    if worst > 5:
        print(f"\nwarning: other processes took up to {worst:.0f} % of the pinned CPUs in a run; "
              "the machine was not quiet, treat these figures with care")


def threads_efficiency(med):
    rows = defaultdict(dict)
    for (model, th, conns, _rate, tool), m in med.items():
        if model == "closed":
            rows[(tool, conns)][th] = m["rps"]
    lines = []
    for (tool, conns), by in sorted(rows.items()):
        if len(by) < 2 or 1 not in by:
            continue
        eff = "  ".join(f"{t} thr: {by[t] / (t * by[1]) * 100:.0f} %" for t in sorted(by))
        lines.append(f"  {tool:<7} {conns:>6} conns  {eff}")
    if lines:
        print("\nthreads: req/s(T) / (T x req/s(1))")
        print("\n".join(lines))


def open_vs_closed(med):
    lines = []
    for (model, th, _conns, rate, tool), m in sorted(med.items()):
        if model != "open" or tool not in ("volley", "volley-exact"):
            continue
        paced = [v for (mo, t, _c, ra, to), v in med.items()
                 if mo == "paced" and t == th and ra == rate and to == "volley"]
        if paced:
            p = paced[0]
            lines.append(f"  {rate:>7} req/s: {tool:<12} open {m['cpu']:.2f} us/req at {m['rps']:.0f} req/s, "
                         f"closed {p['cpu']:.2f} at {p['rps']:.0f}: open/closed {m['cpu'] / p['cpu']:.2f}")
    if lines:
        print("\nvolley open model vs closed at the same rate (closed held to the rate by nginx):")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
