#!/usr/bin/env bash
# bench/coverage.sh — are a run's 95 % intervals (summary.ci95) calibrated?
#
# Starts the built-in target (`volley serve --threads 1`) on 127.0.0.1, pinned to
# SERVER_CPU, and for each configuration in CONFIGS takes RUNS runs of DURATION
# seconds with one generator thread pinned to CLIENT_CPU. A configuration is
# MODEL:DIST — MODEL closed (-c CONNECTIONS), open (--rate RATE, evenly spaced arrivals)
# or poisson (--rate RATE --arrivals poisson), DIST a
# /delay distribution of volley serve: fixed, exp (exponential) or bimodal
# (90 % at BASE_MS, 10 % at ten times that), mean parameter BASE_MS.
#
# For each configuration and figure (p50, p99, rps), the pooled figure is the
# mean of the RUNS runs' figures (for rps with equal windows exactly the pooled
# rate; for a percentile, the pooled estimate up to its small-sample bias), and
# coverage is the share of runs whose interval value ± half_width holds it.
# Goal: 90–98 % for p50, p99 and rps. Prints one line per configuration and
# figure (coverage, median relative half-width, runs without an interval) and
# PASS/FAIL; exit code 1 when a figure misses the goal. RECORDS=DIR reuses the
# runs of an earlier call (KEEP=DIR keeps them).
#
# CPU steal: each run's share of the machine's CPU time taken by the hypervisor
# (generator.steal_share, or /proc/stat read around the run). Runs at or above
# STEAL_MAX (0.005, volley's cpu_steal warning) are told by volley that a rerun may
# differ by more than their intervals; where every run's steal is known, the goal is
# judged on the other runs ("steady", against their own pooled figure; shown from
# 10 such runs, judged from 20) and the line for all runs is shown beside it.
# A `speed:` line per configuration (all runs, steady runs) gives the correlation of the runs'
# p50 with their generator's CPU time per request (generator.cpu_us_per_request): how far each
# run's level followed the machine's speed during it, which its own seconds cannot show; and
# (with curl, which resets and reads the target's /stats around each run) how closely it
# followed the target's own handler time.
# `--repeat REPEAT` lines per configuration (informative, not in the exit code): how often the
# interval of a folder of REPEAT repeats (volley compare's: geometric mean, 95 % t interval of the
# runs' logarithms) holds the geometric mean of all runs, for consecutive runs (as --repeat runs
# them) and for any REPEAT runs. It is made from the spread between runs, so it sees what a
# single run's interval cannot: each run's own level.
#
# Knobs (environment variables):
#   CONFIGS="closed:fixed closed:exp closed:bimodal open:exp"   RUNS=40 (>= 20)
#   DURATION=6 (>= 5)   CONNECTIONS=8   RATE=1500   BASE_MS=2
#   VOLLEY=path (default target/$PROFILE/volley)   PROFILE=release   BUILD=auto|always|never
#   SERVER_CPU=1   CLIENT_CPU=0   RECORDS=dir   KEEP=dir   STEAL_MAX=0.005
#   REPEAT=3 (0: off; 3 to 10)
#   ORDER=interleaved|blocked (interleaved: run i of every configuration, then run
#   i+1; blocked: all runs of one configuration, then the next — each configuration's
#   runs then span minutes, not the whole bench)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
BENCH_TAG=coverage-bench
# shellcheck source=bench/common.sh
. "$here/common.sh"

CONFIGS=${CONFIGS:-closed:fixed closed:exp closed:bimodal open:exp}
RUNS=${RUNS:-40}
DURATION=${DURATION:-6}
CONNECTIONS=${CONNECTIONS:-8}
RATE=${RATE:-1500}
BASE_MS=${BASE_MS:-2}
PROFILE=${PROFILE:-release}
VOLLEY=${VOLLEY:-$repo/target/$PROFILE/volley}
BUILD=${BUILD:-auto}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
RECORDS=${RECORDS:-}
KEEP=${KEEP:-}
ORDER=${ORDER:-interleaved}
export REPEAT=${REPEAT:-3}

