#!/usr/bin/env python3
"""bench/coverage_chunks.py — coverage within one long run (issue 30, item 2, a diagnostic).

Usage: python3 bench/coverage_chunks.py RUN.json [CHUNK_S] [ips|lag1]

Cuts one long run's per-second series (`series[]`, whole seconds) into chunks of CHUNK_S
seconds (default 6, as bench/coverage.sh's runs), gives each chunk the interval volley would give
a run of that length (`value ± t(0.975, n_eff − 1) · sd / √n_eff` over its one-second batches,
n_eff = n / τ with τ the initial-positive-sequence autocorrelation time, as
src/analysis/interval.rs; `lag1`: the method of records before it), and says
how often a chunk's interval holds the mean of all chunks. A chunk's figure here is the mean of
its seconds' figures (p50, p99, requests), not the percentile of its pooled responses: close
enough to tell whether the spread between chunks of ONE process matches the intervals, against
bench/coverage.sh's spread between separate runs. Standard library only.
"""

import json
import math
import statistics as st
import sys


def acf(v, k):
    m = st.mean(v)
    d = sum((x - m) ** 2 for x in v)
    return sum((v[i] - m) * (v[i + k] - m) for i in range(len(v) - k)) / d if d else 0.0


def t975(df):
    """Student's t 0.975 quantile for df degrees of freedom (Simpson's rule and bisection)."""
    c = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))

    def cdf(x, n=2000):
        f = lambda t: (1 + t * t / df) ** (-(df + 1) / 2)
        h = x / n
        s = f(0) + f(x) + sum((4 if i % 2 else 2) * f(i * h) for i in range(1, n))
        return 0.5 + c * s * h / 3

    lo, hi = 0.0, 60.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < 0.975 else (lo, mid)
    return lo


def autocorrelation_time(v):
    """Geyer's initial positive sequence, at least 1 (as src/analysis/stats.rs)."""
    total, m = 0.0, 0
    while 2 * m + 1 < len(v):
        pair = (1.0 if m == 0 else acf(v, 2 * m)) + acf(v, 2 * m + 1)
        if pair <= 0:
            break
        total, m = total + pair, m + 1
    return max(1.0, 2 * total - 1)


def half_width(v, method="ips"):
    n = len(v)
    if method == "lag1":
        rho = acf(v, 1)
        ne = n if rho <= 2 / math.sqrt(n) else n * (1 - rho) / (1 + rho)
    else:
        ne = n / autocorrelation_time(v)
    return None if ne < 2 else t975(ne - 1) * st.stdev(v) / math.sqrt(ne)


def main():
    record = json.load(open(sys.argv[1], encoding="utf-8"))
    chunk = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    method = sys.argv[3] if len(sys.argv) > 3 else "ips"
    seconds = [s for s in record["series"] if s["span_s"] == 1.0]
    print(f"{len(seconds)} whole seconds, chunks of {chunk} s")
    print(f"{'figure':9} {'chunks':>6} {'coverage':>9} {'sd/se':>6} {'lag-1':>6}  "
          "autocorrelation of the seconds at lags 1-5")
    for key in ["p50_ms", "p99_ms", "requests"]:
        values = [s[key] for s in seconds]
        chunks = [values[i:i + chunk] for i in range(0, len(values) - chunk + 1, chunk)]
        figures = [st.mean(c) for c in chunks]
        widths = [half_width(c, method) for c in chunks]
        pooled = st.mean(figures)
        judged = [(f, h) for f, h in zip(figures, widths) if h is not None]
        held = sum(1 for f, h in judged if abs(f - pooled) <= h)
        se = st.median(h / t975(chunk - 1) for _, h in judged)
        print(f"{key:9} {len(chunks):>6} {100 * held / len(judged):>8.1f}% "
              f"{st.stdev(figures) / se:>6.2f} {acf(figures, 1):>6.2f}  "
              + " ".join(f"{acf(values, k):5.2f}" for k in range(1, 6)))


if __name__ == "__main__":
    main()
