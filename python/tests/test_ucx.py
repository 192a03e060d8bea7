"""A cross-mesh reshard between UCX processes, verified byte-exact by every receiving rank:
4 processes through the environment rendezvous, and 2 under mpirun."""
import os
import re
import shutil
import socket
import subprocess
import sys

import meshcast as mc
from conftest import need

RANK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ucx_rank.py")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _check(outs, n):
    for r, (rc, out, err) in enumerate(outs):
        assert rc == 0, f"rank {r} exited {rc}: {err}"
        assert out.startswith(f"rank {r} of {n} (ucx): ok"), out
    # Every dst device's tile arrived and was compared: ranks owning dst devices checked bytes.
    assert sum(int(o.split(", ")[1].split()[0]) for _, o, _ in outs) == 2 * 64 * 48 * 8 * 4


def _run_env_ranks(n):
    port = _free_port()
    procs = []
    for r in range(n):
        env = dict(os.environ, MESHCAST_RANK=str(r), MESHCAST_NRANKS=str(n),
                   MESHCAST_ROOT=f"127.0.0.1:{port}")
        procs.append(subprocess.Popen([sys.executable, RANK], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=120)
            outs.append((p.returncode, out, err))
    finally:
        for p in procs:  # only the ranks this test started, by their handles
            if p.poll() is None:
                p.kill()
                p.wait()
    return outs


def test_env_rendezvous_4_processes():
    need("UCX" in mc.build_info(), "meshcast built without UCX")
    for attempt in range(3):
        outs = _run_env_ranks(4)
        # Another program may take the free port before rank 0 listens on it: try another.
        if "cannot listen on port" not in outs[0][2]:
            break
    _check(outs, 4)


def test_mpirun_2_processes():
    need("UCX" in mc.build_info() and "MPI" in mc.build_info(), "meshcast built without UCX/MPI")
    need(shutil.which("mpirun") is not None, "mpirun not found")
    flags = []
    if "Open MPI" in subprocess.run(["mpirun", "--version"], capture_output=True,
                                    text=True).stdout + mc.build_info()["MPI"]:
        # As in tests/integration: root in CI, few cores, one host, no ptrace.
        flags = ["--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader",
                 "--mca", "btl_vader_single_copy_mechanism", "none"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MESHCAST_R")}
    # Open MPI leaks at init/finalize: no leak checking in its processes (as the C tests).
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    p = subprocess.run(["mpirun", "-np", "2", *flags, sys.executable, RANK], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    # mpirun may interleave the ranks' lines (one rank's line, then the other's, then both
    # newlines): find the reports anywhere in the output
    ranks = sorted(re.findall(r"rank (\d+) of 2 \(ucx\): ok", p.stdout))
    assert ranks == ["0", "1"], p.stdout
