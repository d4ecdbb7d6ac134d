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
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"--scheduler {scheduler}: no Dask scheduler answered there within "
                        f"{CONNECT_SECONDS} s ({reason})") from None


def _probe(scheduler: str) -> None:
    """Ask what answers at ``scheduler`` who it is, within :data:`CONNECT_SECONDS`:
    a Dask ``Client`` waits forever on a server that accepts the connection but
    speaks another protocol (a web server), or reads its reply as a frame length
    and runs out of memory."""
    import asyncio

    from distributed.comm import connect

    class Unreached(Exception):
        pass

    async def identity():
        # Two steps, each with its own limit: reaching the address, then its answer.
        try:
            # Dask's connect retries its own handshake past its timeout on a server that
            # accepts and says nothing: the outer limit is what bounds that.
            comm = await asyncio.wait_for(connect(scheduler, timeout=CONNECT_SECONDS), 2 * CONNECT_SECONDS)
        except (asyncio.TimeoutError, TimeoutError):
            raise
        except (OSError, ValueError, TypeError) as exc:
            raise Unreached(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
        try:
            await comm.write({"op": "identity", "reply": True})
            return await asyncio.wait_for(comm.read(), CONNECT_SECONDS)
        finally:
            comm.abort()
    try:
        who = asyncio.run(identity())
    except Unreached as exc:
        raise UserError(f"--scheduler {scheduler}: no Dask scheduler answered there within "
                        f"{CONNECT_SECONDS} s ({exc})") from None
    except (TimeoutError, asyncio.TimeoutError, MemoryError, EOFError):
        raise UserError(f"--scheduler {scheduler}: something answers there, but not a Dask scheduler (no reply to "
                        f"its handshake within {CONNECT_SECONDS} s)") from None
    except (OSError, ValueError, TypeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"--scheduler {scheduler}: no Dask scheduler answered there within "
                        f"{CONNECT_SECONDS} s ({reason})") from None
    except Exception as exc:          # a reply that is not a Dask message: a server of another kind
        raise UserError(f"--scheduler {scheduler}: what answers there is not a Dask scheduler "
                        f"({exc.__class__.__name__})") from None
    kind = who.get("type") if isinstance(who, dict) else None
    if kind != "Scheduler":
        raise UserError(f"--scheduler {scheduler}: a Dask {kind or 'server'} answers there, not a scheduler")


def check_scheduler(scheduler: str) -> None:
    """Refuse (UserError) a scheduler address that no Dask scheduler answers."""
    _client(scheduler, None).close()
