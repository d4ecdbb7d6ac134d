"""What every Dask worker of a run needs set up before its first shard.

A design point may name a dispatcher that was registered in the process that
starts the run (a user's own, :func:`golden.dispatchers.register`) and that a
fresh worker process has never imported. :class:`DispatcherRegistry` registers
each such one on every worker, present or joining later."""

from __future__ import annotations

from distributed.diagnostics.plugin import WorkerPlugin

from golden.dispatchers import DISPATCHERS, register

__all__ = ["DispatcherRegistry"]


class DispatcherRegistry(WorkerPlugin):
    """The dispatchers registered here beyond the built-in ones, registered on each
    worker too. Each travels as a reference to its class, which the worker imports
    (so it must live in a module the workers can import)."""

    name = "kaleido-dispatchers"

    def __init__(self):
        self.models = [d for d in DISPATCHERS.values() if d.__module__ != "golden.dispatchers"]

    def setup(self, worker):
        for model in self.models:
            register(model)
