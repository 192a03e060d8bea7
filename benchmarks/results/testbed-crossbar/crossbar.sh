#!/bin/bash
# crossbar vs disjoint: 32 MiB, hosts 0-1 -> hosts 2-3; usage: xbar.sh RATE
cd "$(dirname "$0")/../../.."
tb=benchmarks/testbed/testbed
rate=$1
$tb down >/dev/null 2>&1
$tb up --topology cpu-testbed --hosts 4 --rate $rate 2>/dev/null | tail -1
for rph in 1 4; do
  for kind in disjoint crossbar; do
    src=S0S1; [ $kind = crossbar ] && src=S1S0
    for rep in 1 2 3; do
      before=$($tb status 2>/dev/null | awk '/qdisc htb/ {n=1; next} n && /dropped/ {match($0, /dropped [0-9]+/); s+=substr($0, RSTART+8, RLENGTH-8); n=0} END {print s+0}')
      t=$($tb launch --ranks $((4*rph)) -- build/meshcast run --shape 2048x4096 --dtype i32 --iters 7 --warmup 1 --json \
        --src-mesh 2x4 --src-spec $src --src-devices 0-7 --dst-mesh 2x4 --dst-spec S0S1 --dst-devices 8-15 \
        --topology cpu-testbed --hosts 4 --transport ucx --strategy send_recv | python3 -c 'import json,sys; print(json.load(sys.stdin)["time_s"]["median"])')
      after=$($tb status 2>/dev/null | awk '/qdisc htb/ {n=1; next} n && /dropped/ {match($0, /dropped [0-9]+/); s+=substr($0, RSTART+8, RLENGTH-8); n=0} END {print s+0}')
      echo "rate=$rate ranks/host=$rph $kind rep$rep median=$t drops=$((after-before)) load=$(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
$tb status 2>/dev/null | head -40 > /tmp/xbar-status-$(echo $rate | tr / _).txt
$tb down >/dev/null 2>&1
