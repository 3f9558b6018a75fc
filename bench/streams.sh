#!/usr/bin/env bash
# bench/streams.sh — what a streamed message costs volley: worker CPU µs per message received,
# and how exact the gaps are, for Server-Sent Events and LLM (OpenAI chat-completions) streams.
#
# Starts the built-in target (`volley serve --threads 1`) pinned to SERVER_CPU and runs three
# plans of VUS streams at a time for DURATION seconds, one generator thread pinned to CLIENT_CPU:
#
#   sse-spaced  /sse with EVENTS events GAP_MS apart: one read (and one wake-up) per message;
#   llm-spaced  /v1/chat/completions streaming EVENTS tokens GAP_MS apart, read in LLM mode
#               (each chunk parsed as JSON for its content and usage);
#   sse-bulk    /sse with BULK_EVENTS events at once: many messages per read, the parser's cost.
#
# Prints per plan: messages, messages/s, worker CPU µs per message, gap p50 against GAP_MS (a
# gap p50 near 0 in a spaced plan means the one-thread target fell behind its schedule and sent
# events in bursts: lower VUS or raise GAP_MS). The
# peers the issue names (ghz for gRPC streams, Artillery for WebSocket) stream protocols volley
# does not speak yet; there is no SSE peer to hold these figures against.
#
# Knobs: VUS=20  DURATION=5  EVENTS=200  GAP_MS=2  BULK_EVENTS=2000  PROFILE=release
#        VOLLEY=path (default target/$PROFILE/volley)  SERVER_CPU=1  CLIENT_CPU=0
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
BENCH_TAG=streams-bench
# shellcheck source=bench/common.sh
source "$here/common.sh"

VUS=${VUS:-20} DURATION=${DURATION:-5} EVENTS=${EVENTS:-200} GAP_MS=${GAP_MS:-2}
BULK_EVENTS=${BULK_EVENTS:-2000} PROFILE=${PROFILE:-release}
VOLLEY=${VOLLEY:-$repo/target/$PROFILE/volley} SERVER_CPU=${SERVER_CPU:-1} CLIENT_CPU=${CLIENT_CPU:-0}
posint "$VUS" VUS; DURATION=$(secs_of "$DURATION" DURATION); posint "$EVENTS" EVENTS
posint "$BULK_EVENTS" BULK_EVENTS
[[ $GAP_MS =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "GAP_MS must be a number of ms (got '$GAP_MS')"
[[ -x $VOLLEY ]] || die "no volley executable at $VOLLEY (cargo build --profile $PROFILE)"

server_pid=""
tmp=$(mktemp -d "${TMPDIR:-/tmp}/volley-streams-bench.XXXXXX")
trap 'rc=$?; set +e; stop_pids $server_pid; rm -rf "$tmp"; exit $rc' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

serve_start "$tmp" "$SERVER_CPU"
echo "volley: $("$VOLLEY" --version 2>&1 | head -n 1); $VUS streams at a time, ${DURATION}s each"

# plan NAME STEP-LINES: a plan of VUS VUs for DURATION against the target, one streaming step.
plan() {
  cat > "$tmp/$1.toml" <<PLAN
[target]
base_url = "http://127.0.0.1:$port"
timeout = "30s"

[[scenario]]
name = "$1"
[scenario.load]
profile = "constant-vus"
vus = $VUS
duration = "${DURATION}s"

[[scenario.step]]
name = "stream"
$2
PLAN
  echo "$tmp/$1.toml"
}

measure() { # measure NAME STEP-LINES
  local file json
  file=$(plan "$1" "$2")
  json="$tmp/$1.json"
  timeout -k 5 "$((DURATION + 60))" taskset -c "$CLIENT_CPU" "$VOLLEY" run "$file" --threads 1 \
    -q --json "$json" --out "$tmp/results" || die "$1: volley failed"
  python3 - "$json" "$1" "$GAP_MS" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s, g = r["summary"]["streams"], r["generator"]
worker = sum(t["cpu_s"] for t in g["threads"])
gap = s["message_gap_ms"]["p50"]
print(f"{sys.argv[2]:<11} messages {s['messages']:>9}  {s['messages_per_s']:>10.0f} msg/s  "
      f"worker CPU {worker * 1e6 / max(s['messages'], 1):6.2f} µs/msg  gap p50 {gap} ms "
      f"(asked {sys.argv[3] if 'bulk' not in sys.argv[2] else 0})")
PY
}

measure sse-spaced "path = \"/sse?events=$EVENTS&gap_ms=$GAP_MS&ttft_ms=1\"
sse = {}"
measure llm-spaced "method = \"POST\"
path = \"/v1/chat/completions\"
headers = { \"x-volley-ttft-ms\" = \"1\", \"x-volley-gap-ms\" = \"$GAP_MS\" }
json = { model = \"m\", stream = true, max_tokens = $EVENTS, messages = [{ role = \"user\", content = \"hi\" }] }
sse = { llm = \"openai\" }"
measure sse-bulk "path = \"/sse?events=$BULK_EVENTS&gap_ms=0&ttft_ms=0\"
sse = {}"
