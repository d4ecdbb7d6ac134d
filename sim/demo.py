"""``kaleido demo``: the main job on the defaults, end to end, with a summary.

It grows as the project does: today the proxy workload through the golden model.
"""

from __future__ import annotations

import os

import numpy as np

from golden import Config, run_attention
from golden.workload import proxy_workload, quantize

DEMO_GRID = (4, 8, 8)
DEMO_MODEL = "wan2.1"
DEMO_DIM = 32


def demo_config() -> Config:
    return Config.for_model(DEMO_MODEL, DEMO_DIM, grid=DEMO_GRID)


def write_workload(cfg: Config, out: str) -> dict:
    """Save the proxy workload as float ``q.npy``, ``k.npy``, ``v.npy`` and return it
    quantized. The files stay float so that ``kaleido golden attention`` on them
    quantizes exactly as here and reproduces the demo's figures."""
    os.makedirs(out, exist_ok=True)
    ops = {}
    for name, x in proxy_workload(cfg).items():
        np.save(os.path.join(out, f"{name}.npy"), x)
        ops[name] = quantize(x)
    return ops


def cmd_demo(args) -> int:
    cfg = demo_config()
    T, H, W = cfg.grid
    print(f"kaleido demo: proxy workload, grid {T}x{H}x{W}, {DEMO_MODEL} partition "
          f"{cfg.partition} (D={cfg.head_dim}), F={cfg.full_bits} P={cfg.partial_bits}")
    ops = write_workload(cfg, args.out)
    (q, sq), (k, sk), (v, sv) = ops["q"], ops["k"], ops["v"]
    res = run_attention(q, k, cfg, v=v, scales=(sq, sk, sv))
    np.save(os.path.join(args.out, "scores.npy"), res.scores)
    print(f"  golden: dense {res.dense_macs} MACs, oracle {res.oracle_macs:g} "
          f"({100 * res.oracle_reduction:.1f} % fewer); output PSNR {res.psnr_db:.2f} dB, "
          f"cosine {res.cosine:.5f}")
    print(f"  files:  {args.out}/q.npy k.npy v.npy (float [N, D], the CLI quantizes them), scores.npy (S~)")
    return 0
