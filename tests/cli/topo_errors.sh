#!/usr/bin/env bash
# meshcast topo: every kind of bad input exits 2 with exactly one line on stderr
# ("meshcast: ...") and nothing on stdout.
# usage: bash topo_errors.sh <meshcast-binary> <source-dir>
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

prefix=(topo)
# shellcheck source=lib/expect.bash
source "$(dirname "$0")/lib/expect.bash"

expect_bad "unknown topology 'foo' (built-in: p3.8xlarge, dgx-a100, dgx-h100, cpu-testbed, dgx-a100-rails, dgx-h100-rails)" \
    --topology foo
expect_bad "cannot open '$tmp/none.topo'" --topology "$tmp/none.topo"
expect_bad "--topology needs a value" --topology
expect_bad "--hosts needs a value" --hosts
expect_bad "bad --hosts '0'" --hosts 0
expect_bad "bad --hosts '-1'" --hosts -1
expect_bad "bad --hosts 'x'" --hosts x
expect_bad "bad --hosts '99999999999999999999'" --hosts 99999999999999999999
expect_bad "overflows" --topology dgx-a100 --hosts 4611686018427387904
expect_bad "unknown option '--frobnicate'" --frobnicate
expect_bad "--list takes no other option" --list --topology p3.8xlarge
expect_bad "--discover and --topology exclude each other" --discover --topology p3.8xlarge

printf 'name x\nhostz 2\n' >"$tmp/bad.topo"
expect_bad "$tmp/bad.topo:2: unknown key 'hostz'" --topology "$tmp/bad.topo"
printf 'hosts 1\ndevices_per_host 1\nlink copy bandwidth=1GB/s latency=1us\n' >"$tmp/short.topo"
expect_bad "missing required key 'link intra'" --topology "$tmp/short.topo"
printf 'hosts 1\ndevices_per_host 1\nlink copy bandwidth=-1GB/s latency=1us\n' >"$tmp/neg.topo"
expect_bad "$tmp/neg.topo:3: link copy bandwidth '-1GB/s' must be positive" --topology "$tmp/neg.topo"
printf 'hosts 1\ndevices_per_host 1\nlink copy bandwidth=1Gbitz/s latency=1us\n' >"$tmp/unit.topo"
expect_bad "unknown unit 'Gbitz/s'" --topology "$tmp/unit.topo"
exit $failed
