#!/usr/bin/env python3
"""bench/coverage_methods.py — the same runs judged with both interval methods (issue 30, item 2).

Usage: python3 bench/coverage_methods.py RECORDS_DIR...

RECORDS_DIR is what `bench/coverage.sh` keeps (KEEP=DIR): one folder per configuration, one
results folder per run. For each configuration and figure (p50, p99, rps) this gives every run's
interval again by both ways of taking the batches' autocorrelation out — `lag1` (records before
2026-11-29: n·(1 − ρ₁)/(1 + ρ₁) when ρ₁ > 2/√n, else n) and `ips` (Geyer's initial positive
sequence, n/τ: what volley does now) — and says how often each holds the mean of the runs'
figures, beside the coverage of the intervals the records hold. The batch figures are the
seconds' own (`series[]`: p50_ms, p99_ms, requests over span_s, whole seconds inside the window):
the one-second batches of a run of up to 32 s, whose percentiles have enough responses (p99:
1,000 a second), except that volley's last latency batch also takes the drain's responses. So
`recorded` and `lag1` should agree closely; if they do not, this script is not judging what volley
judged. Standard library only.
"""

import json
import math
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from coverage_chunks import acf, half_width  # noqa: E402

FIGURES = {
    "p50": (lambda s: s["latency_ms"]["p50"], lambda x: x["p50_ms"], "p50_ms"),
    "p99": (lambda s: s["latency_ms"]["p99"], lambda x: x["p99_ms"], "p99_ms"),
    "rps": (lambda s: s["rps"], lambda x: x["requests"] / x["span_s"], "rps"),
}


def runs_of(folder):
    for run in sorted(os.listdir(folder)):
        record = json.load(open(os.path.join(folder, run, "run.json"), encoding="utf-8"))
        summary = record["summary"]
        seconds = [x for x in record["series"]
                   if x["span_s"] >= 0.999 and x["t_s"] + 1 <= summary["duration_s"] + 1e-6]
        yield summary, seconds


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print(f"{'configuration':22} {'figure':6} {'runs':>4} {'recorded':>9} {'lag1':>7} {'ips':>7} "
          f"{'ips ± / lag1 ±':>15}")
    for root in sys.argv[1:]:
        for config in sorted(os.listdir(root)):
            runs = list(runs_of(os.path.join(root, config)))
            for name, (whole, second, field) in FIGURES.items():
                values = [whole(s) for s, _ in runs]
                pooled = st.mean(values)
                recorded = [(s.get("ci95") or {}).get(field, {}).get("half_width") for s, _ in runs]
                lag1 = [half_width([second(x) for x in sec], "lag1") for _, sec in runs]
                ips = [half_width([second(x) for x in sec], "ips") for _, sec in runs]

                def share(widths):
                    held = sum(1 for v, h in zip(values, widths) if h is not None and abs(v - pooled) <= h)
                    return f"{100 * held / len(values):6.1f}%"

                ratio = st.median(a / b for a, b in zip(ips, lag1) if a and b)
                label = config if len(sys.argv) == 2 else f"{os.path.basename(root.rstrip('/'))}/{config}"
                print(f"{label:22} {name:6} {len(runs):>4} {share(recorded):>9} {share(lag1):>7} "
                      f"{share(ips):>7} {ratio:>15.2f}")


if __name__ == "__main__":
    main()
