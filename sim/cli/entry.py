"""The ``kaleido`` command's entry point: nothing heavy is imported before it runs.

An interrupt while the command's modules load (Amaranth, numpy, the simulators'
runners: a second or more) would otherwise end in a traceback; here it ends as
any other interrupted run does, with one line and exit 130.

An interrupt that lands in an object's destructor (Amaranth checks its
elaboratables in ``__del__``) would be printed and dropped by Python, and the
run would carry on to exit 0. The handler sees that it is inside a ``__del__``
and asks again a moment later, outside it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

__all__ = ["run", "on_interrupt"]

#: How long a deferred interrupt waits before it is sent again (seconds).
RETRY_S = 0.05


def on_interrupt(signum, frame) -> None:
    """SIGINT: KeyboardInterrupt, unless a destructor would swallow it (then later)."""
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            threading.Timer(RETRY_S, os.kill, (os.getpid(), signal.SIGINT)).start()
            return
        frame = frame.f_back
    raise KeyboardInterrupt


def run(argv=None) -> int:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, on_interrupt)
    try:
        from sim.cli.main import main
    except KeyboardInterrupt:
        print("kaleido: interrupted", file=sys.stderr)
        return 130
    return main(argv)
