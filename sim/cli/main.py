"""The ``kaleido`` command: the parser, and the one place errors become one line.

Every figure a user needs comes out of a subcommand as a file or one JSON
object on stdout. Every error is one line on stderr and a non-zero exit (2 for
the user's input, 1 for a fault of ours); subcommands check their output
places before any work and write files atomically, so a failed run never
leaves a half-written file. Subcommands live in their own modules; this one
imports them, and none of them imports this one.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from golden import ConfigError, plugins
from golden.config import Part
from golden.workload import WorkloadError
from sim.errors import UserError

from ..workload import DEFAULT_CLIP
from . import (
    attention_cmd,
    blocks_cmd,
    capture_cmd,
    estimate_cmd,
    explore_cmd,
    fpga_cmd,
    golden_cmd,
    linear_cmd,
    plugin_cmd,
    quality_cmd,
    report_cmd,
    structure_cmd,
    workload_cmd,
)
from .options import add_knobs, knobs_of

__all__ = ["main", "build_parser"]

#: Options whose value is a comma list that may start with a minus (``--grid -2,4,4``),
#: which argparse would otherwise take for an option.
_LIST_OPTIONS = ("--grid", "--partition", "--crop")
_NEGATIVE_LIST = re.compile(r"^-\d[\d,\-]*$")
#: Options that take several lists (``--thresholds 5,3 -1,2``), each value its own ``--opt=value``
#: (the option appends), so that a negative one reaches the option's own check.
_MULTI_LIST_OPTIONS = ("--thresholds",)
_LIST_VALUE = re.compile(r"^-?\d[\d,\-]*$")


class _Parser(argparse.ArgumentParser):
    # argparse prints a usage block and exits; the contract is one line on stderr.
    def error(self, message):
        raise UserError(f"{self.prog}: {message}")


def _join_negative_lists(argv: list[str]) -> list[str]:
    """``--grid -2,4,4`` as ``--grid=-2,4,4``, so the value reaches the grid's own check."""
    out = []
    i = 0
    while i < len(argv):
        if argv[i] in _LIST_OPTIONS and i + 1 < len(argv) and _NEGATIVE_LIST.match(argv[i + 1]):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        elif argv[i] in _MULTI_LIST_OPTIONS and i + 1 < len(argv) and _LIST_VALUE.match(argv[i + 1]):
            option, i = argv[i], i + 1
            while i < len(argv) and _LIST_VALUE.match(argv[i]):
                out.append(f"{option}={argv[i]}")
                i += 1
        else:
            out.append(argv[i])
            i += 1
    return out


def _plugins_first(argv: list[str]) -> list[str]:
    """Every ``--plugin MODULE`` (or ``--plugin=MODULE``) moved before the subcommand,
    where the parser takes it: a plugin is imported before any command runs,
    wherever on the line it was given."""
    front, rest = [], []
    i = 0
    while i < len(argv):
        if argv[i] == "--plugin" and i + 1 < len(argv):
            front += argv[i:i + 2]
            i += 2
            continue
        (front if argv[i].startswith("--plugin=") else rest).append(argv[i])
        i += 1
    return front + rest


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kaleido", description="Generate and verify the Kaleido accelerator.")
    p.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                   help="import MODULE first, so that the dispatchers and PE kinds it registers "
                        "(golden.dispatchers.register, golden.pe_contract.register) are names a design point "
                        "may give (--dispatcher, --pe-kind); repeatable (default: none)")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    golden_cmd.register(sub, _Parser)
    blocks_cmd.register(sub, _Parser)
    fpga_cmd.register(sub, _Parser)
    linear_cmd.register(attention_cmd.register(sub, _Parser), _Parser)
    report_cmd.register(sub)
    workload_cmd.register(sub, _Parser)
    structure_cmd.register(sub, _Parser)
    estimate_cmd.register(sub, _Parser)
    explore_cmd.register(sub, _Parser)
    capture_cmd.register(sub, _Parser)
    quality_cmd.register(sub, _Parser)
    plugin_cmd.register(sub, _Parser)

    dm = sub.add_parser("demo", help="the main job on the defaults, with a summary")
    dm.add_argument("--out", default="out/demo", metavar="DIR", help="output folder (default out/demo)")
    dm.add_argument("--workload", default=DEFAULT_CLIP, metavar="proxy|CLIP|PATH",
                    help=f"proxy, a bundled clip (bigbuckbunny, bikes, carphone) or a video file "
                         f"(default {DEFAULT_CLIP})")
    dm.add_argument("--simulator", choices=["verilator", "icarus"],
                    help="default: verilator when it can run here, else icarus")
    add_knobs(dm, *knobs_of(Part.WORKLOAD))
    dm.set_defaults(func=_lazy("sim.cli.demo", "cmd_demo"))
    return p


