"""The Python module against the CLI: every function once, each report equal
to what the release binary prints with `--format json` for the same
arguments (apart from `host`), in-memory tables equal to the same trace from
a file, a bad row naming its line, and Ctrl-C.

Run by .ci/run after `pip install ./crates/aisim-py`; the binary is
AISIM_BIN, else target/release/aisim of this repository.
"""

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

import aisim

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(os.environ.get("AISIM_BIN", ROOT / "target" / "release" / "aisim"))
FIXTURES = ROOT / "fixtures"
MOONCAKE = FIXTURES / "traces" / "mooncake_small.jsonl"


def cli(*args, check=True):
    """The CLI's `--format json` output for `args`, parsed."""
    p = subprocess.run([str(BIN), *map(str, args), "--format", "json"],
                       capture_output=True, text=True, cwd=ROOT)
    if check:
        assert p.returncode == 0, p.stderr
    return json.loads(p.stdout) if p.stdout.strip() else None


def cli_error(*args):
    p = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2, (p.returncode, p.stderr)
    return p.stderr


def without_host(report):
    report = dict(report)
    report.pop("host", None)
    return report


def same(py, cli_json):
    assert without_host(py.report) == without_host(cli_json)


@pytest.fixture(scope="session", autouse=True)
def binary():
    assert BIN.is_file(), f"{BIN}: build it with cargo build --release -p aisim-cli"


def test_replay_of_the_demo_equals_the_cli():
    r = aisim.replay()
    same(r, cli("replay", "--quiet"))
    assert len(r.requests["id"]) == r.report["outcomes"]["offered"]
    assert "ttft_ms" in r.requests
    page = r.html()
    assert page.startswith("<!DOCTYPE html>") or page.lower().startswith("<!doctype html>")


def test_replay_flags_are_the_clis_in_snake_case():
    r = aisim.replay(MOONCAKE, workers=2, router="kv", slo_ttft_ms=500, block_size=16)
    same(r, cli("replay", MOONCAKE, "--workers", 2, "--router", "kv",
                "--slo-ttft-ms", 500, "--block-size", 16, "--quiet"))
    # Choices as the CLI writes them.
    http = aisim.replay(MOONCAKE, frontend="http-streaming", kv_transfer_mode=None)
    same(http, cli("replay", MOONCAKE, "--frontend", "http-streaming", "--quiet"))
    # The spec reproduces the run.
    again = aisim.replay(spec=r.spec)
    assert without_host(again.report) == without_host(r.report)


def test_synthetic_replay_and_per_request_records_equal_the_clis(tmp_path):
    flags = dict(synthetic=True, requests=300, rate=30, input_tokens="uniform:100:900",
                 output_tokens="64", seed=7, router="random", workers=3)
    r = aisim.replay(**flags)
    per = tmp_path / "per.jsonl"
    args = ["replay", "--synthetic", "--requests", 300, "--rate", 30, "--input-tokens",
            "uniform:100:900", "--output-tokens", 64, "--seed", 7, "--router", "random",
            "--workers", 3, "--quiet", "--per-request", per]
    same(r, cli(*args))
    rows = [json.loads(l) for l in per.read_text().splitlines()]
    assert len(rows) == len(r.requests["id"])
    assert list(r.requests) == list(rows[0])  # the columns in the file's order
    for name in rows[0]:
        assert r.requests[name] == [row[name] for row in rows], name


def test_replay_seeds_equals_the_cli():
    r = aisim.replay_seeds(seeds=3, synthetic=True, requests=100, rate=20)
    same(r, cli("replay", "--seeds", 3, "--synthetic", "--requests", 100, "--rate", 20, "--quiet"))
    assert r.report["seeds"] is not None


def test_html_is_the_pages_of_the_cli(tmp_path):
    page = tmp_path / "page.html"
    subprocess.run([str(BIN), "replay", "--quiet", "--html", str(page), "--format", "json"],
                   check=True, capture_output=True, cwd=ROOT)
    assert aisim.replay().html() == page.read_text()


