# Type stubs of the `aisim` module (docs/python.md).
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

__version__: str
TRACE_COLUMNS: tuple

PathLike = Union[str, "os.PathLike[str]"]
#: A trace: a file, or an in-memory table (a list of dicts, a dict of
#: columns, a pandas DataFrame or any object with `columns` and `[name]`).
Trace = Union[PathLike, Sequence[Mapping[str, Any]], Mapping[str, Sequence[Any]], Any]

class Columns(Dict[str, List[Any]]):
    """Per-request records as columns: `{name: [value per request]}`."""
    @property
    def rows(self) -> int: ...
    def to_pandas(self) -> Any: ...

class Result:
    """What a job gives back."""
    job: str
    report: Any
    requests: Optional[Columns]
    spec: Optional[Dict[str, Any]]
    fitted: Optional[Any]
    best: Optional[int]
    def html(self) -> str: ...
    def report_json(self) -> str: ...
    def to_pandas(self) -> Any: ...

def replay(trace: Optional[Trace] = None, *, spec: Union[None, PathLike, Mapping[str, Any]] = None,
           **flags: Any) -> Result: ...
def replay_seeds(trace: Optional[Trace] = None, *, seeds: int,
                 spec: Union[None, PathLike, Mapping[str, Any]] = None, **flags: Any) -> Result: ...
def compare(a: Union[PathLike, Result], b: Union[PathLike, Result]) -> Result: ...
def saturate(trace: Optional[Trace] = None, *, rate_range: Optional[str] = None,
             speedup_range: Optional[str] = None, attainment: Optional[float] = None,
             tolerance: Optional[float] = None, max_probes: Optional[int] = None,
             points: Optional[int] = None, threads: Optional[int] = None,
             spec: Union[None, PathLike, Mapping[str, Any]] = None, **flags: Any) -> Result: ...
def sweep(grid: PathLike, *, out: Optional[PathLike] = None, threads: Optional[int] = None,
          full_report: bool = False, best: bool = False, slo_ttft_ms: Optional[float] = None,
          slo_tpot_ms: Optional[float] = None, slo_e2e_ms: Optional[float] = None) -> Result: ...
def validate(runs: Union[PathLike, Iterable[PathLike]], *, timing: Optional[str] = None,
             profile: Optional[str] = None) -> Result: ...
def calibrate(runs: Union[PathLike, Iterable[PathLike]], *, out: Optional[PathLike] = None,
              fit: Union[None, str, Sequence[str]] = None, timing: Optional[str] = None,
              max_evaluations: Optional[int] = None,
              holdout: Optional[Iterable[PathLike]] = None,
              cross_validate: bool = False) -> Result: ...
def optimize(*, cdf: Optional[str] = None, lam: Optional[float] = None,
             slo_ttft_ms: Optional[float] = None, b_short: Optional[int] = None,
             long_max_ctx: Optional[int] = None, gpu_short: Optional[str] = None,
             gpu_long: Optional[str] = None, seed: Optional[int] = None,
             sizing_model: Optional[str] = None, calibration: Optional[str] = None,
             samples: Optional[int] = None, no_util_cap: Optional[bool] = None,
             availability: Optional[float] = None, gamma_max: Optional[float] = None,
             p_compress: Optional[float] = None, verify_top: Optional[int] = None,
             n_sim_req: Optional[int] = None, seeds: Optional[int] = None,
             verify: Optional[str] = None, timing: Optional[str] = None) -> Result: ...
def pareto(*, cdf: Optional[str] = None, lam: Optional[float] = None,
           slo_ttft_ms: Optional[float] = None, long_max_ctx: Optional[int] = None,
           gpu_short: Optional[str] = None, gpu_long: Optional[str] = None,
           seed: Optional[int] = None, sizing_model: Optional[str] = None,
           calibration: Optional[str] = None, samples: Optional[int] = None,
           no_util_cap: Optional[bool] = None, availability: Optional[float] = None) -> Result: ...
def disagg(*, cdf: Optional[str] = None, lam: Optional[float] = None,
           gpu_prefill: Optional[str] = None, gpu_decode: Optional[str] = None,
           max_ctx: Optional[int] = None, mean_isl: Optional[float] = None,
           mean_osl: Optional[float] = None, slo_ttft_ms: Optional[float] = None,
           slo_tpot_ms: Optional[float] = None, max_prefill: Optional[int] = None,
           max_decode: Optional[int] = None, prefill_efficiency: Optional[float] = None,
           decode_efficiency: Optional[float] = None, ttft_multiplier: Optional[float] = None,
           verify: Optional[str] = None, verify_top: Optional[int] = None,
           n_sim_req: Optional[int] = None, seed: Optional[int] = None,
           kv_bytes_per_token: Optional[int] = None, kv_transfer_gb_s: Optional[float] = None,
           kv_transfer_latency_ms: Optional[float] = None, timing: Optional[str] = None) -> Result: ...
def simulate(*, n_s: int, n_l: int, router: Optional[str] = None, gamma: Optional[float] = None,
             n_req: Optional[int] = None, arrivals: Optional[str] = None,
             seeds: Optional[int] = None, warmup: Optional[float] = None,
             cdf: Optional[str] = None, lam: Optional[float] = None,
             slo_ttft_ms: Optional[float] = None, b_short: Optional[int] = None,
             long_max_ctx: Optional[int] = None, gpu_short: Optional[str] = None,
             gpu_long: Optional[str] = None, seed: Optional[int] = None) -> Result: ...
def whatif(*, lam_range: Optional[Sequence[float]] = None,
           gpu_compare: Optional[Sequence[str]] = None, cdf: Optional[str] = None,
           lam: Optional[float] = None, slo_ttft_ms: Optional[float] = None,
           b_short: Optional[int] = None, long_max_ctx: Optional[int] = None,
           gpu_short: Optional[str] = None, gpu_long: Optional[str] = None,
           seed: Optional[int] = None, sizing_model: Optional[str] = None,
           calibration: Optional[str] = None, samples: Optional[int] = None,
           no_util_cap: Optional[bool] = None, availability: Optional[float] = None) -> Result: ...
def profiles() -> Result: ...