case ${1:-} in
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) die "no arguments expected (got '$1'); configure with environment variables, see --help" ;;
esac
posint "$RUNS" RUNS
posint "$DURATION" DURATION
posint "$CONNECTIONS" CONNECTIONS
posint "$RATE" RATE
(( RUNS >= 20 )) || die "RUNS must be at least 20 (got $RUNS): a coverage needs room to differ from 95 %"
(( DURATION >= 5 )) || die "DURATION must be at least 5 (got $DURATION): an interval needs 5 batches of a second"
[[ $BASE_MS =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "BASE_MS must be milliseconds like 2 (got '$BASE_MS')"
for c in $CONFIGS; do
  [[ $c =~ ^(closed|open|poisson):(fixed|exp|bimodal|uniform)$ ]] || die "bad configuration '$c' (MODEL:DIST, e.g. closed:exp)"
done
case $BUILD in auto|always|never) ;; *) die "BUILD must be auto, always or never (got '$BUILD')" ;; esac
[[ $REPEAT =~ ^([03-9]|10)$ ]] || die "REPEAT must be 0 (off) or 3 to 10 (got '$REPEAT')"
case $ORDER in interleaved|blocked) ;; *) die "ORDER must be interleaved or blocked (got '$ORDER')" ;; esac
[[ -z $RECORDS || -d $RECORDS ]] || die "RECORDS=$RECORDS is not a folder of runs (make one with KEEP=DIR)"
command -v taskset >/dev/null || die "taskset not found (apt-get install -y util-linux)"
command -v python3 >/dev/null || die "python3 not found (apt-get install -y python3)"
for cpu in "$SERVER_CPU" "$CLIENT_CPU"; do
  taskset -c "$cpu" true 2>/dev/null || die "cannot pin to CPU $cpu; set SERVER_CPU / CLIENT_CPU"
done

if [[ $BUILD == always || ( $BUILD == auto && ! -x $VOLLEY && $VOLLEY == "$repo/target/$PROFILE/volley" ) ]]; then
  note "building volley: cargo build --profile $PROFILE --bin volley (in $repo)"
  (cd "$repo" && cargo build --profile "$PROFILE" --bin volley) >&2 || die "cargo build failed"
