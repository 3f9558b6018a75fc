#!/usr/bin/env bash
# bench/ab.sh — is `volley ab` (A/B until decided) calibrated: few false calls on A/A, a true
# change decided, and how many runs it takes?
#
# Starts the built-in target (`volley serve --threads 1`) pinned to SERVER_CPU and takes a pool
# of runs, interleaved A A' B …: 2·POOL runs of /delay?ms=BASE_MS (A and A', one
# configuration) and POOL runs of /delay?ms=CHANGED_MS (B, +10 % by default), each DURATION
# seconds, -c CONNECTIONS, one generator thread pinned to CLIENT_CPU. Then SEQUENCES sequences
# of each kind are replayed through `volley ab DIR_A DIR_B` (the sequential test, up to
# MAX_RUNS runs a side, metric METRIC), each of MAX_RUNS rounds of the pool drawn at random
# without replacement, a round's runs paired as `volley ab` pairs them (back to back):
#
#   A/A   A against A' of each round drawn: the share of sequences that call a difference
#         (faster or slower). Target: at most 5 %.
#   A/B   A (or A') against B of each round drawn: the share decided in the true direction
#         (slower). Target: at least 90 %.
#
# and the median pairs each used. Also LIVE sequences of `volley ab URL_A URL_B` run live (A/A
# then A/B; LIVE_KINDS=A/B for the second alone), to show the live loop stops where the replay
# does. Exit code 1 when a target is missed. KEEP=DIR keeps the pool; RECORDS=DIR reuses one.
#
# Knobs: POOL=40  SEQUENCES=200  MAX_RUNS=10  DURATION=1  CONNECTIONS=4  BASE_MS=2
#        CHANGED_MS=2.2  METRIC=p50  LIVE=3  LIVE_KINDS="A/A A/B"  SEED=1
#        VOLLEY=path (default target/$PROFILE/volley)
#        PROFILE=release  SERVER_CPU=1  CLIENT_CPU=0  RECORDS=dir  KEEP=dir
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
BENCH_TAG=ab-bench
# shellcheck source=bench/common.sh
source "$here/common.sh"

POOL=${POOL:-40} SEQUENCES=${SEQUENCES:-200} MAX_RUNS=${MAX_RUNS:-10} DURATION=${DURATION:-1}
CONNECTIONS=${CONNECTIONS:-4} BASE_MS=${BASE_MS:-2} CHANGED_MS=${CHANGED_MS:-2.2}
METRIC=${METRIC:-p50} LIVE=${LIVE:-3} SEED=${SEED:-1} PROFILE=${PROFILE:-release}
LIVE_KINDS=${LIVE_KINDS:-"A/A A/B"}
VOLLEY=${VOLLEY:-$repo/target/$PROFILE/volley} SERVER_CPU=${SERVER_CPU:-1} CLIENT_CPU=${CLIENT_CPU:-0}
RECORDS=${RECORDS:-} KEEP=${KEEP:-}

case ${1:-} in
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) die "no arguments expected (got '$1'); configure with environment variables, see --help" ;;
esac
for v in POOL SEQUENCES MAX_RUNS DURATION CONNECTIONS; do posint "${!v}" "$v"; done
[[ $LIVE =~ ^[0-9]+$ ]] || die "LIVE must be a whole number (got '$LIVE')"
for kind in $LIVE_KINDS; do
  [[ $kind == A/A || $kind == A/B ]] || die "LIVE_KINDS takes A/A and A/B (got '$kind')"