def test_compare_of_two_routers_equals_the_cli(tmp_path):
    a = aisim.replay(MOONCAKE, router="round_robin", workers=2)
    b = aisim.replay(MOONCAKE, router="kv", workers=2)
    fa, fb = tmp_path / "a.json", tmp_path / "b.json"
    fa.write_text(a.report_json())
    fb.write_text(b.report_json())
    c = aisim.compare(fa, fb)
    same(c, cli("compare", fa, fb))
    # Results compare as their reports do (written to files named a.json, b.json).
    assert aisim.compare(a, b).report["metrics"] == c.report["metrics"]
    assert c.html()


def test_saturate_equals_the_cli():
    kw = dict(synthetic=True, requests=200, input_tokens="512", output_tokens="32",
              slo_ttft_ms=1000, rate_range="2..60", max_probes=6, threads=2)
    r = aisim.saturate(**kw)
    out = cli("sweep", "saturate", "--synthetic", "--requests", 200, "--input-tokens", 512,
              "--output-tokens", 32, "--slo-ttft-ms", 1000, "--rate-range", "2..60",
              "--max-probes", 6, "--threads", 2, "--quiet", check=False)
    same(r, out)


def test_sweep_equals_plan_run_merge(tmp_path):
    grid = FIXTURES / "sweep" / "trace-grid.json"
    r = aisim.sweep(grid, out=tmp_path / "py", threads=2, best=True, slo_ttft_ms=5000)
    assert r.best is None or 0 <= r.best < len(r.report)
    plan = tmp_path / "plan.jsonl"
    subprocess.run([str(BIN), "sweep", "plan", str(grid), "--out", str(plan)], check=True,
                   capture_output=True, cwd=ROOT)
    subprocess.run([str(BIN), "sweep", "run", str(plan), "--out", str(tmp_path / "cli"),
                    "--threads", "2", "--quiet"], check=True, capture_output=True, cwd=ROOT)
    merged = tmp_path / "merged.jsonl"
    subprocess.run([str(BIN), "sweep", "merge", str(tmp_path / "cli"), "--out", str(merged)],
                   check=True, capture_output=True, cwd=ROOT)
    lines = [json.loads(l) for l in merged.read_text().splitlines()]
    strip = lambda rs: [{k: v for k, v in x.items() if k not in ("host", "wall_ms")} for x in rs]
    assert strip(r.report) == strip(lines)
    assert r.html()


@pytest.fixture(scope="module")
def measured_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("measured")
    run = d / "run.json"
    subprocess.run([str(BIN), "measured", "import", str(FIXTURES / "measured_small.jsonl"),
                    "--out", str(run), "--profile", "h100/llama-3.1-8b"],
                   check=True, capture_output=True, cwd=ROOT)
    return run


def test_validate_equals_the_cli(measured_run):
    same(aisim.validate(measured_run), cli("validate", measured_run))


def test_calibrate_equals_the_cli(measured_run, tmp_path):
    fitted = tmp_path / "fitted.json"
    r = aisim.calibrate(measured_run, max_evaluations=20, out=tmp_path / "py-fitted.json")
    out = cli("calibrate", measured_run, "--max-evaluations", 20, "--out", fitted)
    strip = lambda x: {k: v for k, v in x.items() if k not in ("host", "wall_ms", "elapsed_ms")}
    assert strip(r.report) == strip(out)
    assert strip(r.fitted) == strip(json.loads(fitted.read_text()))


def test_optimize_equals_the_cli():
    same(aisim.optimize(lam=100, slo_ttft_ms=400, verify_top=0),
         cli("optimize", "--lam", 100, "--slo-ttft-ms", 400, "--verify-top", 0))


def test_pareto_equals_the_cli():
    same(aisim.pareto(cdf="lmsys", lam=100), cli("pareto", "--cdf", "lmsys", "--lam", 100))


def test_disagg_equals_the_cli():
    same(aisim.disagg(lam=50, slo_tpot_ms=80), cli("disagg", "--lam", 50, "--slo-tpot-ms", 80))


def test_simulate_equals_the_cli():
    r = aisim.simulate(n_s=6, n_l=3, n_req=3000, lam=50)
    same(r, cli("simulate", "--n-s", 6, "--n-l", 3, "--n-req", 3000, "--lam", 50))
    assert r.html()


def test_whatif_equals_the_cli():
    same(aisim.whatif(lam_range=[50, 100, 200]),
         cli("whatif", "--lam-range", "50,100,200"))


def test_profiles_equals_the_cli():
    same(aisim.profiles(), cli("profiles"))


