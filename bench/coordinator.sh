#!/usr/bin/env bash
# bench/coordinator.sh — what a distributed test's coordinator costs per generator.
#
# Starts a real `volley coordinate` (quick-mode test, no plan, -q) on 127.0.0.1 and WORKERS
# simulated generators (threads of the ignored test `coordinator_cost_per_generator` in
# tests/coordinator_cost.rs) that register, wait for the common start, then each post one
# snapshot per second for SECONDS seconds, as a generator at RPS requests per second would
# (counters and an HDR latency histogram of RPS values spread over 0.8–20 ms, so that the
# snapshot's size is a real one's). Samples the coordinator's CPU time (/proc/PID/stat) and
# resident set (VmRSS) and prints: CPU as a share of one core, µs per snapshot and share of a
# core per generator; RSS before, at its peak and per generator; the size of one snapshot.
#
# The generators run in the same machine as the coordinator, so on a busy machine the figures
# include some scheduling noise; the coordinator itself is one process, measured alone.
#
# Knobs (environment variables):
#   WORKERS=50   SECONDS_=30 (measured seconds + 3 of start)   RPS=2000   PROFILE=ci
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/.."
export VOLLEY_BENCH_WORKERS=${WORKERS:-50}
export VOLLEY_BENCH_SECONDS=${SECONDS_:-30}
export VOLLEY_BENCH_RPS=${RPS:-2000}
cargo test --profile "${PROFILE:-ci}" --test coordinator_cost -- --ignored --nocapture \
    coordinator_cost_per_generator 2>&1 | grep -v '^running\|^test result\|^$'
