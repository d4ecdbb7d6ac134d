"""One design point of Kaleido: the object every layer takes.

A :class:`Config` says what the data looks like (the head's grid, its head
dimension and that dimension's split into channel groups), and holds one
sub-config per concern: when values reuse (:class:`ReuseConfig`), the PEs
(:class:`PEConfig`), the array (:class:`ArrayConfig`), the dispatcher
(:class:`DispatchConfig`) and the chip (:class:`ChipConfig`). Each field is
declared once, in its sub-config, with the metadata a command line needs
(:data:`KNOBS`), and validated there; the design point reads every field as its
own. It validates itself on construction so that a bad design point fails
once, early, with a message that names the offending parameter, instead of
deep inside the RTL generator or a simulation."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

from .channel_window import WINDOW_WIDTHS
from .dispatchers import DISPATCHERS
from .errors import ConfigError
from .knobs import SIZE_LIMITS, Part, knob, repr_shown, shown_fields, within_limits
from .pe import DEFAULT_PE_STAGES, PE_STAGES
from .pe_kinds import ACCUMULATORS, PE_KINDS, pe_kind_of
from .rope import BANDS, DIRECTIONS, GROUPS, MODELS, model_partition
from .variants import VARIANTS

#: How the dispatcher's scheduler orders a batch of pairs: ``weight`` (heaviest work
#: first, the default; see :mod:`golden.scheduler`) or ``pivots`` (the paper's Hamming
#: clustering, docs/design.md, "The data dispatcher").
CLUSTER_RULES = ("weight", "pivots")


#: The chip clock both designs run at by default (MHz), at the default cell
#: library's node (NanGate45, 45 nm): a clock the baseline array (4x4 PEs, D =
#: 128, one PE stage) closes under the timing-driven flow. Mapped for 720 MHz it
#: meets 727.9 MHz; mapped for 730 it misses. ``python -m synth.clock`` searches
#: the highest whole MHz from the fastest mapping (822.8 MHz, which misses) down,
#: a mapping a step; 720 is the round figure below where that search lands. At
#: OSU018 the same search gives 198 MHz (``synth.kits.OSU018_CLOCK_MHZ``). A
#: block that misses the chip clock sets its run's clock.
CHIP_CLOCK_MHZ = 720.0

#: The widest accumulator a design point takes (``acc_bits``, ``pe_acc_bits``): far
#: above what any head needs (2 x 8 bits and log2 of the reduction), and what the
#: simulators and the drivers read as one integer.
MAX_ACC_BITS = 64


def sum_bits(data_bits: int, terms: int) -> int:
    """Bits of a signed sum of ``terms`` products of two signed ``data_bits``
    operands, as the accumulators are sized: each product takes ``2 * data_bits``
    bits, the sum ``ceil(log2(terms))`` more, and one for its sign. A score of
    ``D`` channels is what the engine drains, and what a buffer of scores holds."""
    return 2 * data_bits + math.ceil(math.log2(max(1, terms))) + 1


#: A clock no 180 nm block here approaches; anything above is a typo.
MAX_CLOCK_MHZ = 2000.0

__all__ = ["Config", "ConfigError", "ReuseConfig", "PEConfig", "ArrayConfig", "DispatchConfig", "ChipConfig",
           "WorkloadConfig", "PARTS",
           "Part", "KNOBS", "knob_help", "CLUSTER_RULES", "VARIANTS", "CHIP_CLOCK_MHZ", "MAX_CLOCK_MHZ", "SIZE_LIMITS",
           "MAX_ACC_BITS", "sum_bits",
           "MODELS", "model_partition", "GROUPS", "DIRECTIONS",
           "require_config"]


def require_config(cfg, owner) -> "Config":
    """``cfg`` when it is a :class:`Config`; a clear TypeError naming ``owner`` otherwise."""
    if not isinstance(cfg, Config):
        name = owner if isinstance(owner, str) else type(owner).__name__
        raise TypeError(f"{name} takes a Config, not {type(cfg).__name__}")
    return cfg


@dataclass(frozen=True)
class ReuseConfig:
    """When two values reuse: the thresholds a workload is read with.

    Parameters
    ----------
    full_bits, partial_bits : int
        ``F`` and ``P`` of docs/concepts.md, "Reuse states", ``0 <= P <= F <= 8``.
    window : int
        Linear-layer reuse window ``w``, in tokens.
    """

    full_bits: int = knob(5, Part.REUSE, "full reuse when the top F bits of two values agree", metavar="F")
    partial_bits: int = knob(3, Part.REUSE, "partial reuse when the top P bits agree", metavar="P")
    window: int = knob(4, Part.LINEAR, "reuse window of a linear layer, in tokens", metavar="W")

    def __post_init__(self):
        for name, v in (("full bits", self.full_bits), ("partial bits", self.partial_bits)):
            if not 0 <= v <= 8:
                raise ConfigError(f"{name} ({v}) must be between 0 and 8")
        if self.partial_bits > self.full_bits:
            raise ConfigError(
                f"partial bits ({self.partial_bits}) must not exceed full bits ({self.full_bits})")
        within_limits(self)


@dataclass(frozen=True)
class PEConfig:
    """The processing elements, Kaleido's and the baseline's, and the dense accumulators.

    Parameters
    ----------
    data_bits, nibble_bits : int
        Operand width and PE lane width. Kaleido fixes them at 8 and 4.
    accumulators : int
        Registers of the Kaleido PE: 3 (the paper's PE, docs/design.md, "How the PE works" table)
        or 4 (the exact PE: executed MACs equal the oracle count; see
        :func:`golden.pe.step_need`). Either way a score takes at most three
        additions per channel, so ``pe_acc_bits`` is the same.
    pe_kind : str
        A kind of augmented PE by name (:data:`golden.pe_kinds.PE_KINDS`), for a
        kind beyond the two that ``accumulators`` picks; its registers must equal
        ``accumulators``. Empty (the default): the kind ``accumulators`` picks.
    pe_stages : int
        Register stages of a PE, both the Kaleido and the baseline one, from
        its operands to its accumulators: 1 (the canonical MAC), 2 (the lane
        products, their enables and the hand-over and drain controls are
        registered first, which shortens the critical path and delays every
        score's drain by one cycle) or 3 (besides, each PE
        multiplies the operands it has registered to pass on, a cycle after
        they arrive; the Kaleido PE decodes their control while they arrive
        and registers it, so no decode stands before its multipliers: a second
        cycle of drain; the default, ``golden.pe.DEFAULT_PE_STAGES``, the
        shallowest depth at which the whole Kaleido engine meets the chip clock)
        or 4 (the FPGA variant, ``golden.pe.FPGA_PE_STAGES``: besides, each
        lane's selected operands, and the baseline's, are registered before the
        multiplier, as a DSP block takes them: a third cycle of drain).
    max_channels : int or None
        The longest reduction a dense accumulator (the baseline PE's) must hold.
        :class:`Config` fills in ``D``.
    acc_bits : int or None
        The baseline PE's accumulator width. :class:`Config` fills in the
        smallest safe width, ``2*data_bits + ceil(log2(max_channels)) + 1``, and
        refuses a smaller value.
    pe_acc_bits : int or None
        The Kaleido PE's accumulator width. Every channel group drains on its
        own, and a register collects at most three passes over one group (T3
        takes B, C and D), so it needs only ``2*data_bits +
        ceil(log2(group_width)) + 1`` bits (what :class:`Config` fills in; enough
        for ``3 * group_width`` products, which the formal overflow proof
        checks); a smaller value is refused.
    """

    data_bits: int = 8
    nibble_bits: int = 4
    accumulators: int = knob(3, Part.KALEIDO_PE, "registers of the Kaleido PE: 3 (the paper's PE) or 4 (the exact "
                              "PE, which executes exactly the oracle's MACs)", choices=ACCUMULATORS)
    pe_stages: int = knob(DEFAULT_PE_STAGES, Part.PE, "register stages of every PE, Kaleido's and the "
                           "baseline's, from operands to accumulators: 1; 2 (products registered first: a shorter "
                           "critical path, one more "
                           "cycle of drain); 3 (besides, the Kaleido PE's control decoded a cycle ahead: two "
                           "more cycles of drain); 4 (the FPGA variant: besides, the multipliers' operands "
                           "registered: three)", choices=PE_STAGES)
    max_channels: int | None = knob(None, Part.ACCUMULATOR, "longest reduction a dense accumulator holds",
                                     metavar="N", shown="the head dimension")
    acc_bits: int | None = knob(None, Part.ACCUMULATOR, "dense accumulator width", metavar="BITS",
                                 shown="the least that cannot overflow")
    pe_acc_bits: int | None = None
    pe_kind: str = knob("", Part.KALEIDO_PE, "the Kaleido PE's kind, by name (paper, exact or one registered "
                         "in golden.pe_kinds)", metavar="NAME",
                         shown="by --accumulators: paper with 3, exact with 4", quiet=True)

    def __post_init__(self):
        if self.accumulators not in ACCUMULATORS:
            raise ConfigError(f"accumulators must be one of {ACCUMULATORS}, got {self.accumulators}")
        if self.pe_kind:
            kind = PE_KINDS.get(self.pe_kind)
            if kind is None:
                raise ConfigError(f"unknown PE kind {self.pe_kind!r}; choose one of {', '.join(PE_KINDS)}")
            if kind.registers != self.accumulators:
                raise ConfigError(f"PE kind {self.pe_kind} has {kind.registers} registers: give it "
                                  f"accumulators={kind.registers}, not {self.accumulators}")
        if self.pe_stages not in PE_STAGES:
            raise ConfigError(f"PE stages must be one of {PE_STAGES}, got {self.pe_stages}")
        if (self.data_bits, self.nibble_bits) != (8, 4):
            raise ConfigError(
                f"Kaleido fixes 8-bit data and 4-bit lanes, got {self.data_bits} and {self.nibble_bits}")

    def __repr__(self) -> str:
        return repr_shown(self)

    @property
    def kind(self):
        """The augmented PE this builds (:func:`golden.pe_kinds.pe_kind_of`)."""
        return pe_kind_of(self)


@dataclass(frozen=True)
class ArrayConfig:
    """The systolic array.

    Parameters
    ----------
    rows, cols : int
        PEs per array.
    """

    rows: int = knob(4, Part.ARRAY, "PE rows of an array", metavar="R")
    cols: int = knob(4, Part.ARRAY, "PE columns of an array", metavar="C")

    def __post_init__(self):
        within_limits(self)


@dataclass(frozen=True)
class DispatchConfig:
    """The data dispatcher: its scheduler, and the matcher or channel window.

    Parameters
    ----------
    variant : str
        Which parts the dispatcher has (:data:`VARIANTS`): ``full`` (the
        default: scheduler and matcher), ``pe-sh`` (the scheduler alone),
        ``pe-m`` (the matcher alone) or ``pe`` (neither: pairs in their natural
        order, one channel step a slot).
    queue_depth, clusters, cluster_capacity, string_bits : int
        Scheduler: string queue entries, pivot clusters, entries per cluster
        queue, channels per reuse string.
    cluster_rule : str
        How the scheduler orders a batch: ``weight`` (the default: pairs sorted
        by the work their partners need, heaviest first, which evens the columns
        and rows of a tile: :mod:`golden.scheduler`) or ``pivots`` (the paper's
        clustering by Hamming distance to pivot strings). The weight rule takes
        fewer cycles and its scheduler is smaller and faster (190 MHz against
        111 at the chip clock's mapping), so the paper's rule is the option.
    lookahead : int
        Matcher: channel steps the merge unit may look ahead.
    issue_window : int
        0 (the matcher pairs steps for every PE at once) or the channels the row
        and column ports carry in a slot of pass B, C or D, from which each
        column (B, D) or row (C) takes its own one or two
        (:mod:`golden.channel_window`); it replaces the matcher's pairing.
    dispatcher : str
        The unit in the matcher's place, by its name in
        :data:`golden.dispatchers.DISPATCHERS`; empty (the default): the channel
        window when ``issue_window`` is set, else the matcher
        (:func:`golden.dispatchers.dispatcher_of`).
    """

    variant: str = knob("full", Part.DISPATCHER, "the dispatcher in the loop: pe (reconfigurable PEs, channel "
                         "steps in natural order), pe-sh (+ the scheduler, which clusters pairs with alike reuse), "
                         "pe-m (+ the matcher, which pairs nibble steps into one cycle), full (both)",
                         choices=tuple(VARIANTS))
    queue_depth: int = 64
    clusters: int = 4
    cluster_capacity: int = 16
    string_bits: int = 16
    cluster_rule: str = knob("weight", Part.SCHEDULER, "how the scheduler orders a batch of pairs: weight "
                              "(heaviest work first, which evens a tile's columns and rows) or pivots (the "
                              "paper's Hamming clustering)", choices=CLUSTER_RULES)
    lookahead: int = knob(4, Part.MATCHER, "channel steps the matcher sees at once: the head and the N-1 after it",
                           metavar="N")
    issue_window: int = knob(0, Part.WINDOW, "the matcher's pairing: 0 pairs steps for every PE at once; W in 2..8 "
                              "carries W channels a slot of passes B-D, from which each column (B, D) or row (C) "
                              "takes its own one or two (the channel window, wider ports)", choices=WINDOW_WIDTHS,
                              metavar="W")
    dispatcher: str = knob("", Part.DISPATCHER, "the unit in the matcher's place, by name (matcher, channel-window "
                            "or one registered in golden.dispatchers)", metavar="NAME",
                            shown="the channel window with --issue-window, else the matcher", quiet=True)

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ConfigError(f"unknown variant {self.variant!r}; choose one of {', '.join(VARIANTS)}")
        if self.issue_window not in WINDOW_WIDTHS:
            raise ConfigError(f"issue window must be 0 (none) or 2 to {WINDOW_WIDTHS[-1]} channels, "
                              f"got {self.issue_window}")
        if self.cluster_rule not in CLUSTER_RULES:
            raise ConfigError(f"cluster rule must be one of {', '.join(CLUSTER_RULES)}, got {self.cluster_rule!r}")
        within_limits(self)
        if self.dispatcher:
            unit = DISPATCHERS.get(self.dispatcher)
            if unit is None or not unit.paired:
                names = ", ".join(n for n, d in DISPATCHERS.items() if d.paired)
                raise ConfigError(f"unknown dispatcher {self.dispatcher!r}; choose one of {names}")
            if why := unit.refusal(self):
                raise ConfigError(why)
        if self.clusters * self.cluster_capacity < self.queue_depth:
            raise ConfigError(
                f"{self.clusters} clusters of {self.cluster_capacity} cannot hold a queue of {self.queue_depth}")

    def __repr__(self) -> str:
        return repr_shown(self)

    @property
    def parts(self) -> tuple[bool, bool]:
        """``(scheduler, matcher)``: the parts :attr:`variant` has."""
        return VARIANTS[self.variant]


@dataclass(frozen=True)
class ChipConfig:
    """What the chip adds around the arrays: its clock and its softmax unit.

    Parameters
    ----------
    clock_mhz : float
        The chip clock: every block is mapped for it (timing-driven), timed at it
        and runs at it if it meets it. 0 (the default) means
        :data:`CHIP_CLOCK_MHZ`, the clock the baseline array closes at on the
        default cell library (NanGate45); both designs get it.
    vector_lanes : int
        Scores the softmax vector unit takes per cycle (:mod:`golden.softmax`).
    """

    clock_mhz: float = knob(0.0, Part.CHIP, "the chip clock: every block is mapped for it and timed at it, and a "
                             "run takes it if its blocks all meet it, else its slowest block's clock", metavar="F",
                             shown=f"{CHIP_CLOCK_MHZ:g}, where the baseline array closes on NanGate45")
    vector_lanes: int = knob(4, Part.SOFTMAX, "scores the softmax unit takes per cycle", metavar="L")

    def __post_init__(self):
        object.__setattr__(self, "clock_mhz", float(self.clock_mhz or CHIP_CLOCK_MHZ))
        if not 1.0 <= self.clock_mhz <= MAX_CLOCK_MHZ:
            raise ConfigError(f"clock must be between 1 and {MAX_CLOCK_MHZ:g} MHz, got {self.clock_mhz:g}")
        within_limits(self)


@dataclass(frozen=True)
class WorkloadConfig:
    """The structure the synthetic model gives its activations (:func:`golden.workload.token_common`):
    a token-common part, as a trained DiT's massive hidden channels give it. No
    hardware reads it, so the Verilog and, at its defaults, :meth:`Config.to_json` leave it out.

    Parameters
    ----------
    common_strength : float
        Its energy over the content's, in Q and K before RoPE (their common share is
        ``s / (1 + s)``); 0, the default, is the model without it, figure for figure.
    common_band : str
        The RoPE band it lands in (:data:`golden.rope.BANDS`): ``low`` (the default), ``mid``, ``high`` or ``all``.
    """

    common_strength: float = knob(0.0, Part.WORKLOAD, "energy of the token-common part (a few massive hidden channels "
                                   "shared by every token, modulated by the step) over the content's, in Q and K "
                                   "before RoPE; 0 is the model without it", metavar="S", quiet=True)
    common_band: str = knob("low", Part.WORKLOAD, "the RoPE frequencies the token-common part lands in: each group's "
                             "channel pairs in thirds, low (slowest-turning), mid, high, or all", choices=BANDS,
                             quiet=True)

    def __post_init__(self):
        s = self.common_strength
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s) or s < 0:
            raise ConfigError(f"common strength must be a finite number of 0 or more, got {s!r}")
        object.__setattr__(self, "common_strength", float(s))
        if self.common_band not in BANDS:
            raise ConfigError(f"unknown common band {self.common_band!r}; choose one of {', '.join(BANDS)}")

    def __repr__(self) -> str:
        return repr_shown(self)


#: The sub-configs of a design point, by the :class:`Config` field that holds each.
PARTS = {"reuse": ReuseConfig, "pe": PEConfig, "array": ArrayConfig, "dispatch": DispatchConfig, "chip": ChipConfig,
         "workload": WorkloadConfig}

#: Each sub-config field's name -> the sub-config that holds it.
_HOLDER = {f.name: part for part, cls in PARTS.items() for f in fields(cls)}


@dataclass(frozen=True, init=False)
class Config:
    """A Kaleido design point: the head's shape, and one sub-config per concern.

    Each setting is a field of one sub-config (:data:`PARTS`), which validates
    it and documents it; ``cfg.rows`` reads ``cfg.array.rows``, and
    ``Config(rows=2)`` or ``cfg.with_(rows=2)`` sets it, so a caller need not
    know which part holds a knob. Rules across parts (the accumulator widths
    the head needs) are checked here.

    Parameters
    ----------
    partition : (int, int, int)
        Channels of the t-, y- and x-group, in that order (``D = Dt + Dy + Dx``).
        A group may be empty.
    grid : (int, int, int)
        Token grid ``(T, H, W)`` of one head; ``N = T*H*W``.
    seed : int
        Seed of the scheduler's pivot LFSR and of the proxy workload.
    reuse, pe, array, dispatch, chip, workload : sub-config, dict or None
        :class:`ReuseConfig`, :class:`PEConfig`, :class:`ArrayConfig`,
        :class:`DispatchConfig`, :class:`ChipConfig`, :class:`WorkloadConfig`
        (a dict is its fields; None, its defaults).
    **knobs
        Any field of a sub-config by its own name, over the sub-config given.
    """

    # The defaults are __init__'s, in one place.
    partition: tuple[int, int, int]
    grid: tuple[int, int, int]
    seed: int
    reuse: ReuseConfig
    pe: PEConfig
    array: ArrayConfig
    dispatch: DispatchConfig
    chip: ChipConfig
    # No hardware reads the workload's structure: the Verilog's header (the repr) leaves it out,
    # so that every block, and every cache keyed by its Verilog, is the same at any strength.
    workload: WorkloadConfig = field(repr=False)

    def __init__(self, partition=(44, 42, 42), grid=(8, 16, 16), seed: int = 1, reuse=None, pe=None, array=None,
                 dispatch=None, chip=None, workload=None, **knobs):
        given = {"reuse": reuse, "pe": pe, "array": array, "dispatch": dispatch, "chip": chip, "workload": workload}
        changes = {part: {} for part in PARTS}
        for name, value in knobs.items():
            if name not in _HOLDER:
                raise TypeError(f"Config has no field {name!r}")
            changes[_HOLDER[name]][name] = value
        for part, cls in PARTS.items():
            sub = given[part]
            if sub is None or isinstance(sub, dict):
                sub = cls(**{**(sub or {}), **changes[part]})
            elif isinstance(sub, cls):
                sub = replace(sub, **changes[part]) if changes[part] else sub
            else:
                raise TypeError(f"Config.{part} must be {cls.__name__}, a dict of its fields or None, "
                                f"not {type(sub).__name__}")
            object.__setattr__(self, part, sub)
        # Sequences given as lists become tuples, so the object stays hashable.
        object.__setattr__(self, "partition", tuple(int(v) for v in partition))
        object.__setattr__(self, "grid", tuple(int(v) for v in grid))
        object.__setattr__(self, "seed", seed)
        self._validate()
        self._size_accumulators()

    def _validate(self):
        if len(self.partition) != 3:
            raise ConfigError(f"partition needs three groups (Dt,Dy,Dx), got {len(self.partition)}")
        if any(v < 0 for v in self.partition):
            raise ConfigError(f"partition {self.partition} has a negative group")
        if sum(self.partition) < 1:
            raise ConfigError("partition has no channels at all")
        if len(self.grid) != 3:
            raise ConfigError(f"grid needs three extents (T,H,W), got {len(self.grid)}")
        if any(v < 1 for v in self.grid):
            raise ConfigError(f"grid {self.grid} has an extent below 1")

    def _size_accumulators(self):
        # The widths a head of this partition needs, where the PE config leaves them open.
        if self.max_channels is None:
            object.__setattr__(self, "pe", replace(self.pe, max_channels=max(1, self.head_dim)))
        if self.max_channels < self.head_dim:
            raise ConfigError(
                f"max channels ({self.max_channels}) is below the head dimension ({self.head_dim})")
        if self.acc_bits is None:
            object.__setattr__(self, "pe", replace(self.pe, acc_bits=self.min_acc_bits))
        if self.acc_bits < self.min_acc_bits:
            raise ConfigError(
                f"accumulator of {self.acc_bits} bits could overflow: {self.max_channels} channels "
                f"of {self.data_bits}-bit products need {self.min_acc_bits}")
        if self.pe_acc_bits is None:
            object.__setattr__(self, "pe", replace(self.pe, pe_acc_bits=self.min_pe_acc_bits))
        if self.pe_acc_bits < self.min_pe_acc_bits:
            raise ConfigError(
                f"Kaleido PE accumulator of {self.pe_acc_bits} bits could overflow: channel groups of "
                f"up to {self.group_width} channels need {self.min_pe_acc_bits}")
        for name in ("acc_bits", "pe_acc_bits"):
            if getattr(self, name) > MAX_ACC_BITS:
                raise ConfigError(f"{name.replace('_', ' ')} must be at most {MAX_ACC_BITS} (a score the "
                                  f"simulators and the drivers take as one integer), got {getattr(self, name)}")

    # -- constructors ---------------------------------------------------------------------

    @classmethod
    def for_model(cls, model: str, head_dim: int, **kwargs) -> "Config":
        """A config whose partition is ``model``'s RoPE split of ``head_dim`` channels."""
        return cls(partition=model_partition(model, head_dim), **kwargs)

    def to_json(self) -> str:
        """The design point as JSON (how it travels to testbenches and reports)."""
        import json
        from dataclasses import asdict
        out = asdict(self)
        for part in PARTS:
            out[part] = {f.name: out[part][f.name] for f in shown_fields(getattr(self, part))}
        if not self.workload.common_strength:      # no common part, whatever its band: as before the part existed
            del out["workload"]
        else:                                      # with it, every field of it, so a reader need not know the defaults
            out["workload"] = asdict(self.workload)
        return json.dumps(out, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Config":
        import json
        return cls(**json.loads(text))

    def with_(self, **kwargs) -> "Config":
        """A copy with some fields changed (and validated again). A length or width
        this design point derived (``max_channels``, ``acc_bits``, ``pe_acc_bits`` at
        their defaults) is derived again for the copy unless it is given: a head of
        another dimension gets the accumulators its own would."""
        if "pe" not in kwargs:
            derived = {"max_channels": self.max_channels == max(1, self.head_dim),
                       "acc_bits": self.acc_bits == self.min_acc_bits,
                       "pe_acc_bits": self.pe_acc_bits == self.min_pe_acc_bits}
            kwargs = {**{name: None for name, was in derived.items() if was}, **kwargs}
        return replace(self, **kwargs)

    # -- derived quantities ---------------------------------------------------------------

    @property
    def head_dim(self) -> int:
        return sum(self.partition)

    @property
    def group_width(self) -> int:
        """Channels of the widest group: what a Kaleido pass streams at most."""
        return max(self.partition)

    @property
    def entry_bits(self) -> int:
        """Bits of a scheduler queue entry: a reuse string of ``string_bits``, or under
        the weight rule a work weight, at most two lanes a channel of the widest group."""
        return (2 * self.group_width).bit_length() if self.cluster_rule == "weight" else self.string_bits

    @property
    def tokens(self) -> int:
        T, H, W = self.grid
        return T * H * W

    @property
    def min_acc_bits(self) -> int:
        return sum_bits(self.data_bits, self.max_channels or self.head_dim)

    @property
    def min_pe_acc_bits(self) -> int:
        return sum_bits(self.data_bits, self.group_width)

    @property
    def group_slices(self) -> dict[str, slice]:
        """Channel slice of each group inside a head."""
        out, lo = {}, 0
        for name, width in zip(GROUPS, self.partition):
            out[name] = slice(lo, lo + width)
            lo += width
        return out


def _read_through(part: str, name: str) -> property:
    return property(lambda self: getattr(getattr(self, part), name),
                    doc=f"``{part}.{name}`` (:class:`{PARTS[part].__name__}`)")


# Every sub-config field reads as the design point's own: cfg.rows is cfg.array.rows.
for _name, _part in _HOLDER.items():
    assert not hasattr(Config, _name), f"{_name} would hide a Config attribute"
    setattr(Config, _name, _read_through(_part, _name))
del _name, _part

#: The fields a user sets, by name: each with its part, help and choices (:func:`knob`).
KNOBS = {f.name: f for cls in PARTS.values() for f in fields(cls) if "part" in f.metadata}


def knob_help(name: str) -> str:
    """A knob's help with its default, as a command line shows it."""
    meta = KNOBS[name].metadata
    default = meta["shown"] or KNOBS[name].default
    return f"{meta['help']} (default {default})"
