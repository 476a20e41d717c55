"""aisim from Python: a deterministic simulator of LLM inference serving.

One function per job of the command line, each taking the job's flags as
keyword arguments named as the CLI's in snake case (``--slo-ttft-ms 500`` is
``slo_ttft_ms=500``; a switch such as ``--no-prefix-caching`` is
``no_prefix_caching=True``; an argument left out, or ``None``, takes the CLI's
default). Each returns a :class:`Result` whose ``report`` is the dict the CLI
prints with ``--format json`` (apart from ``host``).

Errors in what was asked for raise ``ValueError`` with the CLI's message
(file, line and field of a bad trace row, the flag behind a bad value); a bug
in aisim raises ``RuntimeError``. The simulation runs without the GIL, and
Ctrl-C raises ``KeyboardInterrupt`` once the job has stopped (every replay,
alone or in a study, stops within a pass).

See docs/python.md for a walkthrough.
"""

import hashlib
import json
import os
import tempfile

from . import _aisim

__all__ = [
    "Columns",
    "Result",
    "calibrate",
    "compare",
    "disagg",
    "optimize",
    "pareto",
    "profiles",
    "replay",
    "replay_seeds",
    "saturate",
    "simulate",
    "sweep",
    "validate",
    "whatif",
    "__version__",
]

__version__ = _aisim.version()

#: The columns of a trace table: the Mooncake trace's fields.
TRACE_COLUMNS = ("timestamp", "input_length", "output_length", "hash_ids", "session_id")


class Columns(dict):
    """Per-request records as columns: ``{name: [value per request]}``.

    The fields are those of ``aisim replay --per-request`` (docs/report.md):
    ``id``, ``line``, ``ttft_ms``, ``e2e_ms``, ``outcome``, ...
    """

    def to_pandas(self):
        """The records as a ``pandas.DataFrame`` (pandas must be installed)."""
        try:
            import pandas
        except ImportError as e:  # pragma: no cover - depends on the machine
            raise ImportError("to_pandas() needs pandas: pip install pandas") from e
        return pandas.DataFrame(dict(self))

    @property
    def rows(self):
        """The number of requests."""
        return len(next(iter(self.values()), []))


class Result:
    """What a job gives back.

    Attributes:
        report: the report, equal to the CLI's ``--format json`` output.
        requests: for replays, the per-request records as :class:`Columns`;
            else ``None``.
        spec: the request that reproduces the run (for a replay, the spec
            ``--print-spec`` writes: ``aisim.replay(spec=result.spec)`` runs
            it again), or ``None``.
        fitted: calibrate's fitted coefficients (what ``--out`` writes), else
            ``None``.
        best: sweep's best run with ``best=True`` (its index in ``report``,
            ``None`` when no run holds the SLOs), else ``None``.
    """

    __slots__ = ("report", "requests", "spec", "fitted", "best", "_outcome", "job")

    def __init__(self, job, outcome):
        self.job = job
        self._outcome = outcome
        self.report = json.loads(outcome.report)
        self.requests = None if outcome.requests is None else Columns(json.loads(outcome.requests))
        self.spec = None if outcome.spec is None else json.loads(outcome.spec)
        extra = None if outcome.extra is None else json.loads(outcome.extra)
        self.fitted = extra if job == "calibrate" else None
        self.best = extra if job == "sweep" else None

    def html(self):
        """The self-contained HTML page the CLI's ``--html`` writes for this run."""
        return self._outcome.html()

    def report_json(self):
        """The report as the CLI writes it with ``--format json`` (text)."""
        return self._outcome.report

    def to_pandas(self):
        """The per-request records as a ``pandas.DataFrame`` (replays)."""
        if self.requests is None:
            raise ValueError(f"{self.job} has no per-request records")
        return self.requests.to_pandas()

    def __repr__(self):
        n = "" if self.requests is None else f", {self.requests.rows} requests"
        return f"<aisim.Result of {self.job}{n}>"


def _run(job, arguments):
    return Result(job, _aisim.run(job, json.dumps(arguments, default=_plain)))


