#!/usr/bin/env python3
"""bench/coverage_kpss.py — would a drift test inside a run tell which intervals miss? (issue 30)

Usage: python3 bench/coverage_kpss.py RECORDS_DIR...       (folders kept by coverage.sh KEEP=DIR)
       python3 bench/coverage_kpss.py RUN.json CHUNK_S      (one long run cut into chunks)

For each run (or chunk) and figure (p50, p99, requests/s over its one-second batches), the
KPSS statistic of level stationarity (Bartlett window of 4·(n/100)^¼ lags; 5 % critical value
0.463) flags a run whose seconds drift. Prints how often the flagged and the unflagged runs'
intervals (as bench/coverage_chunks.py gives them: the initial positive sequence) hold the mean
of all runs' figures. A useful drift test would flag the runs that miss. Standard library only.
"""

import json
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from coverage_chunks import half_width  # noqa: E402

CRITICAL = 0.463


def kpss(v):
    n, m = len(v), st.mean(v)
    e = [x - m for x in v]
    lags = int(4 * (n / 100) ** 0.25)
    partial, s2 = 0.0, 0.0
    for x in e:
        partial += x
        s2 += partial * partial
    lr = sum(x * x for x in e) / n
    for k in range(1, lags + 1):
        lr += 2 * (1 - k / (lags + 1)) * sum(e[i] * e[i + k] for i in range(n - k)) / n
    return s2 / (n * n * lr) if lr > 0 else 0.0


def seconds(record):
    d = record["summary"]["duration_s"]
    return [x for x in record["series"] if x["span_s"] >= 0.999 and x["t_s"] + 1 <= d + 1e-6]


def judge(label, runs):
    for fig in ("p50_ms", "p99_ms", "rps"):
        rows = []
        for secs in runs:
            xs = [x["requests"] / x["span_s"] if fig == "rps" else x[fig] for x in secs]
            rows.append((st.mean(xs), half_width(xs), kpss(xs) > CRITICAL))
        truth = st.mean(v for v, _, _ in rows)
        held = [(h is not None and abs(v - truth) <= h, f) for v, h, f in rows]

        def share(xs):
            return f"{100 * sum(xs) / len(xs):5.1f}% of {len(xs):3}" if xs else "      -     "

        print(f"{label:28} {fig:7} all {share([c for c, _ in held])}  flagged "
              f"{share([c for c, f in held if f])}  unflagged {share([c for c, f in held if not f])}")


def main():
    if len(sys.argv) == 3 and sys.argv[1].endswith(".json"):
        secs = seconds(json.load(open(sys.argv[1], encoding="utf-8")))
        chunk = int(sys.argv[2])
        judge(f"{os.path.basename(sys.argv[1])} {chunk}s",
              [secs[i:i + chunk] for i in range(0, len(secs) - chunk + 1, chunk)])
        return
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for root in sys.argv[1:]:
        for config in sorted(os.listdir(root)):
            folder = os.path.join(root, config)
            runs = [seconds(json.load(open(os.path.join(folder, r, "run.json"), encoding="utf-8")))
                    for r in sorted(os.listdir(folder))]
            judge(f"{os.path.basename(root.rstrip('/'))}/{config}", runs)


if __name__ == "__main__":
    main()
