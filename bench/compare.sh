#!/usr/bin/env bash
# bench/compare.sh — can `volley compare` be fooled by noise, and does it see a real change?
#
# Starts the built-in target (`volley serve --threads 1`) on 127.0.0.1, pinned to
# SERVER_CPU, and takes REPEATS runs of /delay?ms=BASE_MS (variant A) and REPEATS
# runs of /delay?ms=CHANGED_MS (variant B), interleaved A B A B …, each DURATION
# seconds, CONNECTIONS connections, one generator thread pinned to CLIENT_CPU.
# Then, from those records alone (`volley compare … --format md`, one call per
# split, verdicts read from its Statistics table):
#
#   A/A 4 vs 4  SPLITS random disjoint splits of A's runs into 4 and 4: the share
#               of splits in which any metric is called a difference (faster,
#               slower, fewer or more errors). Target: at most 5 %.
#   A/A 5 vs 5  the same with 5 and 5.
#   A/B 5 vs 5  SPLITS random draws of 5 runs of A against 5 runs of B: the share
#               in which latency p50 is called slower (a true change of
#               CHANGED_MS/BASE_MS − 1, 10 % by default). Target: at least 80 %.
#
# STEPS=1 makes each run a plan of one scenario (`mix`, CONNECTIONS VUs, DURATION s)
# with two steps taken in turn: `same` (/delay?ms=BASE_MS in both variants) and
# `changed` (BASE_MS in A, CHANGED_MS in B), so that `volley compare` also judges
# each scenario and step: the A/A rates then count every row of the Statistics
# table, the steps' included, and the A/B rate is that of `mix / changed`'s p50.
# A/A 1 vs 1 and A/B 1 vs 1 (weak verdicts: single runs) are printed too, outside PASS/FAIL.
#
# Prints the spread of the runs, the three rates with the calls per metric, and
# PASS/FAIL per target; exit code 1 when a target is missed. RECORDS=DIR reuses
# the runs of an earlier call (KEEP=DIR keeps them), so the analysis can be
# re-run, e.g. with another volley binary, without measuring again.
#
# Knobs (environment variables):
#   REPEATS=20 (>= 16)   DURATION=1   CONNECTIONS=4   BASE_MS=2   CHANGED_MS=2.2   STEPS=0|1
#   SPLITS=200 (>= 40)   SEED=1   THRESHOLD=(volley compare's default)
#   VOLLEY=path (default target/$PROFILE/volley)   PROFILE=release   BUILD=auto|always|never
#   PORT=(free port)   SERVER_CPU=1   CLIENT_CPU=0   RECORDS=dir   KEEP=dir
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

REPEATS=${REPEATS:-20}
DURATION=${DURATION:-1}
CONNECTIONS=${CONNECTIONS:-4}
BASE_MS=${BASE_MS:-2}
CHANGED_MS=${CHANGED_MS:-2.2}
SPLITS=${SPLITS:-200}
SEED=${SEED:-1}
THRESHOLD=${THRESHOLD:-}
PROFILE=${PROFILE:-release}
VOLLEY=${VOLLEY:-$repo/target/$PROFILE/volley}
BUILD=${BUILD:-auto}
PORT=${PORT:-}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
RECORDS=${RECORDS:-}
KEEP=${KEEP:-}
STEPS=${STEPS:-0}

BENCH_TAG=compare-bench
# shellcheck source=bench/common.sh
. "$here/common.sh"

case ${1:-} in
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) die "no arguments expected (got '$1'); configure with environment variables, see --help" ;;
esac

