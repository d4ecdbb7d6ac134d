"""What every Dask worker of a run needs set up before its first shard.

A design point may name a dispatcher or a PE kind that was registered in the
process that starts the run (a user's own, :func:`golden.dispatchers.register`
or :func:`golden.pe_contract.register`) and that a fresh worker process has never
imported. :class:`Registries` registers each such one on every worker, present
or joining later."""

from __future__ import annotations

import importlib

from distributed.diagnostics.plugin import WorkerPlugin

from golden import plugins

__all__ = ["Registries"]


class Registries(WorkerPlugin):
    """The dispatchers and PE kinds registered here beyond the built-in ones
    (:func:`golden.plugins.added`), registered on each worker too. Each travels
    as its class, which the worker imports or, for a script's own, rebuilds."""

    name = "kaleido-registries"

    def __init__(self):
        self.added = plugins.added()      # (the registry's module, by name, and the class)

    def setup(self, worker):
        for registry, entry in self.added:
            importlib.import_module(registry).register(entry)
