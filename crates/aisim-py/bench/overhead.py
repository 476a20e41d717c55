"""The cost of a call: the demo replay from Python against the CLI process,
each run N times after a warm-up, interleaved (so a busy machine slows all
alike); prints the median and the 10th and 90th percentiles.

    python crates/aisim-py/bench/overhead.py [N] [AISIM_BIN]

`aisim.replay()` also keeps the latency curves (for html()) and every
request's record as columns, so the CLI is timed both plain and with
`--per-request` and `--html` (the same work, written to files).
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aisim

N = int(sys.argv[1]) if len(sys.argv) > 1 else 30
ROOT = Path(__file__).resolve().parents[3]
BIN = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "target" / "release" / "aisim")
tmp = tempfile.mkdtemp(prefix="aisim-overhead-")

cases = {
    "CLI process: aisim replay --format json": lambda: subprocess.run(
        [BIN, "replay", "--quiet", "--format", "json"], check=True, capture_output=True),
    "CLI process: + --per-request F --html F": lambda: subprocess.run(
        [BIN, "replay", "--quiet", "--format", "json",
         "--per-request", os.path.join(tmp, "r.jsonl"), "--html", os.path.join(tmp, "p.html")],
        check=True, capture_output=True),
    "Python: aisim.replay() (dicts, columns)": aisim.replay,
    "Python: the native call alone (JSON text)": lambda: aisim._aisim.run("replay", "{}"),
}
times = {name: [] for name in cases}
for f in cases.values():
    f()
for _ in range(N):
    for name, f in cases.items():
        t = time.perf_counter()
        f()
        times[name].append((time.perf_counter() - t) * 1000)
for name, ms in times.items():
    q = statistics.quantiles(ms, n=10)
    print(f"{name:44s} median {statistics.median(ms):7.2f} ms  p10 {q[0]:7.2f}  p90 {q[-1]:7.2f}  (n={N})")
med = {k: statistics.median(v) for k, v in times.items()}
names = list(cases)
print(f"aisim.replay() / CLI with the same outputs, medians: {med[names[2]] / med[names[1]]:.2f}")
