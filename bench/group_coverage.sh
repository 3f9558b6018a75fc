#!/usr/bin/env bash
# bench/group_coverage.sh — are a step's own 95 % intervals (groups[].ci95) calibrated?
#
# Starts the built-in target (`volley serve --threads 1`) on 127.0.0.1 pinned to SERVER_CPU and
# runs one plan RUNS times (generator --threads 1 pinned to CLIENT_CPU): one scenario of VUS
# VUs for DURATION seconds whose steps are /delay?ms=1&dist=DIST and /delay?ms=5&dist=DIST.
# For each step and figure (p50, p99, rps) the pooled figure is the mean of the runs' figures
# (as bench/coverage.sh judges a run's), and coverage is the share of runs whose step interval
# holds it; shown for all runs and for those without a cpu_steal warning. Goal 90–98 %.
#
# Knobs: RUNS=20 DURATION=6 VUS=8 DIST=exp VOLLEY=target/ci/volley SERVER_CPU=1 CLIENT_CPU=0
#        KEEP=dir (keep the records) RECORDS=dir (judge kept records again, run nothing)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
BENCH_TAG=group-coverage
# shellcheck source=bench/common.sh
source "$here/common.sh"

RUNS=${RUNS:-20}
DURATION=${DURATION:-6}
VUS=${VUS:-8}
DIST=${DIST:-exp}
VOLLEY=${VOLLEY:-$repo/target/ci/volley}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
KEEP=${KEEP:-}
RECORDS=${RECORDS:-}

[[ $RUNS =~ ^[0-9]+$ ]] && (( RUNS >= 10 )) || die "RUNS must be at least 10 (got $RUNS)"
[[ $DURATION =~ ^[0-9]+$ ]] && (( DURATION >= 5 )) || die "DURATION must be at least 5 (an interval needs 5 batches)"
[[ $DIST =~ ^(fixed|exp|bimodal|uniform)$ ]] || die "DIST must be fixed, exp, bimodal or uniform (got '$DIST')"
[[ -x $VOLLEY ]] || die "no volley executable at $VOLLEY (cargo build --profile ci)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/volley-group-coverage.XXXXXX")
server_pid=
cleanup() {
  local rc=$?
  set +e
  stop_pids $server_pid
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

records=${RECORDS:-${KEEP:-$tmp/records}}
if [[ -z $RECORDS ]]; then
  mkdir -p "$records"
  serve_start "$tmp" "$SERVER_CPU"
  cat > "$tmp/plan.toml" <<EOF
name = "group-coverage"
[target]
base_url = "http://127.0.0.1:$port"
[[scenario]]
name = "mix"
[scenario.load]
profile = "constant-vus"
vus = $VUS
duration = "${DURATION}s"
[[scenario.step]]
name = "fast"
path = "/delay?ms=1&dist=$DIST"
[[scenario.step]]
name = "slow"
path = "/delay?ms=5&dist=$DIST"
EOF
  echo "group coverage bench  $(date -u '+%Y-%m-%d %H:%M:%S UTC')  $RUNS x ${DURATION}s, $VUS VUs, dist=$DIST"
  for (( i = 1; i <= RUNS; i++ )); do
    timeout -k 5 "$((DURATION + 30))" taskset -c "$CLIENT_CPU" "$VOLLEY" run "$tmp/plan.toml" \
      --threads 1 --json "$records/run$i.json" --out "$tmp/results" -q >/dev/null 2>&1 || true
    [[ -s $records/run$i.json ]] || die "run $i wrote no record"
  done
fi

python3 - "$records" <<'PY'
import json, pathlib, statistics, sys
runs = [json.loads(p.read_text()) for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json"))]
steady = [r for r in runs if not any(w.get("code") == "cpu_steal" for w in r.get("warnings", []))]
print(f"runs: {len(runs)} ({len(steady)} without a cpu_steal warning)")
print(f"{'step':6} {'figure':6} {'all runs':>10} {'unwarned':>10} {'median ±':>9}")
for step in ("fast", "slow"):
    for field in ("p50_ms", "p99_ms", "rps"):
        line = []
        widths = []
        for group in (runs, steady):
            bounds = []
            for r in group:
                g = next(g for g in r["groups"] if g["kind"] == "step" and g["name"] == step)
                b = (g.get("ci95") or {}).get(field)
                if b:
                    bounds.append(b)
            if len(bounds) < 5:
                line.append("-")
                continue
            pooled = statistics.mean(b["value"] for b in bounds)
            held = sum(1 for b in bounds if abs(b["value"] - pooled) <= b["half_width"])
            line.append(f"{100 * held / len(bounds):.1f} %")
            widths += [b["half_width"] / b["value"] for b in bounds]
        rel = f"{100 * statistics.median(widths):.2f} %" if widths else "-"
        print(f"{step:6} {field:6} {line[0]:>10} {line[1]:>10} {rel:>9}")
PY
