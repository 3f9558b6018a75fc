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
# events in bursts: lower VUS or raise GAP_MS).
#
# Then gRPC server streaming against ghz (the peer, `go install
# github.com/bojand/ghz/cmd/ghz@v0.120.0`; skipped with a note when it is not found): the same
# GRPC_STREAMS calls of volley.target.v1.Streams/Ticks, GRPC_MESSAGES ticks each sent at once,
# GRPC_CONC at a time on one connection, by ghz and by volley in turn (A B A B), each pinned to
# CLIENT_CPU; the CPU each process used (user + system, whole process, start-up included) over the
# messages it read.
#
# Then WebSocket against Artillery (the peer, `npm install -g artillery@2`; skipped with a note
# when it is not found): WS_STREAMS streams arriving over WS_SECONDS (both tools in the open
# model), each WS_MESSAGES text messages to the target's /ws echo, each sent after the reply to
# the one before; Artillery and volley in turn, CPU per message as for ghz.
#
# Knobs: VUS=20  DURATION=5  EVENTS=200  GAP_MS=2  BULK_EVENTS=2000  PROFILE=release
#        GRPC_STREAMS=400  GRPC_MESSAGES=500  GRPC_CONC=10  ROUNDS=2
#        WS_STREAMS=1000  WS_MESSAGES=100  WS_SECONDS=2  ARTILLERY=path
#        VOLLEY=path (default target/$PROFILE/volley)  GHZ=path  SERVER_CPU=1  CLIENT_CPU=0
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

# --- gRPC server streaming: volley against ghz, the same calls, alternated ---------------------
GRPC_STREAMS=${GRPC_STREAMS:-400} GRPC_MESSAGES=${GRPC_MESSAGES:-500} GRPC_CONC=${GRPC_CONC:-10}
ROUNDS=${ROUNDS:-2}
posint "$GRPC_STREAMS" GRPC_STREAMS; posint "$GRPC_MESSAGES" GRPC_MESSAGES
posint "$GRPC_CONC" GRPC_CONC; posint "$ROUNDS" ROUNDS
GHZ=${GHZ:-$(command -v ghz || echo "$HOME/go/bin/ghz")}
ARTILLERY=${ARTILLERY:-$(command -v artillery || true)}
# cpu_of CMD…: runs CMD pinned to CLIENT_CPU; prints the CPU seconds it used (user + system).
cpu_of() {
  python3 - "$CLIENT_CPU" "$@" <<'PY'
import resource, subprocess, sys
cpu, cmd = sys.argv[1], sys.argv[2:]
done = subprocess.run(["taskset", "-c", cpu] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if done.returncode != 0:
    sys.exit(f"{cmd[0]} failed: {done.stderr.decode()[-500:]}")
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.3f}")
PY
}
# ratio ROUND PEER PEER-S VOLLEY-S MESSAGES: one round's CPU µs per message, and volley/peer.
ratio() {
  python3 - "$@" <<'PY'
import sys
rnd, peer, p, v, n = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
print(f"round {rnd}: {peer} {p * 1e6 / n:6.2f} µs/msg   volley {v * 1e6 / n:6.2f} µs/msg   "
      f"volley/{peer} {v / p:.2f}")
PY
}
# messages_of JSON: the messages volley's record says it received.
messages_of() {
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['streams']['messages'])" "$1"
}

grpc_vs_ghz() {
proto="$repo/proto/volley_target.proto"
data="{\"count\": $GRPC_MESSAGES}"
cat > "$tmp/grpc.toml" <<PLAN
[target]
base_url = "http://127.0.0.1:$port"
timeout = "60s"
proto = ["$proto"]

[[scenario]]
name = "ticks"
[scenario.load]
profile = "iterations"
vus = $GRPC_CONC
iterations = $GRPC_STREAMS

[[scenario.step]]
name = "stream"
grpc = "volley.target.v1.Streams/Ticks"
json = { count = $GRPC_MESSAGES }
PLAN
messages=$((GRPC_STREAMS * GRPC_MESSAGES))
echo "gRPC server streaming: $GRPC_STREAMS streams of $GRPC_MESSAGES messages, $GRPC_CONC at a time, 1 connection"
for round in $(seq "$ROUNDS"); do
  ghz_s=$(cpu_of "$GHZ" --insecure --proto "$proto" --call volley.target.v1.Streams/Ticks \
    -d "$data" -n "$GRPC_STREAMS" -c "$GRPC_CONC" --connections 1 "127.0.0.1:$port")
  volley_s=$(cpu_of "$VOLLEY" run "$tmp/grpc.toml" --threads 1 -q --json "$tmp/grpc.json" \
    --out "$tmp/results")
  got=$(messages_of "$tmp/grpc.json")
  [[ $got == "$messages" ]] || die "volley read $got messages of $messages"
  ratio "$round" ghz "$ghz_s" "$volley_s" "$messages"
done
}

