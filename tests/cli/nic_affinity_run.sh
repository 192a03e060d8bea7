#!/usr/bin/env bash
# NIC affinity executed: plans that cross rails through a same-host relay (PXN) or leave
# from the holder on the receiver's rail move every byte right on the local transport
# ("wrong": 0), and the relay case crosses the NIC with exactly the bytes device 3 needs.
# usage: bash nic_affinity_run.sh <meshcast-binary> <source-dir>
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$tmp/rails.topo" <<'TOPO'
hosts 2
devices_per_host 2
link copy  bandwidth=1TB/s latency=0
link intra bandwidth=1TB/s latency=0
nic count=2 in=1GB/s out=1GB/s latency=10us
nic-affinity map=0,1 rails
TOPO

# device 0 holds 4 KiB; device 1 needs the first half, device 3 (other host, rail 1) the
# second: 0 -> 1 -> 3, 2 KiB over the NIC
"$bin" run --shape 1024 --dtype f32 --src-mesh 1 --src-spec S0 --src-devices 0 --dst-mesh 2 \
    --dst-spec S0 --dst-devices 1,3 --topology "$tmp/rails.topo" --transport local --iters 2 \
    --json >"$tmp/relay.json" || fail "relay run exited $?"
grep -q '"wrong": 0,' "$tmp/relay.json" || fail "relay: $(cat "$tmp/relay.json")"
grep -q '"nic_bytes": 2048,' "$tmp/relay.json" || fail "relay nic bytes: $(cat "$tmp/relay.json")"

# every dgx-h100 device needs a slice of every host's piece (scale benchmark g0005's shape)
"$bin" run --shape 64,512,128 --dtype bf16 --src-mesh 2x8 --src-spec RS0R --src-devices 0-15 \
    --dst-mesh 2x8 --dst-spec RRS10 --dst-devices 16-31 --topology dgx-h100-rails --hosts 4 \
    --transport local --iters 1 --json >"$tmp/dgx.json" || fail "dgx run exited $?"
grep -q '"wrong": 0,' "$tmp/dgx.json" || fail "dgx: $(cat "$tmp/dgx.json")"
echo ok