posint "$REPEATS" REPEATS
posint "$DURATION" DURATION
posint "$CONNECTIONS" CONNECTIONS
posint "$SPLITS" SPLITS
[[ $SEED =~ ^[0-9]+$ ]] || die "SEED must be a whole number (got '$SEED')"
(( REPEATS >= 16 )) || die "REPEATS must be at least 16 (got $REPEATS): 5 vs 5 splits need room to differ"
(( SPLITS >= 40 )) || die "SPLITS must be at least 40 (got $SPLITS)"
for v in BASE_MS CHANGED_MS; do
  [[ ${!v} =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "$v must be milliseconds like 2 or 2.2 (got '${!v}')"
done
[[ $STEPS == 0 || $STEPS == 1 ]] || die "STEPS must be 0 or 1 (got '$STEPS')"
[[ -z $THRESHOLD || $THRESHOLD =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "THRESHOLD must be a percentage like 2 (got '$THRESHOLD')"
case $BUILD in auto|always|never) ;; *) die "BUILD must be auto, always or never (got '$BUILD')" ;; esac
[[ -z $PORT || $PORT =~ ^[0-9]+$ ]] || die "PORT must be a number (got '$PORT')"
[[ -z $RECORDS || -d $RECORDS/a ]] || die "RECORDS=$RECORDS holds no a/ folder of runs (make one with KEEP=DIR)"

command -v taskset >/dev/null || die "taskset not found (apt-get install -y util-linux)"
command -v python3 >/dev/null || die "python3 not found (apt-get install -y python3); it draws the splits and reads the verdicts"
for cpu in "$SERVER_CPU" "$CLIENT_CPU"; do
  taskset -c "$cpu" true 2>/dev/null || die "cannot pin to CPU $cpu (this machine has $(nproc) usable CPU(s)); set SERVER_CPU / CLIENT_CPU"
done
[[ $SERVER_CPU != "$CLIENT_CPU" ]] || note "warning: target and generator share CPU $CLIENT_CPU"

if [[ $BUILD == always || ( $BUILD == auto && ! -x $VOLLEY && $VOLLEY == "$repo/target/$PROFILE/volley" ) ]]; then
  note "building volley: cargo build --profile $PROFILE (in $repo)"
  (cd "$repo" && cargo build --profile "$PROFILE") >&2 || die "cargo build failed"
fi
[[ -x $VOLLEY ]] || die "no volley executable at $VOLLEY"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/volley-compare-bench.XXXXXX")
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

echo "volley compare bench  $(date -u '+%Y-%m-%d %H:%M:%S UTC')  $(uname -sr)  $(nproc) CPUs"
echo "volley: $("$VOLLEY" --version 2>&1 | head -n 1)  ($VOLLEY)"

# ----------------------------------------------------------------- measuring --

records=${RECORDS:-$tmp/records}
if [[ -z $RECORDS ]]; then
  serve_start "$tmp" "$SERVER_CPU" "$PORT"
  PORT=$port
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
  echo "runs: ${REPEATS} x A (/delay?ms=$BASE_MS) and ${REPEATS} x B (/delay?ms=$CHANGED_MS), interleaved A B A B …," \
       "${DURATION}s each, -c $CONNECTIONS --threads 1 (CPU $CLIENT_CPU), target on CPU $SERVER_CPU"
  for (( i = 1; i <= REPEATS; i++ )); do
    for variant in a b; do
      ms=$BASE_MS; [[ $variant == b ]] && ms=$CHANGED_MS
      dir="$records/$variant/repeat-$i"
      mkdir -p "$dir"
      test=("http://127.0.0.1:$PORT/delay?ms=$ms" -c "$CONNECTIONS" -d "${DURATION}s")
      if (( STEPS )); then
        printf '%s\n' "name = \"steps\"" "[target]" "base_url = \"http://127.0.0.1:$PORT\"" \
          "[[scenario]]" "name = \"mix\"" "[scenario.load]" "profile = \"constant-vus\"" \
          "vus = $CONNECTIONS" "duration = \"${DURATION}s\"" \
          "[[scenario.step]]" "name = \"same\"" "path = \"/delay?ms=$BASE_MS\"" \
          "[[scenario.step]]" "name = \"changed\"" "path = \"/delay?ms=$ms\"" >"$tmp/plan-$variant.toml"
        test=(run "$tmp/plan-$variant.toml")
      fi
      # In the background + wait, so that INT/TERM reach the traps at once.
      timeout -k 5 "$((DURATION + 30))" taskset -c "$CLIENT_CPU" "$VOLLEY" \
        "${test[@]}" --threads 1 -q \
        --json "$dir/run.json" --out "$tmp/results" >"$tmp/run.log" 2>&1 </dev/null &
      run_pid=$!
      rc=0; wait "$run_pid" || rc=$?
      run_pid=
      (( rc == 0 )) || die "run $variant $i failed ($rc): $(tail -5 "$tmp/run.log")"
      [[ -s $dir/run.json ]] || die "run $variant $i wrote no record"
    done
    printf '.' >&2
  done
  printf '\n' >&2
  echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
  kill -TERM "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true
  server_pid=
  if [[ -n $KEEP ]]; then
    mkdir -p "$KEEP" && cp -r "$records/a" "$records/b" "$KEEP/" && note "records kept in $KEEP"
  fi
else
  echo "runs: reused from $RECORDS"
fi

# ----------------------------------------------------------------- analysis --

STEPS=$STEPS BASE_MS=$BASE_MS CHANGED_MS=$CHANGED_MS python3 - "$VOLLEY" "$records" "$tmp/splits" "$SPLITS" "$SEED" "$THRESHOLD" <<'PY'
import json, os, random, statistics, subprocess, sys

volley, records, scratch, splits, seed, threshold = sys.argv[1:7]
splits, rng = int(splits), random.Random(int(seed))
CALLED = ("faster", "slower", "fewer errors", "more errors")

def runs(variant):
    folder = os.path.join(records, variant)
    names = sorted((d for d in os.listdir(folder) if os.path.isfile(os.path.join(folder, d, "run.json"))),
                   key=lambda d: int(d.rsplit("-", 1)[-1]) if d.rsplit("-", 1)[-1].isdigit() else 0)
    return [os.path.join(folder, d, "run.json") for d in names]

a, b = runs("a"), runs("b")
if len(a) < 10 or len(b) < 5:
    sys.exit(f"too few runs: {len(a)} of A, {len(b)} of B (10 and 5 at least)")

def spread(paths, label):
    recs = [json.load(open(p)) for p in paths]
    def line(name, values):
        m = statistics.mean(values)
        cv = statistics.stdev(values) / m * 100 if len(values) > 1 and m else 0.0
        return f"{name} {statistics.median(values):.3f} (CV {cv:.1f} %)"
    rps = [r["summary"]["rps"] for r in recs]
    p50 = [r["summary"]["latency_ms"]["p50"] for r in recs]
    p99 = [r["summary"]["latency_ms"]["p99"] for r in recs]
    errors = sum(r["summary"]["errors"] for r in recs)
    print(f"  {label}: {len(recs)} runs; median over runs: {line('req/s', rps)}, "
          f"{line('p50 ms', p50)}, {line('p99 ms', p99)}; {errors} errors")

print("spread of the runs:")
spread(a, "A")
spread(b, "B")

def folder(paths, name):
    d = os.path.join(scratch, name)
    os.makedirs(d)
    for i, p in enumerate(paths, 1):
        os.makedirs(os.path.join(d, f"repeat-{i}"))
        os.symlink(os.path.abspath(p), os.path.join(d, f"repeat-{i}", "run.json"))
    return d

def verdicts(x, y, n):
    """Metric -> verdict of `volley compare x y`, from the Statistics table of its Markdown."""
    dx, dy = folder(x, f"{n}-x"), folder(y, f"{n}-y")
    cmd = [volley, "compare", dx, dy, "--labels", "x,y", "--format", "md"]
    if threshold:
        cmd += ["--threshold", threshold]
    md = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    lines = md.split("## Statistics", 1)[1].splitlines()
    rows = [[c.strip() for c in l.strip().strip("|").split("|")] for l in lines if l.startswith("|")]
    head = rows[0]
    metric, verdict = head.index("Metric"), head.index("Verdict")
    return {r[metric]: r[verdict] for r in rows[2:] if len(r) == len(head)}

def called(v):
    return v.startswith(CALLED)

def tally(name, draw):
    per_metric, any_call, outcomes = {}, 0, []
    for k in range(splits):
        x, y = draw()
        vs = verdicts(x, y, f"{name}-{k}")
        outcomes.append(vs)
        hits = [m for m, v in vs.items() if called(v)]
        any_call += bool(hits)
        for m in hits:
            per_metric[m] = per_metric.get(m, 0) + 1
    return any_call, per_metric, outcomes

def aa(n):
    def draw():
        picked = rng.sample(a, 2 * n)
        return picked[:n], picked[n:]
    return draw

results = {}
for n in (1, 4, 5):
    hits, per_metric, _ = tally(f"aa{n}", aa(n))
    rate = hits / splits
    results[f"aa{n}"] = rate
    calls = ", ".join(f"{m} {c}" for m, c in sorted(per_metric.items())) or "none"
    print(f"A/A {n} vs {n}: {hits} of {splits} splits called a difference ({rate * 100:.1f} %); calls per metric: {calls}")

p50 = "mix / changed: latency p50 (ms)" if os.environ.get("STEPS") == "1" else "latency p50 (ms)"
_, per_metric, outcomes = tally("ab5", lambda: (rng.sample(a, 5), rng.sample(b, 5)))
found = sum(1 for vs in outcomes if vs.get(p50, "").startswith("slower"))
results["ab5"] = found / splits
kinds = {}
for vs in outcomes:
    v = vs.get(p50, "-").split(":")[0].split(" (")[0]
    kinds[v] = kinds.get(v, 0) + 1
print(f"A/B 5 vs 5 (ms={os.environ.get('BASE_MS', '2')} vs ms={os.environ.get('CHANGED_MS', '2.2')}): "
      f"{p50} called slower in {found} of {splits} draws ({found / splits * 100:.1f} %); "
      f"p50 verdicts: {', '.join(f'{k} {c}' for k, c in sorted(kinds.items()))}")
others = ", ".join(f"{m} {c}" for m, c in sorted(per_metric.items()) if m != p50) or "none"
print(f"  other metrics called in those draws: {others}")

# A/B 1 vs 1: one run of A against one of B, the weak test's power (informative; drawn after
# the 5 vs 5 draws, so that those stay as they were for a given SEED).
_, _, weak = tally("ab1", lambda: ([rng.choice(a)], [rng.choice(b)]))
one = sum(1 for vs in weak if vs.get(p50, "").startswith("slower"))
print(f"A/B 1 vs 1 (weak): {p50} called slower in {one} of {splits} draws ({one / splits * 100:.1f} %)")

ok = results["aa4"] <= 0.05 and results["aa5"] <= 0.05 and results["ab5"] >= 0.80
print(f"A/A false positives: 4 vs 4 {results['aa4'] * 100:.1f} %, 5 vs 5 {results['aa5'] * 100:.1f} % (target <= 5 %); "
      f"detection of the true change at 5 vs 5: {results['ab5'] * 100:.1f} % (target >= 80 %): "
      f"{'PASS' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY
