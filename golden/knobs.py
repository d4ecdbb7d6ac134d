"""How a design point's fields declare themselves: the part of the hardware (or
of the workload) each knob sets, the metadata a command line needs, the sizes
each takes at most, and which fields a design point's JSON and repr show.
:mod:`golden.config` builds its sub-configs from these."""

from __future__ import annotations

from dataclasses import field, fields
from enum import Enum

from .errors import ConfigError

__all__ = ["SIZE_LIMITS", "Part", "knob", "shown_fields", "repr_shown", "within_limits"]

#: The largest value each size takes: beyond them the generator would build (and a
#: model would allocate) for minutes or hours before anything useful, so they are
#: refused at once. Each is far past any design point the paper or this project uses.
SIZE_LIMITS = {"rows": 256, "cols": 256, "queue_depth": 4096, "clusters": 64, "cluster_capacity": 4096,
               "string_bits": 64, "lookahead": 64, "window": 64, "vector_lanes": 256}


class Part(str, Enum):
    """The piece of hardware (or of the workload) a knob of :class:`Config` sets.

    A command refuses a knob given for a design point or block without its part,
    instead of ignoring it: this is the one place that says which part it is.
    """
    KALEIDO_PE = "the Kaleido PE"
    PE = "a PE"
    ARRAY = "an array of PEs"
    ACCUMULATOR = "a dense accumulator (the baseline PE's or the softmax unit's scores)"
    DISPATCHER = "the data dispatcher"
    SCHEDULER = "the scheduler"
    MATCHER = "the matcher"
    WINDOW = "the channel window"
    SOFTMAX = "the softmax unit"
    REUSE = "the reuse rule"
    LINEAR = "a linear layer"
    CHIP = "the chip"
    WORKLOAD = "the synthetic workload"


def shown_fields(part) -> list:
    """The fields of a sub-config that its repr and :meth:`Config.to_json` show: a
    *quiet* field at its default is left out, so that the Verilog's header, and
    every cache keyed by the design point, read as they did before the field."""
    return [f for f in fields(part) if not (f.metadata.get("quiet") and getattr(part, f.name) == f.default)]


def repr_shown(part) -> str:
    return f"{type(part).__name__}({', '.join(f'{f.name}={getattr(part, f.name)!r}' for f in shown_fields(part))})"


def knob(default, part: Part, help: str, choices=None, metavar: str | None = None, shown=None, quiet=False):
    """A :class:`Config` field a user sets: ``part`` it configures, the ``help`` a
    command line shows for it, its ``choices`` and ``metavar``; ``shown``: what the
    help says the default is, when not the value itself. A ``quiet`` field is left
    out of :meth:`Config.to_json` at its default, so that the design points (and the
    results cached under them) from before it was added read as they did."""
    return field(default=default, metadata={"part": part, "help": help, "choices": choices,
                                             "metavar": metavar, "shown": shown, "quiet": quiet})


def within_limits(part) -> None:
    """Refuse a size of ``part`` outside :data:`SIZE_LIMITS`."""
    for f in fields(part):
        most = SIZE_LIMITS.get(f.name)
        value = getattr(part, f.name)
        if most is not None and not 1 <= value <= most:
            raise ConfigError(f"{f.name.replace('_', ' ')} must be between 1 and {most}, got {value}")
