#!/usr/bin/env bash
# meshcast-train as 2 UCX processes (environment rendezvous): a U-transformer pipeline
# (eager-1f1b, broadcast strategy) gives the same per-step losses, to the digit, as the same
# pipeline on a threads world and as the single-process run; rank 0 alone prints. With
# --tp 2,1 (3 processes) the same losses as on threads; too few processes exit 2.
# Exits 77 (skip) when meshcast was built without UCX.
# usage: cli_train_ucx.sh MESHCAST_TRAIN
set -u
bin=$1
tmp=$(mktemp -d)
pids=()
# shellcheck source=../../tests/cli/lib/ranks.bash
source "$(dirname "$0")/../../tests/cli/lib/ranks.bash"
trap 'kill_leftovers; rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
/usr/bin/python3 -c 'import random; random.seed(1); w = ["the ", "fox ", "jumps ", "over ", "a ", "dog. "]; print("".join(random.choice(w) for _ in range(2000)))' >"$tmp/corpus.txt"
args=(--data "$tmp/corpus.txt" --model utransformer --layers 4 --dmodel 16 --heads 2 --seq 16
    --batch 4 --microbatches 2 --eval 8 --steps 3 --json --schedule eager-1f1b
    --strategy broadcast)
losses() { grep -E '"step"|val_loss' "$1" | sed 's/,"tokens_per_s".*//'; }

"$bin" "${args[@]}" >"$tmp/single.out" || fail "single-process run"
"$bin" "${args[@]}" --stages 2 >"$tmp/threads.out" || fail "threads pipeline"
run_env_ranks 2 ucx 120 MESHCAST_TIMEOUT=30 -- "${args[@]}" --stages 2 --transport ucx
for r in 0 1; do
    p=${pids[$r]}
    grep -q 'without UCX' "$tmp/ucx.$r.err" && skip "meshcast was built without UCX"
    [ "${rc_of[$p]}" = 0 ] || fail "ucx rank $r exited ${rc_of[$p]}: $(cat "$tmp/ucx.$r.err")"
done
[ ! -s "$tmp/ucx.1.out" ] || fail "rank 1 printed: $(cat "$tmp/ucx.1.out")"
grep -q '"transport":"ucx"' "$tmp/ucx.0.out" || fail "header: $(head -1 "$tmp/ucx.0.out")"
losses "$tmp/single.out" >"$tmp/single"
[ "$(grep -c step "$tmp/single")" = 3 ] || fail "single run: $(cat "$tmp/single.out")"
losses "$tmp/threads.out" | diff "$tmp/single" - || fail "threads pipeline differs from one process"
losses "$tmp/ucx.0.out" | diff "$tmp/single" - || fail "ucx pipeline differs from one process"
cat "$tmp/ucx.0.out"

# tensor parallelism over UCX: --tp 2,1 is 3 processes; the same losses as on threads
"$bin" "${args[@]}" --stages 2 --tp 2,1 >"$tmp/tp_threads.out" || fail "threads tp 2,1"
run_env_ranks 3 tpucx 120 MESHCAST_TIMEOUT=30 -- "${args[@]}" --stages 2 --tp 2,1 --transport ucx
for r in 0 1 2; do
    p=${pids[$r]}
    [ "${rc_of[$p]}" = 0 ] || fail "tp ucx rank $r exited ${rc_of[$p]}: $(cat "$tmp/tpucx.$r.err")"
done
losses "$tmp/tpucx.0.out" | diff <(losses "$tmp/tp_threads.out") - ||
    fail "ucx tp 2,1 differs from threads"

# bad input found once the ranks met: fewer processes than stages x dp x tp; exit 2, one line
run_env_ranks 1 few 60 MESHCAST_TIMEOUT=30 -- "${args[@]}" --stages 2 --dp 2 --transport ucx
p=${pids[0]}
[ "${rc_of[$p]}" = 2 ] || fail "1 process for 4 ranks exited ${rc_of[$p]}: $(cat "$tmp/few.0.err")"
[ ! -s "$tmp/few.0.out" ] || fail "1 process for 4 ranks printed: $(cat "$tmp/few.0.out")"
[ "$(wc -l <"$tmp/few.0.err")" = 1 ] &&
    grep -q '^meshcast-train: .*need 4 ranks .* but 1 were started' "$tmp/few.0.err" ||
    fail "1 process for 4 ranks: $(cat "$tmp/few.0.err")"
echo "cli_train_ucx: ok"
