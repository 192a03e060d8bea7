#!/usr/bin/env bash
# Reductions (Partial sources) executed by `meshcast run` with the naive strategy
# (send_recv on a partial source) and meshcast's reduce-scatter (the last case, an all-reduce
# where its cost model picks one stripe per device), one process (local transport), every
# dtype and op, same and disjoint meshes, uneven shards: each must exit 0 with "wrong": 0
# (bit-exact against the addends combined in the plan's order) and report max_diff_f64 (0 for
# integers, and for f64 and f32 sums of these exactly representable addends); then
# host-local pre-combining (combine trees in the JSON plan, runs verified).
# usage: bash reduce_run.sh <meshcast-binary> <source-dir>
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() {
    echo "FAIL: $*" >&2
    failed=1
}
cases=(
    "--shape 13,7 --src-mesh 2x2 --src-spec S0RP1 --dst-mesh 3 --dst-devices 4-6 --dst-spec RS0"
    "--shape 9,5 --src-mesh 2x2 --src-spec [Partial(reduce_op='OP'),Shard(1)] --dst-mesh 2x2 --dst-devices 0-3 --dst-spec S0R"
    "--shape 7,3,2 --src-mesh 2x3 --src-spec P(None,None,None,unreduced={'x','y'},reduce_op='OP') --dst-mesh 2 --dst-spec RS0R"
    "--shape 512,256 --src-mesh 2x4 --src-spec [Partial('OP'),Partial('OP')] --dst-mesh 2x4 --dst-devices 0-7 --dst-spec RR --strategy meshcast"
)
n=0
for dt in f64 f32 f16 bf16 i64 i32 i16 i8 u8 bool; do
    for op in sum avg max min; do
        [ "$dt/$op" = bool/avg ] && continue
        for c in "${cases[@]}"; do
            c=${c//OP/$op}
            [ "$op" != sum ] && [ "${c#*S0RP1}" != "$c" ] && c=${c//S0RP1/S0RP1:$op}
            strategy="--strategy send_recv"
            [[ $c == *--strategy* ]] && strategy=
            # shellcheck disable=SC2086
            if ! "$bin" run $c --dtype $dt $strategy --iters 1 --warmup 0 --json \
                >"$tmp/out" 2>"$tmp/err"; then
                fail "run $c --dtype $dt: $(cat "$tmp/err")"
                continue
            fi
            grep -q '"wrong": 0,' "$tmp/out" || fail "run $c --dtype $dt: $(cat "$tmp/out")"
            grep -q "\"reduce_op\": \"$op\"" "$tmp/out" || fail "op $op missing: $(cat "$tmp/out")"
            case $dt/$op in
            f64/sum | f32/sum | i* | u8/* | bool/*)
                grep -q '"max_diff_f64": 0}' "$tmp/out" || fail "$dt $op: $(cat "$tmp/out")"
                ;;
            esac
            n=$((n + 1))
        done
    done
done
# The table says the same in words.
"$bin" run --shape 6,4 --dtype bf16 --src-mesh 2 --src-spec RRP0 --dst-mesh 2 --dst-spec S0R \
    --strategy send_recv --iters 1 --warmup 0 >"$tmp/out" 2>&1 || fail "table run: $(cat "$tmp/out")"
grep -q "^# reduction: sum; every element bit-exact" "$tmp/out" || fail "no reduction line: $(cat "$tmp/out")"
# Host-local pre-combining: 2 hosts x 4 devices, all-reduce and reduce-scatter. The JSON
# plan (--json --flows) shows the combine trees: host combiners, whose partial crosses the
# NIC, and the reducer; each of the 4 stripes of a host's reducers pre-combines on the
# other host, so "host" occurs 8 times; avg never pre-combines. The runs verify bit for bit
# against the plan's order (f16/bf16: partials rounded when they cross the NIC).
pc="--topology cpu-testbed --hosts 2 --shape 64,32 --src-mesh 8 --src-spec [Partial(OP)]
    --dst-mesh 8 --dst-devices 0-7 --strategy meshcast"
for spec in "[Replicate()]" "[Shard(0)]"; do
    # shellcheck disable=SC2086
    "$bin" plan ${pc//OP/} --dst-spec "$spec" --json --flows >"$tmp/plan" 2>&1 ||
        fail "plan $spec: $(cat "$tmp/plan")"
    hosts=$(grep -o '"level": "host"' "$tmp/plan" | wc -l)
    [ "$hosts" -eq 8 ] || fail "$spec: $hosts host combiners, expected 8"
    grep -q '"level": "reducer", "addends": \[0,1,2,3,4,5,6,7\]' "$tmp/plan" ||
        fail "$spec: no reducer combining addends 0..7 in order"
    # shellcheck disable=SC2086
    "$bin" plan ${pc//OP/} --dst-spec "$spec" --flows >"$tmp/text" 2>&1 ||
        fail "plan --flows $spec: $(cat "$tmp/text")"
    grep -qE ' combine [0-9]+\{a0\+a1\+a2\+a3\+[4-7]\{a4\+a5\+a6\+a7\}\}$' "$tmp/text" ||
        fail "$spec: no pre-combined tree in --flows: $(cat "$tmp/text")"
    # shellcheck disable=SC2086
    "$bin" plan ${pc//OP/} --dst-spec "$spec" --dot - >"$tmp/dot" 2>&1 ||
        fail "plan --dot $spec: $(cat "$tmp/dot")"
    grep -q 'pre-combines' "$tmp/dot" || fail "$spec: --dot marks no host combiner"
    # shellcheck disable=SC2086
    "$bin" plan ${pc//OP/\'avg\'} --dst-spec "$spec" --json --flows >"$tmp/plan" 2>&1 ||
        fail "plan avg $spec: $(cat "$tmp/plan")"
    grep -q '"level": "host"' "$tmp/plan" && fail "avg $spec pre-combines"
    for dt in f32 f16 bf16 i8; do
        # shellcheck disable=SC2086
        "$bin" run ${pc//OP/} --dst-spec "$spec" --dtype $dt --iters 1 --warmup 0 --json \
            >"$tmp/out" 2>&1 || fail "run $spec $dt: $(cat "$tmp/out")"
        grep -q '"wrong": 0,' "$tmp/out" || fail "pre-combined $spec $dt: $(cat "$tmp/out")"
        n=$((n + 1))
    done
done
echo "$n reductions verified"
exit $failed
