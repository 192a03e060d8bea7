#!/bin/bash
# What makes a 2x2 crossbar of hosts slower than disjoint host pairs (docs/testbed.md):
# 4 hosts at 1 Gbit/s, 32 MiB from hosts 0-1 to hosts 2-3 (16 MiB per NIC either way).
#  1. meshcast send_recv over UCX, 4 ranks per host (as crossbar.sh), with TCP congestion
#     control reno and bbr set in every host's namespace; the bytes each shaped port sent
#     and dropped during the run (tc -s).
#  2. raw TCP (tcpflows.py, no UCX), with the same number of flows through every NIC in
#     both shapes: k flows per host pair in the crossbar, 2k per pair for disjoint pairs.
# usage (root): mechanism.sh [REPS]   prints one line per run
cd "$(dirname "$0")/../../.." || exit 2
here=benchmarks/results/testbed-crossbar
tb=(benchmarks/testbed/testbed --name mcxm)
reps=${1:-3}
"${tb[@]}" down >/dev/null 2>&1
"${tb[@]}" up --topology cpu-testbed --hosts 4 --rate 1Gbit/s 2>/dev/null | tail -1
trap '"${tb[@]}" down >/dev/null 2>&1' EXIT
. /run/meshcast-testbed/mcxm/env
set_cc() {
    for h in 0 1 2 3; do ip netns exec mcxm-h$h sysctl -qw net.ipv4.tcp_congestion_control="$1"; done
}
# "sent_MB/dropped" of each host's out port (eth0) then in port (bridge side), hosts 0-3.
counters() {
    for h in 0 1 2 3; do
        for dev in "-n mcxm-h$h qdisc show dev eth0" "qdisc show dev mcxmb$h"; do
            # shellcheck disable=SC2086
            tc -s $dev | awk '/qdisc htb/ {n = 1; next}
                n && /Sent/ {match($0, /dropped [0-9]+/); printf "%s %s ", $2, substr($0, RSTART + 8, RLENGTH - 8); n = 0}'
        done
    done
}
delta() { # before after: per port "MB/drops"
    paste -d' ' <(tr ' ' '\n' <<<"$1" | grep .) <(tr ' ' '\n' <<<"$2" | grep .) |
        awk '{d[NR] = $2 - $1} END {for (i = 1; i <= NR; i += 2) printf "%s%.2f/%d", (i > 1 ? " " : ""), d[i] / 1e6, d[i + 1]; print ""}'
}
echo "ports: out0 in0 out1 in1 out2 in2 out3 in3 (MB sent/packets dropped during the run)"
for cc in reno bbr; do
    set_cc $cc
    # disjoint: 4 data flows per NIC (device i to device 8+i); crossbar: 8 (each source
    # device feeds 2 devices of one destination host, each destination host hears from 2
    # source hosts); disjoint16: disjoint host pairs with 16 flows per NIC (every source
    # device feeds all 4 devices of its paired host).
    for rph in 4 1; do
        for kind in disjoint crossbar disjoint16; do
            src=S0S1 dst=S0S1
            [ $kind = crossbar ] && src=S1S0
            [ $kind = disjoint16 ] && dst=S01R
            [ $kind = disjoint16 ] && [ $rph = 1 ] && continue
            for ((rep = 1; rep <= reps; rep++)); do
                before=$(counters)
                t=$("${tb[@]}" launch --ranks $((4 * rph)) -- build/meshcast run --shape 2048x4096 --dtype i32 \
                    --iters 7 --warmup 1 --json --src-mesh 2x4 --src-spec $src --src-devices 0-7 \
                    --dst-mesh 2x4 --dst-spec $dst --dst-devices 8-15 --topology cpu-testbed --hosts 4 \
                    --transport ucx --strategy send_recv |
                    python3 -c 'import json,sys; print(json.load(sys.stdin)["time_s"]["median"])')
                echo "ucx cc=$cc ranks/host=$rph $kind rep$rep median=$t ports(8 iterations): $(delta "$before" "$(counters)") load=$(cut -d' ' -f1 /proc/loadavg)"
            done
        done
    done
done
# Raw TCP: receivers on hosts 2 and 3, one sender process per source host.
pids=()
for h in 2 3; do
    ip netns exec mcxm-h$h python3 $here/tcpflows.py recv 5001 &
    pids+=($!)
done
sleep 1
for cc in reno bbr; do
    for k in 1 4; do
        for kind in disjoint crossbar; do
            for ((rep = 1; rep <= reps + 2; rep++)); do
                f0=() f1=()
                for ((i = 0; i < k; i++)); do
                    if [ $kind = crossbar ]; then
                        f0+=("$subnet.3:5001:$((8388608 / k))" "$subnet.4:5001:$((8388608 / k))")
                        f1+=("$subnet.3:5001:$((8388608 / k))" "$subnet.4:5001:$((8388608 / k))")
                    else
                        f0+=("$subnet.3:5001:$((8388608 / k))" "$subnet.3:5001:$((8388608 / k))")
                        f1+=("$subnet.4:5001:$((8388608 / k))" "$subnet.4:5001:$((8388608 / k))")
                    fi
                done
                start=$(python3 -c 'import time; print(time.time() + 0.5)')
                before=$(counters)
                ip netns exec mcxm-h0 python3 $here/tcpflows.py send "$start" $cc "${f0[@]}" >/tmp/mcxm.0 &
                s0=$!
                ip netns exec mcxm-h1 python3 $here/tcpflows.py send "$start" $cc "${f1[@]}" >/tmp/mcxm.1 &
                wait $s0 $!
                a=$(cat /tmp/mcxm.0 /tmp/mcxm.1)
                t=$(sort -n <<<"$a" | tail -1)
                echo "tcp cc=$cc flows/NIC=$((2 * k)) $kind rep$rep time=$t ($(tr '\n' ' ' <<<"$a")) ports: $(delta "$before" "$(counters)") load=$(cut -d' ' -f1 /proc/loadavg)"
            done
        done
    done
done
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
