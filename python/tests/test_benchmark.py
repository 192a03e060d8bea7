"""benchmarks/python_overhead.py keeps working (a short run; timings are not checked here)."""
import os
import subprocess
import sys

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks",
                     "python_overhead.py")


def test_overhead_benchmark_smoke():
    out = subprocess.run([sys.executable, BENCH, "--rounds", "3", "--calls", "5"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines()[2:]}
    assert set(rows) == {"c", "numpy", "torch", "tiles"}
    assert all(float(v[0]) > 0 for v in rows.values())
