#!/usr/bin/env bash
# meshcast run --transport ucx with 4 processes started by hand through the environment
# rendezvous (MESHCAST_RANK / MESHCAST_NRANKS / MESHCAST_ROOT, no mpirun): one rank per
# host of a 2x4 -> 2x4 case (16 devices), wrong == 0 summed over ranks, rank 0 prints the
# table and the others print nothing, every rank exits 0; then the same with --json.
# Leak checking stays on here under ASan (no MPI in these processes).
# Skips when meshcast was built without UCX.
# usage: bash run_ucx_env.sh <meshcast-binary> <source-dir>
set -u
bin=$1
tmp=$(mktemp -d)
pids=()
# shellcheck source=lib/ranks.bash
source "$(dirname "$0")/lib/ranks.bash"
trap 'kill_leftovers; rm -rf "$tmp"' EXIT
failed=0
fail() {
    echo "FAIL: $*" >&2
    failed=1
}

need_ucx

case3=(--shape 1024,1024,512 --dtype i32 --src-mesh 2x4 --src-spec RS0R --dst-mesh 2x4
    --dst-spec S0RR --max-bytes 4M --transport ucx --iters 3 --warmup 1)

check_ranks() { # <tag> <n>
    local r
    for ((r = 0; r < $2; r++)); do
        local p=${pids[$r]}
        [ "${rc_of[$p]}" = 0 ] || fail "$1: rank $r exited ${rc_of[$p]}: $(cat "$tmp/$1.$r.err")"
        [ -s "$tmp/$1.$r.err" ] && fail "$1: rank $r wrote to stderr: $(cat "$tmp/$1.$r.err")"
        if [ "$r" -gt 0 ] && [ -s "$tmp/$1.$r.out" ]; then
            fail "$1: rank $r printed: $(cat "$tmp/$1.$r.out")"
        fi
    done
}

t0=$(now_ms)
run_env_ranks 4 table 100 MESHCAST_TIMEOUT=30 -- run "${case3[@]}" --strategy broadcast_lb_order
echo "4 ranks (env rendezvous), table: $(($(now_ms) - t0)) ms"
cat "$tmp/table.0.out"
check_ranks table 4
grep -q '^# meshcast run: transport ucx, 4 rank(s)' "$tmp/table.0.out" ||
    fail "rank 0's header: $(cat "$tmp/table.0.out")"
grep -q '^case  *strategy  *bytes .*#wrong$' "$tmp/table.0.out" || fail "no table header"
row=$(grep '^run ' "$tmp/table.0.out")
[ -n "$row" ] || fail "no result row"
[ "$(awk '{print $2}' <<<"$row")" = broadcast_lb_order ] || fail "row strategy: $row"
[ "$(awk '{print $NF}' <<<"$row")" = 0 ] || fail "#wrong is not 0: $row"

t0=$(now_ms)
run_env_ranks 4 json 100 -- run "${case3[@]}" --json
echo "4 ranks (env rendezvous), --json: $(($(now_ms) - t0)) ms"
cat "$tmp/json.0.out"
check_ranks json 4
python3 - "$tmp/json.0.out" <<'PY' || fail "rank 0's --json"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("strategy", "transport", "bytes", "time_s", "algbw_GBps", "wrong", "estimate_s",
          "lower_bound_s"):
    assert k in d, k
assert d["transport"] == "ucx" and d["ranks"] == 4, d
assert d["wrong"] == 0, d
assert d["strategy"] == "meshcast", d
assert 0 < d["time_s"]["min"] <= d["time_s"]["median"] <= d["time_s"]["max"], d
PY
exit $failed
