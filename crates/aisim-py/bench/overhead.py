"""The cost of a call: the demo replay from Python (`aisim.replay()`, report
and per-request columns turned into dicts) against the CLI process
(`aisim replay --quiet --format json`), each run N times after a warm-up;
prints the median and the spread (hyperfine-like).

    python crates/aisim-py/bench/overhead.py [N] [AISIM_BIN]
"""

import statistics
import subprocess
import sys
import time
from pathlib import Path

import aisim

N = int(sys.argv[1]) if len(sys.argv) > 1 else 30
ROOT = Path(__file__).resolve().parents[3]
BIN = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "target" / "release" / "aisim")


def timed(f):
    f()
    out = []
    for _ in range(N):
        t = time.perf_counter()
        f()
        out.append((time.perf_counter() - t) * 1000)
    return out


def show(name, ms):
    q = statistics.quantiles(ms, n=10)
    print(f"{name:44s} median {statistics.median(ms):7.2f} ms  "
          f"p10 {q[0]:7.2f}  p90 {q[-1]:7.2f}  (n={len(ms)})")


cli = timed(lambda: subprocess.run([BIN, "replay", "--quiet", "--format", "json"],
                                   check=True, capture_output=True))
py = timed(aisim.replay)
raw = timed(lambda: aisim._aisim.run("replay", "{}"))
show("CLI process: aisim replay --format json", cli)
show("Python: aisim.replay() (dicts and columns)", py)
show("Python: the native call alone (JSON text)", raw)
print(f"Python / CLI, medians: {statistics.median(py) / statistics.median(cli):.2f}")