def _lazy(module: str, name: str):
    # Subcommands import their (heavy) modules only when run.
    def run(args):
        import importlib
        return getattr(importlib.import_module(module), name)(args)
    return run


def _check_record(args, argv: list) -> None:
    """A ``--record AREA`` that would clobber another command's figures is refused
    before the run, not after it."""
    if getattr(args, "record", None):
        import shlex

        from sim.experiments.published import check_record
        try:
            check_record(args.record, shlex.join(["kaleido", *argv]))
        except ValueError as exc:
            raise UserError(str(exc)) from None


def _check_library_env() -> None:
    """``$KALEIDO_LIBERTY``, where set, names a library the flow has: refused in one
    line before any work otherwise (never passed over for the default)."""
    if os.environ.get("KALEIDO_LIBERTY"):
        from synth.flow import default_liberty
        from synth.kits import LibraryError
        try:
            default_liberty()
        except LibraryError as exc:
            raise UserError(str(exc)) from None


def _say_what_is_computed() -> None:
    """A line on stderr before each synthesis, timing or energy result that is not
    yet cached: the first run of a design point maps its blocks, for minutes."""
    import re

    from hw import cache

    kinds = {".v": "mapping", ".json": "timing", "-energy": "energy per action of"}

    def say(path) -> None:
        m = re.match(r"^(.*?)-[0-9a-f]{24}(.*)$", path.name)
        if m and path.parent.name != "verilog":     # emitting takes seconds, not minutes
            kind = next((v for k, v in kinds.items() if m[2].startswith(k)), "synthesizing")
            where = "area of" if "synth" in path.parent.name else kind
            print(f"kaleido: {where} {m[1]} (once; cached after)", file=sys.stderr, flush=True)
    cache.on_make = say


def main(argv=None) -> int:
    argv = _plugins_first(_join_negative_lists(list(sys.argv[1:] if argv is None else argv)))
    try:
        args = build_parser().parse_args(argv)
        try:
            plugins.load(args.plugin)
        except (ImportError, ValueError) as exc:
            raise UserError(str(exc)) from None
        _check_library_env()
        _check_record(args, argv)
        _say_what_is_computed()
        return args.func(args)
    except BrokenPipeError:
        # The reader went away (`| head -1`): what it took is what it wanted.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (UserError, ConfigError, WorkloadError) as exc:
        msg = str(exc)
        print(msg if msg.startswith("kaleido") else f"kaleido: {msg}", file=sys.stderr)
        return 2
    except OSError as exc:
        # A place the system refused (permissions, a full disk): the user's to mend.
        where = f" {exc.filename}" if exc.filename else ""
        print(f"kaleido: cannot use{where}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print("kaleido: out of memory: use a smaller grid", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kaleido: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if _out_of_memory(exc):
            # Yosys (Amaranth's, or the synthesis flow's) could not get its memory:
            # the machine's limit, as a MemoryError is, not a fault of ours.
            print("kaleido: out of memory: Yosys could not reserve its memory; use a smaller design point "
                  "or a machine with more", file=sys.stderr)
            return 2
        # Not the user's fault: still one line, with the way to see more.
        if os.environ.get("KALEIDO_DEBUG"):
            raise
        print(f"kaleido: internal error: {exc.__class__.__name__}: {exc} "
              f"(set KALEIDO_DEBUG=1 for a traceback)", file=sys.stderr)
        return 1


#: What a tool says when the operating system refuses it memory.
_NO_MEMORY = ("Cannot allocate memory", "mmap failed", "out of memory", "std::bad_alloc", "MemoryError")


def _out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is a tool that ran out of memory."""
    while exc is not None:
        if isinstance(exc, MemoryError) or any(word in str(exc) for word in _NO_MEMORY):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


if __name__ == "__main__":
    sys.exit(main())      # prefer `python -m sim`: one copy of this module