fi
[[ -x $VOLLEY ]] || die "no volley executable at $VOLLEY"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/volley-coverage-bench.XXXXXX")
server_pid=
run_pid=
cleanup() {
  local rc=$?
  set +e
  stop_pids $run_pid $server_pid
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "volley coverage bench  $(date -u '+%Y-%m-%d %H:%M:%S UTC')  $(uname -sr)  $(nproc) CPUs"
echo "volley: $("$VOLLEY" --version 2>&1 | head -n 1)  ($VOLLEY)"

records=${RECORDS:-$tmp/records}
have_curl=$(command -v curl || true)
if [[ -z $RECORDS ]]; then
  serve_start "$tmp" "$SERVER_CPU"
  echo "runs: $RUNS x ${DURATION}s per configuration ($CONFIGS), /delay?ms=$BASE_MS, closed -c $CONNECTIONS," \
       "open and poisson --rate $RATE, --threads 1 (CPU $CLIENT_CPU), target on CPU $SERVER_CPU"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
  # Interleaved: run i of every configuration, then run i + 1, so that a drift of the machine
  # reaches them all alike. Blocked: one configuration's runs back to back.
  plan=()
  if [[ $ORDER == interleaved ]]; then
    for (( i = 1; i <= RUNS; i++ )); do for c in $CONFIGS; do plan+=("$c/$i"); done; done
  else
    for c in $CONFIGS; do for (( i = 1; i <= RUNS; i++ )); do plan+=("$c/$i"); done; done
  fi
  echo "order: $ORDER"
  for step in "${plan[@]}"; do
    c=${step%/*} i=${step##*/}
    {
      model=${c%%:*} dist=${c##*:}
      case $model in
        closed) load=(-c "$CONNECTIONS") ;;
        open) load=(--rate "$RATE") ;;
        poisson) load=(--rate "$RATE" --arrivals poisson) ;;
      esac
      dir="$records/${model}-${dist}/run-$i"
      mkdir -p "$dir"
      # The machine's CPU counters around the run (/proc/stat "cpu" line: the steal column is
      # time the hypervisor gave this machine's CPUs to someone else), for the judge below.
      grep '^cpu ' /proc/stat >"$dir/proc-stat-before" || true
      # The target's own handler times of this run alone (its /stats, reset before the run).
      if [[ -n $have_curl ]]; then curl -sf -X POST "http://127.0.0.1:$port/stats/reset" >/dev/null || true; fi
      timeout -k 5 "$((DURATION + 30))" taskset -c "$CLIENT_CPU" "$VOLLEY" \
        "http://127.0.0.1:$port/delay?ms=$BASE_MS&dist=$dist" "${load[@]}" -d "${DURATION}s" --threads 1 -q \
        --json "$dir/run.json" --out "$tmp/results" >"$tmp/run.log" 2>&1 </dev/null &
      run_pid=$!
      rc=0; wait "$run_pid" || rc=$?
      run_pid=
      grep '^cpu ' /proc/stat >"$dir/proc-stat-after" || true
      if [[ -n $have_curl ]]; then
        curl -sf "http://127.0.0.1:$port/stats" >"$dir/target-stats.json" || rm -f "$dir/target-stats.json"
      fi
      (( rc == 0 )) || die "run $c $i failed ($rc): $(tail -5 "$tmp/run.log")"
    }
    printf '.' >&2
  done
  printf '\n' >&2
  echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
  if [[ -n $KEEP ]]; then
    mkdir -p "$KEEP" && cp -r "$records"/. "$KEEP/" && note "records kept in $KEEP"
  fi
else
  echo "runs: reused from $RECORDS"
fi

python3 - "$records" <<'PY'
import itertools, json, math, os, random, re, statistics, sys

records = sys.argv[1]
FIGURES = (("p50", "p50_ms"), ("p99", "p99_ms"), ("rps", "rps"))
LOW, HIGH = 0.90, 0.98
NEAR = 3  # the local reference: the mean of the 2 × NEAR runs nearest in run order
failed = False

def lag1(xs):
    m = statistics.mean(xs)
    den = sum((x - m) ** 2 for x in xs)
    return sum((a - m) * (b - m) for a, b in zip(xs, xs[1:])) / den if den else 0.0

def order(d):
    found = re.search(r"(\d+)$", d)
    return int(found.group(1)) if found else 0

def steal_of(run_dir, record):
    """The run's CPU steal share: the record's (volley since 2026-11-29), else the /proc/stat
    readings this script took around the run; None when neither is there."""
    share = (record.get("generator") or {}).get("steal_share")
    if share is not None:
        return share
    try:
        before, after = (open(os.path.join(run_dir, f"proc-stat-{w}")).read().split()[1:9]
                         for w in ("before", "after"))
    except (OSError, ValueError):
        return None
    a, b = [int(x) for x in before], [int(x) for x in after]
    total = sum(b) - sum(a)
    return (b[7] - a[7]) / total if total > 0 else None

