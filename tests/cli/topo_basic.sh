#!/usr/bin/env bash
# meshcast topo: default profile, --list, --topology by name and file, --hosts, and the
# output parses back (it is .topo text plus a comment summary).
# usage: bash topo_basic.sh <meshcast-binary> <source-dir>
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin" topo >"$tmp/out" 2>"$tmp/err" || fail "meshcast topo exited $?"
[ -s "$tmp/err" ] && fail "stderr not empty: $(cat "$tmp/err")"
grep -qx 'name p3.8xlarge' "$tmp/out" || fail "default is not p3.8xlarge"
grep -qx 'nic count=1 in=10Gbit/s out=10Gbit/s latency=25us' "$tmp/out" || fail "p3 nic line"
grep -q '^# p3.8xlarge: 5 hosts x 4 devices = 20 devices; per host 1 NIC, in 10 Gbit/s, out 10 Gbit/s$' \
    "$tmp/out" || fail "summary line: $(tail -1 "$tmp/out")"

"$bin" topo --list >"$tmp/list" || fail "--list exited $?"
[ "$(tr '\n' ' ' <"$tmp/list")" = "p3.8xlarge dgx-a100 dgx-h100 cpu-testbed dgx-a100-rails dgx-h100-rails " ] ||
    fail "--list: $(cat "$tmp/list")"

for name in $(cat "$tmp/list"); do
    "$bin" topo --topology "$name" >"$tmp/$name.topo" || fail "--topology $name exited $?"
    grep -qx "name $name" "$tmp/$name.topo" || fail "$name: name line"
    # The printed text loads back as a file and prints identically.
    "$bin" topo --topology "$tmp/$name.topo" >"$tmp/again" || fail "reload $name"
    diff -u "$tmp/$name.topo" "$tmp/again" >&2 || fail "$name does not round-trip"
    # The source profile file loads by path too.
    "$bin" topo --topology "$src/topology/clusters/$name.topo" >/dev/null || fail "path $name"
done

"$bin" topo --topology=dgx-a100 --hosts 16 >"$tmp/out" || fail "--hosts 16 exited $?"
grep -qx 'hosts 16' "$tmp/out" || fail "--hosts not applied"
grep -q '^# dgx-a100: 16 hosts x 8 devices = 128 devices; per host 8 NICs, in 1600 Gbit/s, out 1600 Gbit/s$' \
    "$tmp/out" || fail "dgx-a100 summary: $(tail -1 "$tmp/out")"

# MESHCAST_CLUSTERS_DIR adds named profiles.
sed 's/^name .*/name lab/' "$src/topology/clusters/cpu-testbed.topo" >"$tmp/lab.topo"
MESHCAST_CLUSTERS_DIR=$tmp "$bin" topo --topology lab >"$tmp/out" || fail "CLUSTERS_DIR lab"
grep -qx 'name lab' "$tmp/out" || fail "CLUSTERS_DIR profile not used"

"$bin" topo --help >/dev/null || fail "--help exited $?"
exit 0
