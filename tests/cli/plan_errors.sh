#!/usr/bin/env bash
# meshcast plan / bench: every kind of bad input exits 2 with exactly one line on stderr
# ("meshcast: ...") naming the problem, and nothing on stdout.
# usage: bash plan_errors.sh <meshcast-binary> <source-dir>
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

# A valid case; each check overrides one option (the last occurrence wins).
base=(--shape 64,64 --dtype f32 --src-mesh 2x4 --src-spec S0R --dst-mesh 2x4 --dst-spec RS0)

prefix=()
# shellcheck source=lib/expect.bash
source "$(dirname "$0")/lib/expect.bash"

# the base case itself is fine
if ! "$bin" plan "${base[@]}" >/dev/null 2>"$tmp/err"; then
    echo "FAIL: base case: $(cat "$tmp/err")" >&2
    exit 1
fi

# malformed specs (each notation), axis out of range, axis used twice, rank mismatch
expect_bad "malformed" plan "${base[@]}" --src-spec S0X
expect_bad "malformed" plan "${base[@]}" --dst-spec "[Shard(0), Replicate()"
expect_bad "malformed" plan "${base[@]}" --dst-spec "P('x', None"
expect_bad "src spec" plan "${base[@]}" --src-spec S0X
expect_bad "dst spec" plan "${base[@]}" --dst-spec S0X
expect_bad "out of range" plan "${base[@]}" --src-spec S2R
expect_bad "out of range" plan "${base[@]}" --dst-spec "[Shard(2), Replicate()]"
expect_bad "unknown mesh axis 'q'" plan "${base[@]}" --dst-spec "P('q', None)"
expect_bad "used twice" plan "${base[@]}" --src-spec S0S0
expect_bad "used twice" plan "${base[@]}" --dst-spec "P('x', 'x')"
expect_bad "3 entries for a 2-d tensor" plan "${base[@]}" --src-spec S0RR
expect_bad "for a 2-d tensor" plan "${base[@]}" --dst-spec R

# meshes that do not fit the topology: 16 devices on one 4-device host
expect_bad "do not fit" plan "${base[@]}" --hosts 1
expect_bad "do not fit" plan "${base[@]}" --src-devices 0-7 --dst-devices 100-107 --hosts 4
expect_bad "mesh" plan "${base[@]}" --src-devices 0-6
expect_bad "more than once" plan "${base[@]}" --src-devices 0-3,0-3

# zero, negative and overflowing sizes
expect_bad "dimension 0 is 0" plan "${base[@]}" --shape 0,4
expect_bad "negative" plan "${base[@]}" --shape -4,4
expect_bad "too large" plan "${base[@]}" --shape 99999999999999999999,4
expect_bad "does not fit in 2^63 bytes" plan "${base[@]}" --shape 4611686018427387904,4 --dtype f64
expect_bad "positive" plan "${base[@]}" --src-mesh 0x4
expect_bad "bad --hosts" plan "${base[@]}" --hosts 0

# unknown dtype, strategy, topology
expect_bad "dtype 'f33': unknown" plan "${base[@]}" --dtype f33
expect_bad "unknown strategy 'nosuch'" plan "${base[@]}" --strategy nosuch
expect_bad "unknown topology 'nosuch'" plan "${base[@]}" --topology nosuch
expect_bad "cannot open '$tmp/none.topo'" plan "${base[@]}" --topology "$tmp/none.topo"

# missing and unknown options, options without values
expect_bad "missing --shape" plan --src-mesh 2x4 --src-spec S0R --dst-mesh 2x4 --dst-spec RS0
expect_bad "missing --dst-mesh" plan --shape 4,4 --src-mesh 2x4 --src-spec S0R --dst-spec RS0
expect_bad "missing --src-spec" plan --shape 4,4 --src-mesh 2x4 --dst-mesh 2x4 --dst-spec RS0
expect_bad "unknown option '--frob'" plan "${base[@]}" --frob
expect_bad "--shape needs a value" plan --shape

# bench: unknown suite
expect_bad "unknown suite 'nosuch'" bench --suite nosuch
exit $failed