def judge(config, label, runs):
    """One line per figure: coverage of the runs' intervals against the mean of their figures."""
    global failed
    for name, field in FIGURES:
        bounds = [(s.get("ci95") or {}).get(field) for s in runs]
        have = [b for b in bounds if b]
        if not have:
            print(f"{config:<16} {label:<9} {name:<6} {'-':>9} {len(runs):>5} {'-':>9} {len(runs):>5}  FAIL (no intervals)")
            failed = True
            continue
        values = [b["value"] for b in have]
        pooled = statistics.mean(values)
        covered = sum(1 for b in have if abs(b["value"] - pooled) <= b["half_width"])
        rate = covered / len(have)
        rel = statistics.median(b["half_width"] / b["value"] for b in have if b["value"])
        ok = LOW <= rate <= HIGH and len(have) == len(runs)
        if label != "all" or not judged_by_steal:
            failed |= not ok
        # Diagnostics: the spread between runs over the runs' own standard errors (half-width
        # ÷ 2.57, t at 5 degrees of freedom, roughly), the runs' lag-1 autocorrelation in run
        # order (a drift of the machine), and coverage of the mean of the nearest runs in
        # order (a reference the drift moves with).
        se = statistics.median(b["half_width"] for b in have) / 2.57
        ratio = statistics.stdev(values) / se if se and len(values) > 1 else float("nan")
        local = 0
        for i, b in enumerate(have):
            near = [v for j, v in enumerate(values) if j != i and abs(j - i) <= NEAR]
            local += abs(b["value"] - statistics.mean(near)) <= b["half_width"] if near else 0
        print(f"{config:<16} {label:<9} {name:<6} {rate:>8.1%} {len(have):>5} {rel:>8.1%} {len(runs) - len(have):>5}"
              f" {ratio:>6.2f} {lag1(values):>6.2f} {local / len(have):>6.1%}  {'PASS' if ok else 'FAIL'}")

# Two-sided 95 % Student t quantiles by degrees of freedom (volley compare's interval).
T975 = {2: 4.3027, 3: 3.1824, 4: 2.7764, 5: 2.5706, 6: 2.4469, 7: 2.3646, 8: 2.3060, 9: 2.2622}

def repeated(config, label, runs):
    """What `--repeat REPEAT` would say: for groups of REPEAT runs, volley compare's interval of a
    folder of repeats (the geometric mean of the runs' figures, 95 % t interval of the mean of
    their logarithms), and how often it holds the geometric mean of all the runs. Two kinds of
    group: consecutive runs (as --repeat runs them, back to back; the groups overlap) and any
    REPEAT runs (every combination, 20,000 drawn when there are more). Informative: the exit code
    judges the single runs' intervals."""
    k = REPEAT
    t = T975[k - 1]
    rng = random.Random(1)
    for name, field in FIGURES:
        xs = [math.log(v) for v in (figure(s, field) for s in runs) if v]
        if len(xs) < k + 2:
            return
        ref = statistics.mean(xs)
        groups = {"consecutive": [xs[i:i + k] for i in range(len(xs) - k + 1)]}
        combos = list(itertools.combinations(range(len(xs)), k))
        if len(combos) > 20000:
            combos = rng.sample(combos, 20000)
        groups["any"] = [[xs[i] for i in c] for c in combos]
        for kind, gs in groups.items():
            half = [t * statistics.stdev(g) / math.sqrt(k) for g in gs]
            rate = sum(abs(statistics.mean(g) - ref) <= h for g, h in zip(gs, half)) / len(gs)
            verdict = "PASS" if LOW <= rate <= HIGH else "FAIL"
            print(f"{config:<16} {label:<9} {name:<6} {rate:>8.1%} {len(gs):>5} {math.expm1(statistics.median(half)):>8.1%}"
                  f"  --repeat {k}, {kind} runs  ({verdict}, not in the exit code)")

def figure(summary, field):
    """A summary's figure by the ci95 field name (p50_ms, p99_ms, rps)."""
    if field == "rps":
        return summary.get("rps")
    return (summary.get("latency_ms") or {}).get(field.removesuffix("_ms"))

def handler_p50(run_dir):
    """The target's handler-time p50 over this run alone, µs (None without /stats)."""
    try:
        return json.load(open(os.path.join(run_dir, "target-stats.json"))).get("p50_us")
    except (OSError, ValueError):
        return None

