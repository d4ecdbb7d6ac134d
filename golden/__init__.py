"""Kaleido's golden model: the numpy definition every other layer is held against.

Nothing here imports the rest of the project.
"""

from .attention import DESIGNS, approx_scores, expected_scores, int_gemm, run_attention
from .config import Config
from .errors import ConfigError
from .opcount import dense_macs, oracle_macs
from .reuse import COMPUTE, FULL, PARTIAL, pair_reuse, window_reuse
from .rope import MODELS, model_partition
from .workload import load_operand, proxy_workload, quantize

__all__ = [
    "Config", "ConfigError", "MODELS", "model_partition",
    "FULL", "PARTIAL", "COMPUTE", "pair_reuse", "window_reuse",
    "int_gemm", "approx_scores", "expected_scores", "DESIGNS", "run_attention",
    "dense_macs", "oracle_macs",
    "load_operand", "proxy_workload", "quantize",
]
