#!/usr/bin/env bash
# The step simulator against the recorded testbed runs (issue 14's acceptance: the simulator
# predicts the measured configurations within 20%): benchmarks/testbed/bench-trainer-sim
# --resimulate re-simulates the 23 traces recorded on an idle machine with the current
# simulator (no testbed), and at least 20 of them must come within 20% with their own costs;
# bad input exits 2 with one line. trainer-transfers reads the same traces.
# usage: cli_train_resim.sh MESHCAST_TRAIN
set -euo pipefail
train=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rec=$root/benchmarks/results/trainer/sim-testbed-idle
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
bench=$root/benchmarks/testbed/bench-trainer-sim
MESHCAST_TRAIN_BIN=$train "$bench" --resimulate "$rec" --out "$tmp/out" >"$tmp/log" ||
    fail "--resimulate exited $?"
table=$tmp/out/table.txt
[ "$(grep -c -- '-[12] ' "$table")" -eq 23 ] || fail "not 23 runs in $table"
grep -q '^utransformer-send_recv-eager-1f1b-1 .*(its costs.* trace is missing)' "$table" ||
    fail "the run whose other costs' trace is lost is not marked"
own=$(sed -n 's/^# costs own  : \([0-9]*\) of 23 runs within.*/\1/p' "$table")
[ -n "$own" ] && [ "$own" -ge 20 ] || fail "own costs: ${own:-?} of 23 within 20%"
grep -q '^nic .* burst=131072$' "$tmp/out/rank-per-host.topo" ||
    fail "the re-simulated topology lacks the testbed's burst"
grep -q 're-simulated from the traces recorded in' "$table" || fail "the table does not say where from"
cmp -s "$tmp/out/sim.jsonl" /dev/null && fail "empty sim.jsonl"

bad() { # substring, args...
    local want=$1
    shift
    set +e
    MESHCAST_TRAIN_BIN=$train "$bench" "$@" >"$tmp/o" 2>"$tmp/e"
    local rc=$?
    set -e
    [ $rc -eq 2 ] || fail "$* exited $rc, not 2"
    [ "$(wc -l <"$tmp/e")" -eq 1 ] || fail "$*: $(wc -l <"$tmp/e") lines on stderr"
    grep -q "$want" "$tmp/e" || fail "$*: '$(cat "$tmp/e")' lacks '$want'"
}
bad "has no rank-per-host.topo or traces" --resimulate "$tmp/nothing" --out "$tmp/x"
mkdir -p "$tmp/rec/traces"
cp "$rec/rank-per-host.topo" "$tmp/rec/"
bad "must not be the recorded directory" --resimulate "$tmp/rec" --out "$tmp/rec/../rec"
bad "unknown option '--bogus'" --bogus

"$root/benchmarks/testbed/trainer-transfers" "$rec" >"$tmp/tr" || fail "trainer-transfers exited $?"
grep -q '^# replay bucket: median |error|' "$tmp/tr" || fail "trainer-transfers printed no replay"
echo "PASS: resimulated 23 recorded runs, $own within 20% with own costs"
