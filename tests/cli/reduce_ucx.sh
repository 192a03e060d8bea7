#!/usr/bin/env bash
# Reductions (Partial sources) over UCX between processes: meshcast run --transport ucx with
# 4 processes through the environment rendezvous, the naive strategy (send_recv) and
# meshcast's reduce-scatter (cases where its cost model picks one stripe per device), addends
# on different ranks (the mesh axis pending the reduction crosses ranks; the last two plans
# pre-combine inside hosts, so partials cross ranks, bf16 ones rounded), across meshes and
# on one mesh, several dtypes and ops, small chunks (many chunk messages per flow): every
# rank exits 0 and "wrong" (summed over ranks, bit-exact against the addends combined in
# the plan's order) is 0. Skips when meshcast was built without UCX.
# usage: bash reduce_ucx.sh <meshcast-binary> <source-dir>
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

cases=(
    "--shape 67,33 --dtype f32 --src-mesh 2x4 --src-spec [Partial(),Shard(0)] --dst-mesh 2x4 --dst-spec RS0"
    "--shape 40,9 --dtype bf16 --src-mesh 2x4 --src-spec [Partial('avg'),Shard(1)] --dst-mesh 4x2 --dst-spec S0R --chunk 64"
    "--shape 31,17 --dtype i8 --src-mesh 4x2 --src-spec RRP0:max --dst-mesh 2x4 --dst-spec S1S0 --src-devices 0-7 --dst-devices 8-15"
    "--shape 50,6 --dtype u8 --src-mesh 2x2x2 --src-spec P(None,'z',unreduced={'x','y'},reduce_op='min') --dst-mesh 8 --dst-spec RS0 --src-devices 0-7 --dst-devices 0-7"
    "--shape 23,23 --dtype f64 --src-mesh 4x4 --src-spec S1RP0 --dst-mesh 4x4 --dst-spec RS1 --src-devices 0-15 --dst-devices 0-15 --chunk 40"
    "--shape 1024,256 --dtype f32 --src-mesh 2x4 --src-spec [Partial(),Partial()] --dst-mesh 2x4 --dst-spec RR --src-devices 0-7 --dst-devices 0-7 --chunk 65536 --strategy meshcast"
    "--shape 300,64 --dtype bf16 --src-mesh 8 --src-spec [Partial()] --dst-mesh 8 --dst-spec [Shard(0)] --src-devices 0-7 --dst-devices 0-7 --chunk 4096 --strategy meshcast"
)
i=0
for c in "${cases[@]}"; do
    t0=$(now_ms)
    # shellcheck disable=SC2086
    strategy="--strategy send_recv"
    [[ $c == *--strategy* ]] && strategy=
    # shellcheck disable=SC2086
    run_env_ranks 4 "c$i" 100 MESHCAST_TIMEOUT=30 -- run $c $strategy --transport ucx \
        --iters 2 --warmup 1 --json
    for ((r = 0; r < 4; r++)); do
        p=${pids[$r]}
        [ "${rc_of[$p]}" = 0 ] || fail "$c: rank $r exited ${rc_of[$p]}: $(cat "$tmp/c$i.$r.err")"
    done
    grep -q '"transport": "ucx", "ranks": 4,.*"wrong": 0,' "$tmp/c$i.0.out" || fail "$c: $(cat "$tmp/c$i.0.out")"
    grep -q '"max_diff_f64"' "$tmp/c$i.0.out" || fail "$c: no max_diff_f64"
    echo "4 ranks, $c: $(($(now_ms) - t0)) ms: $(grep -o '"wrong": [0-9]*' "$tmp/c$i.0.out")"
    i=$((i + 1))
done
exit $failed
