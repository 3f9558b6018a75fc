#!/usr/bin/env bash
# Runs volley's cargo-fuzz targets one after the other, each for a bounded time, and prints one
# line per target: runs executed, execs/s, corpus size, crashes.
#
#   bench/fuzz.sh                 # every target, 600 s each
#   bench/fuzz.sh 60              # every target, 60 s each
#   bench/fuzz.sh 600 template    # one target
#
# Needs the nightly toolchain and cargo-fuzz (`rustup toolchain install nightly`,
# `cargo install cargo-fuzz`). Each target runs in one process (`--jobs 1`), at `nice -n 19`
# (NICE=…), from the committed seeds (fuzz/seeds/TARGET, and the malformed-input corpus of the
# tests: tests/malformed/plans for plan, tests/malformed/records for record) plus what earlier
# runs found (fuzz/corpus/TARGET, not committed). A crash stops that target's run; its input is saved in
# fuzz/artifacts/TARGET/ and the script exits 1 after the others have run. Logs:
# fuzz/logs/TARGET.log. Options for libFuzzer: FUZZ_ARGS (e.g. FUZZ_ARGS=-max_len=8192).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(plan template record)
nice_level=${NICE:-19}

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "bench/fuzz.sh: needs nightly and cargo-fuzz: cargo install cargo-fuzz" >&2
    exit 2
fi

echo "building the fuzz targets (nightly, release, debug assertions, AddressSanitizer)…" >&2
nice -n "$nice_level" cargo +nightly fuzz build -O >&2

mkdir -p fuzz/logs
failed=0
printf '%-9s %8s %12s %8s %8s %6s %8s  %s\n' target seconds runs execs/s corpus cov crashes command
for t in "${targets[@]}"; do
    corpus=$root/fuzz/corpus/$t
    artifacts=$root/fuzz/artifacts/$t
    mkdir -p "$corpus" "$artifacts"
    before=$(find "$artifacts" -type f | wc -l)
    log=$root/fuzz/logs/$t.log
    dict=()
    [ -f "fuzz/dict/$t.dict" ] && dict=("-dict=$root/fuzz/dict/$t.dict")
    seeds=("$root/fuzz/seeds/$t")
    case $t in
    plan) seeds+=("$root/tests/malformed/plans") ;;
    record) seeds+=("$root/tests/malformed/records") ;;
    esac
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of libFuzzer flags
    cmd=(cargo +nightly fuzz run -O --jobs 1 "$t" "$corpus" "${seeds[@]}" --
        "-max_total_time=$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        "${dict[@]}" ${FUZZ_ARGS:-})
    start=$(date +%s)
    status=0
    nice -n "$nice_level" "${cmd[@]}" >"$log" 2>&1 || status=$?
    elapsed=$(($(date +%s) - start))
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    # The last status line: "#N DONE cov: C ft: F corp: UNITS/SIZE …" (seeds included).
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    size=$(grep -oE 'corp: [0-9]+' <<<"$last" | grep -oE '[0-9]+$' || true)
    cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | grep -oE '[0-9]+$' || true)
    crashes=$(($(find "$artifacts" -type f | wc -l) - before))
    if [ "$status" -ne 0 ] || [ "$crashes" -gt 0 ]; then
        failed=1
        [ "$crashes" -gt 0 ] || crashes="? (exit $status)"
    fi
    printf '%-9s %8s %12s %8s %8s %6s %8s  %s\n' "$t" "$elapsed" "${runs:-?}" "${rate:-?}" \
        "${size:-?}" "${cov:-?}" "$crashes" "nice -n $nice_level ${cmd[*]}"
done
if [ "$failed" -ne 0 ]; then
    echo "bench/fuzz.sh: a target crashed; see fuzz/logs/ and fuzz/artifacts/" >&2
    exit 1
fi
