#!/usr/bin/env bash
# bench/profiles.sh — CPU per request of two volley binaries (e.g. the fat-LTO `dist` build
# against the default `release` without LTO, or the previous main against a change), measured by
# bench/generator.sh in alternating rounds:
# A B A B … , ROUNDS of each, each a DURATION-second run against the private nginx.
#
#   A=target/dist/volley B=target/release/volley ROUNDS=5 DURATION=10 bench/profiles.sh
#
# Prints one line per run (cpu_us/req and bg_s, the CPU other processes took on the pinned
# CPUs during it), then the median cpu_us/req of each and B/A. Acceptance (issue 15): the
# build without LTO within 3 % of the fat-LTO one; issue 11: the refactor within 3 % of main. Only meaningful on a quiet
# machine: look at bg_s and `uptime` and say what they were.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
A=${A:?set A=path of the first volley binary (the reference, e.g. target/dist/volley)}
B=${B:?set B=path of the second volley binary (e.g. target/release/volley)}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf 'load before: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= ROUNDS; r++)); do
  for side in A B; do
    bin=${!side}
    TOOLS=volley ROUNDS=1 DURATION=$DURATION VOLLEY=$bin BUILD=never \
      RESULTS="$tmp/$side-$r.tsv" "$here/generator.sh" > "$tmp/$side-$r.log" 2>&1 \
      || { cat "$tmp/$side-$r.log" >&2; exit 1; }
    # Columns: round tool requests secs req/s user sys cpu_us/req rss nginx_s bg_s.
    awk -F'\t' -v s="$side" -v r="$r" 'NR > 1 && $2 == "volley" {
      printf "%s round %d: %d requests  cpu_us/req %.3f  bg_s %.2f\n", s, r, $3, $8, $11
      print $8 > "/dev/stderr" }' "$tmp/$side-$r.tsv" 2>> "$tmp/$side.cpu"
  done
done
printf 'load after:  %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp/A.cpu" "$tmp/B.cpu" <<'EOF'
import statistics, sys
a = [float(x) for x in open(sys.argv[1]).read().split()]
b = [float(x) for x in open(sys.argv[2]).read().split()]
ma, mb = statistics.median(a), statistics.median(b)
print(f"median cpu_us/req  A {ma:.3f}  B {mb:.3f}  B/A {mb / ma:.4f} ({(mb / ma - 1) * 100:+.1f} %)")
EOF