done
(( POOL >= MAX_RUNS )) || die "POOL ($POOL) must be at least MAX_RUNS ($MAX_RUNS)"
[[ -x $VOLLEY ]] || die "no volley executable at $VOLLEY (cargo build --profile $PROFILE)"
command -v python3 >/dev/null || die "python3 not found; it draws the sequences"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/volley-ab-bench.XXXXXX")
server_pid=
trap 'rc=$?; set +e; stop_pids $server_pid; rm -rf "$tmp"; exit $rc' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "volley ab bench  $(date -u '+%Y-%m-%d %H:%M:%S UTC')  $(uname -sr)  $(nproc) CPUs"
echo "volley: $("$VOLLEY" --version 2>&1 | head -n 1)"
run_one() { # URL JSON
  timeout -k 5 "$((DURATION + 30))" taskset -c "$CLIENT_CPU" "$VOLLEY" "$1" -c "$CONNECTIONS" \
    -d "${DURATION}s" --threads 1 -q --json "$2" --out "$tmp/results" >/dev/null 2>&1 </dev/null
}
serve_start "$tmp" "$SERVER_CPU"
url_a="http://127.0.0.1:$port/delay?ms=$BASE_MS"
url_b="http://127.0.0.1:$port/delay?ms=$CHANGED_MS"
records=${RECORDS:-$tmp/records}
if [[ -z $RECORDS ]]; then
  echo "pool: $((2 * POOL)) runs of A ($url_a), $POOL of B ($url_b), A A' B interleaved, ${DURATION}s, -c $CONNECTIONS"
  for (( i = 1; i <= POOL; i++ )); do
    for side in a1 a2 b; do
      url=$url_a; [[ $side == b ]] && url=$url_b
      mkdir -p "$records/$side/repeat-$i"
      run_one "$url" "$records/$side/repeat-$i/run.json" || die "run $side $i failed"
    done
    printf '.' >&2
  done
  printf '\n' >&2
  [[ -z $KEEP ]] || { mkdir -p "$KEEP" && cp -r "$records"/* "$KEEP/"; }
fi

python3 - "$VOLLEY" "$records" "$tmp/seq" "$SEQUENCES" "$MAX_RUNS" "$METRIC" "$SEED" <<'PY'
import os, random, re, statistics, subprocess, sys
volley, records, scratch, sequences, max_runs, metric, seed = sys.argv[1:8]
sequences, max_runs, rng = int(sequences), int(max_runs), random.Random(int(seed))
def pool(side):
    d = os.path.join(records, side)
    return [os.path.join(d, r, "run.json") for r in sorted(os.listdir(d))]
a1, a2, b = pool("a1"), pool("a2"), pool("b")
def replay(kind, i, left, right):
    top = os.path.join(scratch, f"{kind}-{i}")
    for side, runs in (("a", left), ("b", right)):
        for j, run in enumerate(runs, 1):
            os.makedirs(os.path.join(top, side, f"repeat-{j}"))
            os.symlink(run, os.path.join(top, side, f"repeat-{j}", "run.json"))
    out = subprocess.run([volley, "ab", os.path.join(top, "a"), os.path.join(top, "b"),
                          "--metric", metric, "--max-runs", str(max_runs)],
                         capture_output=True, text=True, check=True).stdout
    pairs = int(re.search(r"until decided: (\d+) pair", out).group(1))
    call = re.search(r"^  .*?\b(faster|slower|equivalent|undecided)\b", out, re.M).group(1)
    return call, pairs
results = {}
for kind in ("A/A", "A/B"):
    calls, used = [], []
    for i in range(sequences):
        # Pairs as `volley ab` runs them: A and B of one round of the pool, back to back.
        rounds = rng.sample(range(len(b)), max_runs)
        first = [rng.choice((a1, a2))[i] for i in rounds]
        if kind == "A/A":
            left, right = [a1[i] for i in rounds], [a2[i] for i in rounds]
        else:
            left, right = first, [b[i] for i in rounds]
        call, pairs = replay(kind.replace("/", ""), i, left, right)
        calls.append(call)
        used.append(pairs)
    counts = {c: calls.count(c) for c in ("faster", "slower", "equivalent", "undecided")}
    results[kind] = (counts, statistics.median(used))
    print(f"{kind}: {sequences} sequences of up to {max_runs} runs a side, metric {metric}: "
          f"{counts}; median pairs used {statistics.median(used):g}")
aa, ab = results["A/A"][0], results["A/B"][0]
false = (aa["faster"] + aa["slower"]) / sequences
right = ab["slower"] / sequences
print(f"A/A false calls {100 * false:.1f} % (target ≤ 5 %): {'PASS' if false <= 0.05 else 'FAIL'}")
print(f"A/B decided slower {100 * right:.1f} % (target ≥ 90 %): {'PASS' if right >= 0.9 else 'FAIL'}")
sys.exit(0 if false <= 0.05 and right >= 0.9 else 1)
PY
rc=$?
for (( i = 1; i <= LIVE; i++ )); do
  for pair in "A/A $url_a $url_a" "A/B $url_a $url_b"; do
    read -r kind left right <<< "$pair"
    [[ " $LIVE_KINDS " == *" $kind "* ]] || continue
    line=$(taskset -c "$CLIENT_CPU" "$VOLLEY" ab "$left" "$right" -c "$CONNECTIONS" \
      -d "${DURATION}s" --threads 1 -q --metric "$METRIC" --max-runs "$MAX_RUNS" \
      --out "$tmp/live" 2>/dev/null | sed -n '1,2p' | tr '\n' ' ')
    echo "live $kind $i: $line"
    echo "$kind $line" >> "$tmp/live.txt"
  done
done
# The live sequences' tally, as the replays': calls per kind and the median pairs used.
[[ -s $tmp/live.txt ]] && python3 - "$tmp/live.txt" <<'PY'
import re, statistics, sys
seen = {}
for line in open(sys.argv[1]):
    kind, rest = line.split(" ", 1)
    pairs = re.search(r"until decided: (\d+) pair", rest)
    call = re.search(r"\b(faster|slower|equivalent|undecided)\b", rest.split("until decided", 1)[-1])
    calls, used = seen.setdefault(kind, ([], []))
    calls.append(call.group(1) if call else "failed")
    used.append(int(pairs.group(1)) if pairs else 0)
for kind, (calls, used) in seen.items():
    counts = {c: calls.count(c) for c in ("faster", "slower", "equivalent", "undecided", "failed")}
    print(f"live {kind}: {len(calls)} sequences: {counts}; median pairs used {statistics.median(used):g}")
PY
exit $rc