ROWS = [
    {"timestamp": 0, "input_length": 900, "output_length": 20, "hash_ids": [1, 2]},
    {"timestamp": 150, "input_length": 400, "output_length": 8, "hash_ids": [1]},
    {"timestamp": 400, "input_length": 1500, "output_length": 30, "hash_ids": [3, 4, 5]},
    {"timestamp": 900, "input_length": 300, "output_length": 12, "hash_ids": [6]},
]


class Frame:
    """A DataFrame-shaped object: `columns` and `[name]`, as pandas has."""

    def __init__(self, rows):
        self.columns = list(rows[0])
        self._cols = {c: [r[c] for r in rows] for c in self.columns}

    def __getitem__(self, name):
        return self._cols[name]


def comparable(r):
    rep = without_host(r.report)
    text = json.dumps(rep)
    path = r.spec["workload"]["path"]
    return json.loads(text.replace(json.dumps(path)[1:-1], "TRACE"))


def test_tables_equal_the_same_trace_from_a_file(tmp_path):
    f = tmp_path / "t.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    from_file = aisim.replay(f, workers=2)
    for table in (ROWS, Frame(ROWS), {c: [r[c] for r in ROWS] for c in ROWS[0]}):
        r = aisim.replay(table, workers=2)
        assert comparable(r) == comparable(from_file)
        assert r.requests == from_file.requests


def test_a_bad_row_raises_value_error_naming_its_line(tmp_path):
    bad = [dict(r) for r in ROWS]
    bad[2]["input_length"] = -5
    f = tmp_path / "bad.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in bad))
    with pytest.raises(ValueError) as e:
        aisim.replay(f)
    message = str(e.value)
    assert message.startswith(f"{f}:3: field `input_length`"), message
    # The CLI says the same.
    assert message in cli_error("replay", f, "--quiet")
    with pytest.raises(ValueError) as e:
        aisim.replay(bad)
    assert str(e.value).startswith("the trace table, line 3: field `input_length`"), str(e.value)


def test_bad_flags_raise_value_error_with_the_clis_message():
    with pytest.raises(ValueError) as e:
        aisim.replay(router_temperature=0.5)
    assert str(e.value) in cli_error("replay", "--router-temperature", 0.5, "--quiet")
    with pytest.raises(ValueError, match="unknown replay flag `wrokers`"):
        aisim.replay(wrokers=2)
    with pytest.raises(ValueError) as e:
        aisim.optimize(verify_top=0, seeds=2)
    assert str(e.value) in cli_error("optimize", "--verify-top", 0, "--seeds", 2)


def interrupted_within(seconds, call):
    """Sends SIGINT after 0.5 s; the call must raise KeyboardInterrupt, and
    return (its job stopped: the module waits for it) within `seconds`.
    Python's own Ctrl-C handler is put in place for the call: a shell that
    starts a job in the background (`.ci/run &`) starts it with SIGINT
    ignored, and Python then leaves it ignored."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
        started = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            call()
        timer.join()
        assert time.monotonic() - started < seconds
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_interrupts_a_long_replay():
    interrupted_within(5, lambda: aisim.replay(
        synthetic=True, requests=5_000_000, rate=2000, input_tokens="256",
        output_tokens="16", workers=8))


def test_ctrl_c_interrupts_a_study_of_many_runs():
    # Many seeds on the pool's threads: the flag reaches every worker.
    interrupted_within(5, lambda: aisim.replay_seeds(
        seeds=64, synthetic=True, requests=200_000, rate=2000, input_tokens="256",
        output_tokens="16", workers=4))
    interrupted_within(5, lambda: aisim.simulate(n_s=40, n_l=10, n_req=3_000_000, seeds=2, lam=400))
    interrupted_within(5, lambda: aisim.saturate(
        synthetic=True, requests=500_000, input_tokens="256", output_tokens="16",
        slo_ttft_ms=1000, rate_range="100..5000", threads=2))


def test_the_gil_is_released_while_simulating():
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.005)

    t = threading.Thread(target=tick)
    t.start()
    try:
        aisim.replay(synthetic=True, requests=20000, rate=500, input_tokens="256",
                     output_tokens="16", workers=4)
    finally:
        stop.set()
        t.join()
    assert len(ticks) > 5