def _plain(value):
    """JSON for what ``json`` does not know: paths, numpy scalars and arrays."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not a value aisim reads")


def _is_missing(v):
    return v is None or (isinstance(v, float) and v != v)


def _rows(table):
    """The rows of an in-memory table: a list of dicts, or columns (a dict
    of lists, a pandas DataFrame or any object with ``columns`` and
    ``[name]``)."""
    if isinstance(table, (list, tuple)):
        return [dict(r) for r in table]
    if isinstance(table, dict):
        cols = {k: list(v) for k, v in table.items()}
    elif hasattr(table, "columns") and hasattr(table, "__getitem__"):
        cols = {}
        for name in list(table.columns):
            col = table[name]
            cols[str(name)] = col.tolist() if hasattr(col, "tolist") else list(col)
    else:
        raise ValueError(
            "trace: give a file path, a list of dicts, or a table with columns "
            + ", ".join(TRACE_COLUMNS)
        )
    n = len(next(iter(cols.values()), []))
    for name, col in cols.items():
        if len(col) != n:
            raise ValueError(f"trace: column `{name}` has {len(col)} values, not {n}")
    return [{k: cols[k][i] for k in cols} for i in range(n)]


def _table_file(table):
    """The table written as a Mooncake JSONL trace (line i is row i), in a
    file named by its content, so the spec of the run names a file that
    stays and runs the same rows again."""
    lines = []
    for row in _rows(table):
        row = {k: v for k, v in row.items() if not _is_missing(v)}
        lines.append(json.dumps(row, default=_plain))
    text = "\n".join(lines) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()[:24]
    folder = os.path.join(tempfile.gettempdir(), "aisim-tables")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"table-{digest}.jsonl")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    return path


def _trace(trace, flags):
    """Puts the trace into the flags: a path as is, a table as a file."""
    if trace is None:
        return flags, None
    if isinstance(trace, (str, os.PathLike)):
        flags["trace"] = os.fspath(trace)
        return flags, None
    path = _table_file(trace)
    flags["trace"] = path
    return flags, path


def _replay_job(job, trace, spec, flags):
    flags, table = _trace(trace, dict(flags))
    if spec is not None:
        flags["spec"] = os.fspath(spec) if isinstance(spec, os.PathLike) else spec
    try:
        return _run(job, flags)
    except ValueError as e:
        if table is None:
            raise
        # A bad row names the table's row (its line in the file written from it).
        message = str(e).replace(f"{table}:", "the trace table, line ")
        raise ValueError(message.replace(table, "the trace table")) from None


def replay(trace=None, *, spec=None, **flags):
    """Replays a trace (``aisim replay``).

    Args:
        trace: a trace file (Mooncake / Bailian JSONL, Azure / BurstGPT CSV),
            or an in-memory table with the columns ``timestamp``,
            ``input_length``, ``output_length`` and optionally ``hash_ids``,
            ``session_id``, ... (a list of dicts, a dict of columns, a pandas
            DataFrame); none: the built-in demo, or a generated workload with
            ``synthetic=True``.
        spec: a spec (the dict ``Result.spec`` holds) or a spec file
            (``--spec``) that the flags refine.
        **flags: ``aisim replay``'s flags in snake case: ``workers=4``,
            ``router="kv"``, ``backend="sglang"``, ``slo_ttft_ms=500``,
            ``synthetic=True, rate=20, requests=500``, ``seeds=5``, ...
            (``aisim replay --help``). Choices are written as on the command
            line or as in the spec (``frontend="http-streaming"`` or
            ``"http_streaming"``).

    Returns:
        A :class:`Result`: ``report`` (the CLI's JSON), ``requests`` (the
        ``--per-request`` records as columns), ``spec``, ``html()``.
    """
    return _replay_job("replay", trace, spec, flags)


def replay_seeds(trace=None, *, seeds, spec=None, **flags):
    """Replays under ``seeds`` seeds (``aisim replay --seeds N``): the first
    seed's report with every figure's mean and 95 % interval in ``seeds``."""
    flags["seeds"] = seeds
    return _replay_job("replay_seeds", trace, spec, flags)


def _report_file(folder, name, x):
    if isinstance(x, Result):
        path = os.path.join(folder, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(x.report_json())
        return path
    return os.fspath(x)


def compare(a, b):
    """Compares two replays figure by figure (``aisim compare A.json B.json``).

    ``a`` and ``b`` are report files (``aisim replay --out A.json``) or
    :class:`Result` objects of :func:`replay`.
    """
    with tempfile.TemporaryDirectory(prefix="aisim-compare-") as d:
        return _run("compare", {"a": _report_file(d, "a.json", a), "b": _report_file(d, "b.json", b)})


def saturate(trace=None, *, rate_range=None, speedup_range=None, attainment=None,
             tolerance=None, max_probes=None, points=None, threads=None, spec=None, **flags):
    """The highest rate at which the SLOs hold (``aisim sweep saturate``).

    Give exactly one of ``rate_range`` (``"LO..HI"`` req/s, a generated
    workload's rate) and ``speedup_range`` (a trace's speedup); the other
    keyword arguments are the replay's flags, as for :func:`replay`. The
    report's ``status`` says whether an answer was found (the CLI exits 2
    when not; here the report is returned either way).
    """
    own = {
        "rate_range": rate_range,
        "speedup_range": speedup_range,
        "attainment": attainment,
        "tolerance": tolerance,
        "max_probes": max_probes,
        "points": points,
        "threads": threads,
    }
    flags = dict(flags)
    flags.update({k: v for k, v in own.items() if v is not None})
    return _replay_job("saturate", trace, spec, flags)


def sweep(grid, *, out=None, threads=None, full_report=False, best=False,
          slo_ttft_ms=None, slo_tpot_ms=None, slo_e2e_ms=None):
    """Runs a sweep grid (``aisim sweep plan``, ``run`` and ``merge`` in one).

    Args:
        grid: the grid file (JSON or TOML, docs/sweeps.md); its base is a
            spec (``base``), not command-line flags (``base_args``).
        out: the results folder (kept; a new temporary folder when absent).
        threads: threads [default: the machine's].
        full_report: keep each run's whole report in its result.
        best: the best run (cheapest holding the SLOs) in ``Result.best``.
        slo_ttft_ms, slo_tpot_ms, slo_e2e_ms: p99 limits for ``best``.

    Returns:
        A :class:`Result` whose ``report`` is the list of merged results (the
        lines of ``sweep merge --out``), and ``html()`` the sweep's page.
    """
    if out is None:
        out = tempfile.mkdtemp(prefix="aisim-sweep-")
    return _run("sweep", {
        "grid": os.fspath(grid),
        "out": os.fspath(out),
        "threads": threads,
        "full_report": full_report or None,
        "best": best or None,
        "slo_ttft_ms": slo_ttft_ms,
        "slo_tpot_ms": slo_tpot_ms,
        "slo_e2e_ms": slo_e2e_ms,
    })


def _paths(xs):
    if isinstance(xs, (str, os.PathLike)):
        return [os.fspath(xs)]
    return [os.fspath(x) for x in xs]


def validate(runs, *, timing=None, profile=None):
    """Replays measured runs and compares (``aisim validate RUN.json...``)."""
    return _run("validate", {"runs": _paths(runs), "timing": timing, "profile": profile})


def calibrate(runs, *, out=None, fit=None, timing=None, max_evaluations=None,
              holdout=None, cross_validate=False):
    """Fits the physics timing model to measured runs (``aisim calibrate``).

    ``Result.fitted`` holds the fitted coefficients (what ``--out`` writes;
    written to ``out`` too when given, for ``timing="fitted:FILE"``).
    """
    return _run("calibrate", {
        "runs": _paths(runs),
        "out": None if out is None else os.fspath(out),
        "fit": [fit] if isinstance(fit, str) else fit,
        "timing": timing,
        "max_evaluations": max_evaluations,
        "holdout": None if holdout is None else _paths(holdout),
        "cross_validate": cross_validate or None,
    })


def optimize(**flags):
    """Sizes a two-pool fleet (``aisim optimize``): ``cdf``, ``lam``,
    ``slo_ttft_ms``, ``b_short``, ``long_max_ctx``, ``gpu_short``,
    ``gpu_long``, ``seed``, ``sizing_model``, ``calibration``, ``samples``,
    ``no_util_cap``, ``availability``, ``gamma_max``, ``p_compress``,
    ``verify_top``, ``n_sim_req``, ``seeds``, ``verify``, ``timing``."""
    return _run("optimize", flags)


def pareto(**flags):
    """The cost / latency frontier over the short-pool threshold
    (``aisim pareto``): the planners' workload, target, pools and sizing flags."""
    return _run("pareto", flags)


def disagg(**flags):
    """Sizes disaggregated prefill and decode pools (``aisim disagg``):
    ``cdf``, ``lam``, ``gpu_prefill``, ``gpu_decode``, ``max_ctx``,
    ``slo_ttft_ms``, ``slo_tpot_ms``, ``verify="engine"``, ..."""
    return _run("disagg", flags)


def simulate(**flags):
    """Simulates a two-pool fleet request by request (``aisim simulate``):
    ``n_s`` and ``n_l`` (required), ``router``, ``gamma``, ``n_req``,
    ``arrivals``, ``seeds``, ``warmup`` and the planners' flags."""
    return _run("simulate", flags)


def whatif(**flags):
    """Fleet size and cost across arrival rates or GPUs (``aisim whatif``):
    ``lam_range=[...]``, ``gpu_compare=[...]`` and the planners' flags."""
    return _run("whatif", flags)


def profiles():
    """Hardware, models, GPU profiles and built-in workloads (``aisim profiles``)."""
    return _run("profiles", {})
