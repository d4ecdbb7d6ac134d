"""The Dask cluster an estimate's shards run on: a local one of this machine's
cores by default, or the scheduler at ``--scheduler ADDRESS``, checked to be
one before any work is sent (:func:`check_scheduler`)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading

from ..errors import UserError

__all__ = ["dask_client", "check_scheduler", "CONNECT_SECONDS"]


@contextlib.contextmanager
def dask_client(scheduler: str | None, workers: int | None):
    """A callable that gives a Dask client, made the first time it is called (a
    run whose shards are all on disk starts no cluster), closed with its cluster
    when the block ends."""
    from .worker_plugins import Registries

    made = []

    def client():
        if not made:
            made.append(_client(scheduler, workers))
            made[0].register_plugin(Registries())
        return made[0]
    try:
        yield client
    except BaseException:
        # Interrupted (Ctrl-C) or failed: close quietly, so that what the shutdown of
        # an event loop in flight raises (a CancelledError, a second interrupt) does
        # not replace the first exception with a traceback of its own.
        for c in made:
            with contextlib.suppress(BaseException):
                _close(c)
        raise
    else:
        for c in made:
            _close(c)


def _close(c) -> None:
    cluster = c.cluster
    c.close()
    if cluster is not None:
        cluster.close()


#: How long a Dask scheduler named on the command line has to answer.
CONNECT_SECONDS = 10


def _client(scheduler: str | None, workers: int | None):
    """A Dask client: of the scheduler at ``scheduler``, or of a local cluster of
    ``workers`` processes. A scheduler that cannot be reached is the user's error."""
    from dask.distributed import Client, LocalCluster

    if not scheduler:
        # Ctrl-C reaches every process of the terminal's group: the workers ignore it
        # (the disposition is inherited), and this process ends them as it unwinds.
        main_thread = threading.current_thread() is threading.main_thread()
        saved = signal.signal(signal.SIGINT, signal.SIG_IGN) if main_thread else None
        try:
            return Client(LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                       processes=True, dashboard_address=":0"))
        finally:
            if main_thread:
                signal.signal(signal.SIGINT, saved)
    _probe(scheduler)
    try:
        return Client(scheduler, timeout=CONNECT_SECONDS)
    except (OSError, ValueError, TypeError) as exc:
        raise _unanswered(scheduler, exc) from None


def _unanswered(scheduler: str, exc: Exception) -> UserError:
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return UserError(f"--scheduler {scheduler}: no Dask scheduler answered there within {CONNECT_SECONDS} s "
                     f"({reason})")


def _probe(scheduler: str) -> None:
    """Ask what answers at ``scheduler`` who it is, within :data:`CONNECT_SECONDS`:
    a Dask ``Client`` waits forever on a server that accepts the connection but
    speaks another protocol (a web server), or reads its reply as a frame length
    and runs out of memory."""
    import asyncio

    from distributed.comm import connect

    async def identity():
        # Dask's connect retries its own handshake past its timeout on a server that
        # accepts and says nothing: the outer limit bounds that, and the reply has its own.
        comm = await asyncio.wait_for(connect(scheduler, timeout=CONNECT_SECONDS), 2 * CONNECT_SECONDS)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await asyncio.wait_for(comm.read(), CONNECT_SECONDS)
        finally:
            comm.abort()
    try:
        who = asyncio.run(identity())
    except (TimeoutError, MemoryError, EOFError):      # TimeoutError first: it is an OSError
        raise UserError(f"--scheduler {scheduler}: something answers there, but not a Dask scheduler (no reply to "
                        f"its handshake within {CONNECT_SECONDS} s)") from None
    except (OSError, ValueError, TypeError) as exc:
        raise _unanswered(scheduler, exc) from None
    except Exception as exc:          # a reply that is not a Dask message: a server of another kind
        raise UserError(f"--scheduler {scheduler}: what answers there is not a Dask scheduler "
                        f"({exc.__class__.__name__})") from None
    kind = who.get("type") if isinstance(who, dict) else None
    if kind != "Scheduler":
        raise UserError(f"--scheduler {scheduler}: a Dask {kind or 'server'} answers there, not a scheduler")


def check_scheduler(scheduler: str) -> None:
    """Refuse (UserError) a scheduler address that no Dask scheduler answers."""
    _client(scheduler, None).close()
