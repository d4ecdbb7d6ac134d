"""The knobs of a :class:`Config` on the command line, and the one rule for a knob
that a command's design point would not use.

A knob's flag, help, choices and default all come from its field in
:mod:`golden.config` (:data:`golden.config.KNOBS`), so a new knob is one field
there plus its use. Every flag defaults to "not given", and only a given one
reaches the ``Config``: what the user left out keeps the ``Config``'s default.

A knob given where nothing reads it is refused, never ignored: a block reads
the knobs its registry entry lists (:data:`hw.blocks.BLOCKS`), and a design
point of ``sim attention`` or ``sim linear`` those of its design and variant
(:func:`design_knobs`).
"""

from __future__ import annotations

import argparse
import math

from golden.config import KNOBS, MAX_CLOCK_MHZ, DispatchConfig, Part, knob_help
from golden.dispatchers import DISPATCHERS, dispatcher_of
from golden.pe_kinds import PE_KINDS
from golden.presets import PRESETS
from golden.variants import VARIANTS
from sim.errors import UserError

__all__ = ["add_knobs", "add_preset", "design_point", "preset_knobs", "knobs_of", "given", "flag", "refuse_unused",
           "design_knobs", "check_design_knobs", "refuse_unread_by_unit", "SIGNOFF", "HAVING"]

#: Which variants have each dispatcher part: what a refusal of its knob points to.
HAVING = {Part.SCHEDULER: "pe-sh and full", Part.MATCHER: "pe-m and full", Part.WINDOW: "pe-m and full"}

#: What every synthesized block reads besides its own knobs: the clock it is mapped for.
SIGNOFF = frozenset({"clock_mhz"})


def flag(name: str) -> str:
    """A knob's option: ``--pe-stages`` for ``pe_stages``."""
    return "--" + name.replace("_", "-")