def p50_against(runs, others):
    """The runs' p50 (µs) and another figure of theirs, paired where both are known, and their
    correlation; None for fewer than 5 pairs, or either side constant."""
    pairs = [(s["latency_ms"]["p50"] * 1000, o) for s, o in zip(runs, others)
             if o is not None and (s.get("latency_ms") or {}).get("p50") is not None]
    if len(pairs) < 5 or len({o for _, o in pairs}) < 2 or len({p for p, _ in pairs}) < 2:
        return None
    p50s, theirs = [p for p, _ in pairs], [o for _, o in pairs]
    return p50s, theirs, statistics.correlation(p50s, theirs)

def speed(config, label, runs, cpu, handler):
    """How closely the runs' p50 followed the machine's speed during each run, steal or not,
    which a run's own batches cannot see: the generator's CPU time per request, and the
    target's own handler p50 (its /stats; the target runs on the same machine, so a run the
    machine is slower in is slower on both sides)."""
    found = p50_against(runs, cpu)
    if found:
        _, cs, r = found
        print(f"{config:<16} {label:<9} speed: p50 vs the generator's CPU per request, r = {r:+.2f}"
              f" ({min(cs):.1f}–{max(cs):.1f} µs/request)")
    found = p50_against(runs, handler)
    if found:
        p50s, hs, r = found
        print(f"{config:<16} {label:<9} speed: p50 vs the target's own handler p50 (/stats), r = {r:+.2f};"
              f" sd between runs {statistics.stdev(p50s):.1f} µs, the handler's {statistics.stdev(hs):.1f} µs")

# Runs whose machine lost STEAL_MAX or more of its CPU time to the hypervisor carry volley's
# cpu_steal warning, which says that a rerun may differ by more than the intervals. Where every
# run's steal is known, the goal is judged on the runs without that warning, against their own
# pooled figure ("steady"); the line for all runs is printed beside it.
STEAL_MAX = float(os.environ.get("STEAL_MAX", "0.005"))
REPEAT = int(os.environ.get("REPEAT", "3"))
print(f"{'configuration':<16} {'runs':<9} {'figure':<6} {'coverage':>9} {'runs':>5} {'median ±':>9} {'none':>5}"
      f" {'sd/se':>6} {'lag-1':>6} {'local':>7}  goal {LOW:.0%}–{HIGH:.0%}")
for config in sorted(os.listdir(records)):
    folder = os.path.join(records, config)
    runs, steal, cpu, handler = [], [], [], []
    for d in sorted(os.listdir(folder), key=order):
        path = os.path.join(folder, d, "run.json")
        if os.path.isfile(path):
            record = json.load(open(path))
            runs.append(record["summary"])
            steal.append(steal_of(os.path.join(folder, d), record))
            cpu.append((record.get("generator") or {}).get("cpu_us_per_request"))
            handler.append(handler_p50(os.path.join(folder, d)))
    judged_by_steal = bool(steal) and all(x is not None for x in steal)
    judge(config, "all", runs)
    if REPEAT:
        repeated(config, "all", runs)
    speed(config, "all", runs, cpu, handler)
    if judged_by_steal:
        def unwarned(xs):
            return [v for v, x in zip(xs, steal) if x < STEAL_MAX]
        steady = unwarned(runs)
        print(f"{config:<16} steal: median {statistics.median(steal):.2%}, max {max(steal):.2%};"
              f" {len(runs) - len(steady)} of {len(runs)} runs at or above {STEAL_MAX:.1%} (warned)")
        if len(steady) >= 10:
            judge(config, "steady", steady)
            if REPEAT:
                repeated(config, "steady", steady)
            speed(config, "steady", steady, unwarned(cpu), unwarned(handler))
        if len(steady) < 20:
            print(f"{config:<16} steady    {len(steady)} runs without steal, fewer than 20: the goal is not judged  FAIL")
            failed = True
sys.exit(1 if failed else 0)
PY
