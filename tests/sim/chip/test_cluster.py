"""The Dask cluster an estimate runs on: a scheduler address is checked to be a
Dask scheduler before any work (a web server there is named, never waited on
for ever), and Ctrl-C on a local cluster ends in one line."""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sim.chip import cluster
from sim.errors import UserError


def _server(reply: bytes | None):
    """A TCP server on a free port that answers every connection with ``reply``
    (None: says nothing), as a web server or a stuck service would."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()

    def serve():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            conn.recv(1 << 16)
            if reply is not None:
                conn.sendall(reply)
            threading.Timer(30, conn.close).start()
    threading.Thread(target=serve, daemon=True).start()
    return sock


@pytest.mark.parametrize("reply", [b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 40, None],
                         ids=["web-server", "silent"])
def test_a_server_that_is_not_dask_is_named(monkeypatch, reply):
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 2)
    sock = _server(reply)
    address = "tcp://127.0.0.1:%d" % sock.getsockname()[1]
    start = time.monotonic()
    # A server that answers in another protocol is named so; one that says nothing
    # may fail Dask's own handshake first, as an address where no scheduler answers.
    with pytest.raises(UserError, match="not a Dask scheduler" if reply else "Dask scheduler") as err:
        cluster.check_scheduler(address)
    sock.close()
    assert time.monotonic() - start < 20 and "\n" not in str(err.value)


def test_a_dask_scheduler_passes_the_check():
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, protocol="tcp", dashboard_address=":0") as local:
        cluster.check_scheduler(local.scheduler_address)


ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import os, signal, sys, time
from sim.cli.entry import on_interrupt


def main():
    signal.signal(signal.SIGINT, on_interrupt)
    from sim.chip.cluster import dask_client
    try:
        with dask_client(None, 2) as client:
            c = client()
            futures = [c.submit(time.sleep, 60, pure=False) for _ in range(2)]
            print("running", flush=True)
            for f in futures:
                f.result()
    except KeyboardInterrupt:
        print("kaleido: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
"""


def test_ctrl_c_on_a_local_cluster_is_one_line(tmp_path):
    script = tmp_path / "shards.py"
    script.write_text(SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout.readline().strip() == "running"
    time.sleep(1)
    os.killpg(proc.pid, signal.SIGINT)              # as a terminal's Ctrl-C: every process of the group
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "kaleido: interrupted", err