def _clock(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 1.0 <= value <= MAX_CLOCK_MHZ:
        raise argparse.ArgumentTypeError(f"{text} MHz: the clock must be between 1 and {MAX_CLOCK_MHZ:g} MHz")
    return value


def _ratio(text: str) -> float:
    """A finite number of 0 or more (a knob that is a ratio)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text}: must be a finite number of 0 or more")
    return value


def add_knobs(p, *names: str, notes: dict | None = None) -> None:
    """Add each knob ``names`` names to parser ``p``, as its field describes it
    (``notes``: a sentence per knob that this command adds to its help)."""
    for name in names:
        field = KNOBS[name]
        meta = field.metadata
        choices = meta["choices"]
        kind = (_clock if name == "clock_mhz" else type(choices[0]) if choices
                else str if isinstance(field.default, str) else _ratio if isinstance(field.default, float) else int)
        extra = {"choices": choices} if choices and kind is str else {}
        if choices and kind is int:
            extra = {"choices": choices, "metavar": "{" + ",".join(map(str, choices)) + "}"}
        help = knob_help(name) + (f". {notes[name]}" if notes and name in notes else "")
        p.add_argument(flag(name), type=kind, default=None, help=help,
                       **({"metavar": meta["metavar"]} if meta["metavar"] and not choices else extra))


def knobs_of(*parts: Part) -> tuple[str, ...]:
    """The knobs that set ``parts``, in :data:`golden.config.KNOBS`' order: what a
    command that reads those parts offers (a new knob of one reaches it unasked)."""
    return tuple(name for name, f in KNOBS.items() if f.metadata["part"] in parts)


def add_preset(p) -> None:
    """Add ``--preset``: a named design point (:data:`golden.presets.PRESETS`) that
    the command's own inputs and knobs go over."""
    p.add_argument("--preset", choices=tuple(PRESETS), metavar="NAME",
                   help="start from a named design point, which every knob given goes over: "
                        + "; ".join(f"{name}, {pre.description}" for name, pre in PRESETS.items())
                        + " (default: default)")


def _preset(args):
    return PRESETS[getattr(args, "preset", None) or "default"].config()


def design_point(args, **shape):
    """The design point of a command: its preset, the head's shape the command has
    (``shape``: partition, grid or seed; None where it has none, which keeps the
    preset's) over it, and the knobs given over both."""
    return _preset(args).with_(**{k: v for k, v in shape.items() if v is not None}, **given(args))


def preset_knobs(args) -> dict:
    """The knobs of ``args``'s preset that differ from the defaults, with the
    knobs given over them: what a command that builds its own design points
    (an estimate, per model) passes on."""
    from golden.config import Config

    base, start = Config(), _preset(args)
    return {**{name: getattr(start, name) for name in KNOBS if getattr(start, name) != getattr(base, name)},
            **given(args)}


def _typed(args) -> dict:
    """The knobs the user typed, by field name."""
    return {name: getattr(args, name) for name in KNOBS if getattr(args, name, None) is not None}


def given(args) -> dict:
    """The knobs the user gave, by field name: what goes into the ``Config``. A
    PE kind given without ``--accumulators`` brings its own register count, so
    that it goes over a preset's as every knob does (``--preset exact --pe-kind
    paper`` is the paper PE)."""
    out = _typed(args)
    kind = PE_KINDS.get(out.get("pe_kind") or "")
    if kind is not None and "accumulators" not in out:
        out["accumulators"] = kind.registers
    return out


def refuse_unused(args, reads, what: str, having: dict | None = None, having_knob: dict | None = None) -> None:
    """Refuse, as one line, any knob given that ``what`` does not read (``reads``:
    field names); ``having`` names, per part, what does have it (``having_knob``:
    per knob)."""
    for name in _typed(args):
        if name not in reads:
            part = KNOBS[name].metadata["part"]
            where = (having_knob or {}).get(name) or (having or {}).get(part)
            raise UserError(f"{flag(name)} sets {part.value}: {what} has none"
                            + (f" ({where} have it)" if where else ""))


def design_knobs(design: str, variant: str, issue_window: int = 0, linear: bool = False,
                 dispatcher: str = "") -> frozenset:
    """The knobs a design point of ``sim attention`` (or, ``linear``, of ``sim
    linear``) reads: the array, its PEs and the chip clock always; the Kaleido PE,
    and the scheduler and the unit in the matcher's place (named by
    ``dispatcher``, else the matcher or with ``issue_window`` the channel window)
    as ``variant`` has them, with the knobs that unit declares it reads."""
    reads = {"rows", "cols", "pe_stages", "clock_mhz", "full_bits", "partial_bits", "variant"}
    if linear:
        reads.add("window")
    if design == "kaleido":
        scheduler, matcher = VARIANTS[variant]
        reads |= {"accumulators", "pe_kind"}
        if scheduler and not linear:         # a linear layer's windows are never reordered
            reads.add("cluster_rule")
        if matcher:
            dispatch = DispatchConfig(variant=variant, issue_window=issue_window, dispatcher=dispatcher)
            reads |= {"issue_window", "dispatcher", *DISPATCHERS[dispatcher_of(dispatch, True)].knobs}
    return frozenset(reads)


def refuse_unread_by_unit(args, reads, variant: str, window: int) -> None:
    """A knob of the matcher's part that the unit in the matcher's place does not
    read (the channel window, or a dispatcher named by ``--dispatcher``): refused,
    naming what put that unit there."""
    if not VARIANTS[variant][1]:
        return
    dispatcher = getattr(args, "dispatcher", None) or ""
    unit = dispatcher_of(DispatchConfig(variant=variant, issue_window=window, dispatcher=dispatcher), True)
    for name in _typed(args):
        part = KNOBS[name].metadata["part"]
        if name in reads or part not in (Part.MATCHER, Part.WINDOW):
            continue
        if dispatcher:
            raise UserError(f"{flag(name)} sets {part.value}: --dispatcher {dispatcher} puts its own unit in its "
                            f"place, which reads none of it")
        raise UserError(f"{flag(name)} sets {part.value}: --issue-window {window} puts the "
                        f"{unit.replace('-', ' ')} in its place")


def check_design_knobs(args, linear: bool = False) -> None:
    """Refuse a knob that ``args``'s design point would not use: a Kaleido-only one
    on the baseline, a dispatcher part's on a variant without that part, or the
    matcher's lookahead where the channel window takes the matcher's place. The
    baseline, which has no dispatcher, runs as variant ``pe``."""
    if args.design == "baseline":
        # The baseline has no dispatcher: "pe" and "full" both say so, and it runs as "pe".
        if args.variant not in (None, "pe", "full"):
            raise UserError("the baseline has no dispatcher: --variant applies to --design kaleido")
        args.variant = "pe"
    variant = args.variant or KNOBS["variant"].default
    window = args.issue_window or 0
    reads = design_knobs(args.design, variant, window, linear, getattr(args, "dispatcher", None) or "")
    if args.design == "baseline":
        refuse_unused(args, reads, "the baseline")
        return
    refuse_unread_by_unit(args, reads, variant, window)
    refuse_unused(args, reads, f"--variant {variant}",
                  having=HAVING)
