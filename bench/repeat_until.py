#!/usr/bin/env python3
"""bench/repeat_until.py — does `--repeat N --repeat-until FIGURE=SHARE` stop honestly?

The rule (docs/measurement.md, "Repeats until precise"): after each run from the third, the 95 %
t interval of the mean of the runs' logarithms; stop once its half-width is within the share
asked, else at N runs. Looking after every run and stopping when the interval happens to be
narrow makes the final interval a little optimistic. This simulates the rule on runs whose
logarithms are independent and normal (standard deviation SIGMA times the share asked) and prints,
per SIGMA, how often the final interval holds the true figure and the median runs used.
Deterministic (seeded). Usage: python3 bench/repeat_until.py [SERIES] [MOST]
(defaults 20000 series, at most 20 runs).
"""
import math
import random
import statistics
import sys

# Two-sided 95 % Student t quantiles by degrees of freedom.
T975 = {2: 4.3027, 3: 3.1824, 4: 2.7764, 5: 2.5706, 6: 2.4469, 7: 2.3646, 8: 2.3060,
        9: 2.2622, 10: 2.2281, 11: 2.2010, 12: 2.1788, 13: 2.1604, 14: 2.1448, 15: 2.1314,
        16: 2.1199, 17: 2.1098, 18: 2.1009, 19: 2.0930, 20: 2.0860, 21: 2.0796, 22: 2.0739,
        23: 2.0687, 24: 2.0639, 25: 2.0595, 26: 2.0555, 27: 2.0518, 28: 2.0484, 29: 2.0452}

def series(rng, sigma, most):
    """One series of repeats: (whether the final interval holds the truth 0, runs used, precise)."""
    xs = []
    for k in range(1, most + 1):
        xs.append(rng.gauss(0.0, sigma))
        if k < 3:
            continue
        half = T975[k - 1] * statistics.stdev(xs) / math.sqrt(k)
        if half <= 1.0 or k == most:
            return abs(statistics.mean(xs)) <= half, k, half <= 1.0

def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    most = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    if not 3 <= most <= 30:
        sys.exit("MOST must be 3 to 30")
    rng = random.Random(20261129)
    print(f"{'sd/share':>8} {'holds':>7} {'precise':>8} {'median runs':>12}   ({count} series, at most {most} runs)")
    for sigma in (0.25, 0.5, 1.0, 1.5, 2.0, 3.0):
        runs = [series(rng, sigma, most) for _ in range(count)]
        holds = sum(h for h, _, _ in runs) / count
        precise = sum(p for _, _, p in runs) / count
        print(f"{sigma:>8.2f} {holds:>7.1%} {precise:>8.1%} {statistics.median(k for _, k, _ in runs):>12.0f}")

main()