# --- WebSocket: volley against Artillery, the same arrivals and echoes, alternated -------------
# WS_STREAMS streams over WS_SECONDS (both tools open-model: the same arrivals), each sending
# WS_MESSAGES text messages to the target's /ws echo, each after the reply to the one before.
ws_vs_artillery() {
WS_STREAMS=${WS_STREAMS:-1000} WS_MESSAGES=${WS_MESSAGES:-100} WS_SECONDS=${WS_SECONDS:-2}
posint "$WS_STREAMS" WS_STREAMS; posint "$WS_MESSAGES" WS_MESSAGES; posint "$WS_SECONDS" WS_SECONDS
cat > "$tmp/ws.toml" <<PLAN
[target]
base_url = "http://127.0.0.1:$port"
timeout = "60s"

[[scenario]]
name = "echo"
[scenario.load]
profile = "constant-arrival-rate"
rate = $(python3 -c "print($WS_STREAMS / $WS_SECONDS)")
duration = "${WS_SECONDS}s"
max_vus = $WS_STREAMS

[[scenario.step]]
name = "stream"
path = "/ws"
body = "hello"
websocket = { count = $WS_MESSAGES, echo = true }
PLAN
cat > "$tmp/ws.yml" <<YAML
config:
  target: "ws://127.0.0.1:$port/ws"
  phases:
    - duration: $WS_SECONDS
      arrivalCount: $WS_STREAMS
scenarios:
  - engine: ws
    flow:
      - loop:
          - send:
              payload: "hello"
              match:
                regexp: "hello"
                value: "hello"
        count: $WS_MESSAGES
YAML
local messages=$((WS_STREAMS * WS_MESSAGES))
# Start-up: one stream of one message each (Artillery, a Node program, takes seconds of CPU to
# start; ghz and volley milliseconds), shown apart so that the per-message cost can be read
# without it.
sed "s/arrivalCount: $WS_STREAMS/arrivalCount: 1/; s/count: $WS_MESSAGES/count: 1/" "$tmp/ws.yml" \
  > "$tmp/ws1.yml"
sed "s/^rate = .*/rate = 1/; s/^duration = .*/duration = \"1s\"/; s/count = $WS_MESSAGES,/count = 1,/" \
  "$tmp/ws.toml" > "$tmp/ws1.toml"
art0=$(cpu_of "$ARTILLERY" run --quiet "$tmp/ws1.yml")
vol0=$(cpu_of "$VOLLEY" run "$tmp/ws1.toml" --threads 1 -q --json "$tmp/ws1.json" --out "$tmp/results")
echo "WebSocket echo: $WS_STREAMS streams of $WS_MESSAGES round trips over ${WS_SECONDS}s" \
  "(start-up: artillery ${art0}s, volley ${vol0}s of CPU)"
for round in $(seq "$ROUNDS"); do
  art_s=$(cpu_of "$ARTILLERY" run --quiet "$tmp/ws.yml")
  volley_s=$(cpu_of "$VOLLEY" run "$tmp/ws.toml" --threads 1 -q --json "$tmp/ws.json" \
    --out "$tmp/results")
  got=$(messages_of "$tmp/ws.json")
  [[ $got == "$messages" ]] || die "volley read $got messages of $messages"
  ratio "$round" artillery "$art_s" "$volley_s" "$messages"
  ratio "$round (less start-up)" artillery "$(python3 -c "print($art_s - $art0)")" \
    "$(python3 -c "print($volley_s - $vol0)")" "$messages"
done
}

if [[ -x $GHZ ]]; then grpc_vs_ghz; else
  echo "ghz: not found (go install github.com/bojand/ghz/cmd/ghz@v0.120.0); gRPC comparison skipped"
fi
if [[ -n $ARTILLERY ]]; then ws_vs_artillery; else
  echo "artillery: not found (npm install -g artillery@2); WebSocket comparison skipped"
fi
