"""The area table: every block through one Yosys flow, in parallel, cached.

Results are cached under ``.cache/synth/`` by the hash of the block's Verilog
and the liberty file's content, so an unchanged block is never synthesized
twice. The table follows the paper's Table 2 split: PE arrays (Kaleido's
against the baseline's) and the dispatcher (one scheduler, one matcher per
array it feeds).
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from golden.config import Config
from hw import blocks

from .flow import cache_key, synthesize

__all__ = ["block_area", "area_table", "table_markdown"]

CACHE = Path(__file__).resolve().parent.parent / ".cache" / "synth"


def block_area(name: str, cfg: Config, liberty: str | None) -> dict:
    """Area figures of one block (from the cache when its Verilog is unchanged)."""
    text = blocks.verilog(name, cfg)
    key = cache_key(text, liberty)
    path = CACHE / f"{name}-{key}.json"
    if path.exists():
        return json.loads(path.read_text())
    res = synthesize(text, blocks.top_name(name), liberty)
    res["block"] = name
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(res))
    os.replace(tmp, path)
    return res


def _job(args):
    name, cfg_json, liberty = args
    return block_area(name, Config.from_json(cfg_json), liberty)


def area_table(cfg: Config, liberty: str | None, jobs: int = 2, progress=None) -> dict:
    """Every block's area, synthesized ``jobs`` at a time, and the Table 2 split."""
    names = list(blocks.BLOCKS)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        results = {}
        for name, res in zip(names, pool.map(_job, [(n, cfg.to_json(), liberty) for n in names])):
            results[name] = res
            if progress:
                progress(name)
    metric = "area_um2" if liberty else "transistors"
    a = {n: r[metric] for n, r in results.items()}
    arrays = cfg.clusters                      # the scheduler's clusters each feed one array
    split = {
        "metric": metric,
        "arrays_fed": arrays,
        "pe_overhead": a["pe"] / a["baseline-pe"] - 1,
        "array_overhead": a["array"] / a["baseline-array"] - 1,
        "pe_arrays": arrays * a["array"],
        "baseline_pe_arrays": arrays * a["baseline-array"],
        "dispatcher": a["scheduler"] + arrays * a["matcher"],
    }
    split["dispatcher_over_arrays"] = split["dispatcher"] / split["pe_arrays"]
    return {"blocks": results, "split": split, "liberty": liberty,
            "config": json.loads(cfg.to_json())}


def table_markdown(table: dict) -> str:
    """The area table as Markdown."""
    metric = table["split"]["metric"]
    unit = "um^2" if metric == "area_um2" else "transistors (estimate, no liberty)"
    lines = [f"| block | {unit} | sequential um^2 | cells |", "|---|---:|---:|---:|"]
    for name, r in table["blocks"].items():
        seq = r.get("sequential_area_um2")
        lines.append(f"| {name} | {r[metric]:,.0f} | {'' if seq is None else f'{seq:,.0f}'} | {r['cells']:,} |")
    s = table["split"]
    lines += [
        "",
        f"| Table 2 split ({s['arrays_fed']} arrays) | {unit} |", "|---|---:|",
        f"| PE arrays (Kaleido) | {s['pe_arrays']:,.0f} |",
        f"| PE arrays (baseline) | {s['baseline_pe_arrays']:,.0f} |",
        f"| dispatcher (1 scheduler + {s['arrays_fed']} matchers) | {s['dispatcher']:,.0f} |",
        f"| PE overhead vs baseline PE | {100 * s['pe_overhead']:.1f} % |",
        f"| array overhead vs baseline array | {100 * s['array_overhead']:.1f} % |",
        f"| dispatcher / PE arrays | {100 * s['dispatcher_over_arrays']:.1f} % |",
    ]
    return "\n".join(lines)
