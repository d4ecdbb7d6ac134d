"""Output places every ``kaleido`` subcommand shares: checked before any work,
written whole or not at all, one run a folder, and JSON that stays valid."""

from __future__ import annotations

import fcntl
import json
import math
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..errors import UserError

__all__ = ["check_output_file", "check_output_dir", "atomic_output", "write_npy", "write_json", "lock_folder",
           "keep_waves", "run_folder", "json_safe", "print_json"]


def _writable_ancestor(path: str) -> str:
    # The nearest folder that exists above path: what decides whether it can be made.
    probe = os.path.dirname(path)
    while probe and not os.path.exists(probe):
        probe = os.path.dirname(probe)
    return probe or "."


#: The project's own sources: no command writes into them.
_ROOT = Path(__file__).resolve().parents[2]
_SOURCES = ("golden", "hw", "sim", "tb", "synth", "tests", ".git")


def _refuse_sources(path: str, target: str, what: str) -> None:
    real = Path(os.path.realpath(target))
    for name in _SOURCES:
        if real == _ROOT / name or (_ROOT / name) in real.parents:
            raise UserError(f"{what} {path} is inside the project's own source ({name}/); "
                            f"write it somewhere else")


#: Room a run needs below its folder, for its scratch folders and the simulators' files in them.
_ROOM = 512


def _refuse_long(path: str, target: str, what: str) -> None:
    longest = max(len(part.encode()) for part in Path(target).parts)
    name_max = os.pathconf("/", "PC_NAME_MAX")
    if longest > name_max:
        raise UserError(f"{what}: a folder name in it is {longest} bytes long; "
                        f"the file system takes at most {name_max}")
    path_max = os.pathconf("/", "PC_PATH_MAX")
    if len(target.encode()) + _ROOM > path_max:
        raise UserError(f"{what}: the path is {len(target.encode())} bytes long; a run needs it under "
                        f"{path_max - _ROOM} to leave room for the files inside")


def check_output_file(path: str, what: str = "--out", suffix: str = "") -> str:
    """Check that ``path`` can become a file, before any work; return it absolute.
    An existing file is replaced only if it is of the kind written (``suffix``)."""
    if not path:
        raise UserError(f"{what} is empty: name a file")
    target = os.path.abspath(path)
    _refuse_sources(path, target, what)
    if suffix and os.path.isfile(target) and not target.endswith(suffix):
        raise UserError(f"{what} {path} exists and is not a {suffix} file; name a new file or a {suffix} one")
    if os.path.isdir(target):
        raise UserError(f"{what} {path} is a folder; name a file")
    # Only a regular file, or a new name, is replaced: a rename over a device, a
    # FIFO or a socket would replace the node itself (/dev/null, run as root).
    if os.path.lexists(target) and not stat.S_ISREG(os.stat(target).st_mode if os.path.exists(target)
                                                     else os.lstat(target).st_mode):
        raise UserError(f"{what} {path} is not a regular file; name a new file or a regular one")
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise UserError(f"output folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise UserError(f"{what} {path}: folder {folder} is not writable")
    return target


def check_output_dir(path: str, what: str = "--out") -> str:
    """Check that ``path`` is, or can become, a writable folder, without making it yet."""
    if not path:
        raise UserError(f"{what} is empty: name a folder")
    target = os.path.abspath(path)
    _refuse_sources(path, target, what)
    _refuse_long(path, target, what)
    if os.path.islink(target) and not os.path.exists(target):
        raise UserError(f"{what} {path} is a symbolic link to nothing; remove it or name another folder")
    if os.path.exists(target):
        if not os.path.isdir(target):
            raise UserError(f"{what} {path} is a file; name a folder")
        if not os.access(target, os.W_OK):
            raise UserError(f"{what} {path} is not writable")
        return target
    parent = _writable_ancestor(target)
    if not os.path.isdir(parent):
        raise UserError(f"{what} {path}: {parent} is a file, so the folder cannot be made")
    if not os.access(parent, os.W_OK):
        raise UserError(f"{what} {path}: cannot make it, {parent} is not writable")
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_output(path: str, suffix: str = ""):
    """Yield a temporary path beside ``path``; rename it into place on success only.

    The file gets the mode ``open()`` would give it (0666 less the umask), not
    the private 0600 of a temporary file.
    """
    target = check_output_file(path, suffix=suffix)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".kaleido-", suffix=suffix, dir=os.path.dirname(target))
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror}") from None
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_npy(path, array) -> None:
    """``np.save`` to ``path``, whole or not at all."""
    with atomic_output(str(path), ".npy") as tmp:
        with open(tmp, "wb") as f:
            np.save(f, array)


def write_json(path, obj) -> None:
    """``obj`` as indented JSON (keys sorted) to ``path``, whole or not at all."""
    with atomic_output(str(path), ".json") as tmp:
        with open(tmp, "w") as f:
            f.write(json.dumps(obj, indent=2, sort_keys=True) + "\n")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True                     # someone else's process, alive
    return True


def _remove_orphans(out: Path) -> None:
    """Scratch folders of runs that were killed outright (SIGKILL, a power cut): their
    names carry their process id, and a process that is gone cannot come back for them."""
    for old in out.glob(".work-*-*"):
        pid = old.name.split("-")[1]
        if pid.isdigit() and not _alive(int(pid)) and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


RUN_LOCK = ".kaleido-run.lock"


def lock_folder(lock_path, taken: str):
    """The open lock file ``lock_path``, held (an exclusive ``flock``) until it is
    closed; a UserError ``taken`` if another process holds it."""
    lock = open(lock_path, "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        raise UserError(f"{taken}; wait for it, or name another folder") from None
    return lock


#: The waveforms a run copied into its folder, by name: what the next run removes
#: (and nothing else of the folder's, a user's own waveform included).
WAVES_LIST = ".kaleido-waves"


def keep_waves(work: Path, out: Path, suffixes: tuple) -> None:
    """Copy the waveforms the simulators left under ``work`` into ``out`` and list
    them in :data:`WAVES_LIST`. The engine's keeps its name; others are named by
    their bench's folder."""
    names = []
    for f in sorted(work.rglob("*")):
        if f.suffix in suffixes:
            rel = f.relative_to(work).parts
            name = f.name if rel[0].startswith("build_") or len(rel) == 1 else f"{rel[0]}_{f.name}"
            shutil.copy(f, out / name)
            names.append(name)
    (out / WAVES_LIST).write_text("".join(n + "\n" for n in names))


def _last_waves(out: Path) -> list[Path]:
    listed = out / WAVES_LIST
    if not listed.is_file():
        return []
    names = [n for n in listed.read_text().splitlines() if n and "/" not in n and n not in (".", "..")]
    return [out / n for n in names] + [listed]


def _remove_made(made: list) -> None:
    # Every folder a run made goes, innermost first, but only while empty: another
    # run writing into the same --out keeps its folder (and its own scratch).
    for folder in made:
        try:
            folder.rmdir()
        except OSError:
            break


@contextmanager
def run_folder(path: str, outputs: tuple):
    """The output folder of a simulation command, yielded as ``(folder, scratch)``.

    The folder is made if missing and the last run's ``outputs`` (and the
    waveforms it listed, :func:`keep_waves`) leave it first, so a failed run
    leaves no old figures; ``scratch`` is a ``.work-PID-*`` folder inside it for
    the simulators (a killed run's, whose process is gone, is removed by the
    next run). On failure, from the first folder made on, the folders this run
    made (``nest/x/y``: all three) go while empty; the scratch folder always
    goes. ``KALEIDO_KEEP_WORK=1`` keeps both, to look into.
    """
    out = Path(path).absolute()
    made = []                       # the folders this run makes, innermost first
    for folder in [out, *out.parents]:
        if folder.exists():
            break
        made.append(folder)
    keep = os.environ.get("KALEIDO_KEEP_WORK")
    lock_path, lock = out / RUN_LOCK, None
    try:
        out.mkdir(parents=True, exist_ok=True)
        # One run a folder: two at once would delete and interleave each other's files.
        lock = lock_folder(lock_path, f"--out {path}: another kaleido run is writing there")
        for old in [out / n for n in outputs] + _last_waves(out):
            old.unlink(missing_ok=True)
        _remove_orphans(out)
        work = Path(tempfile.mkdtemp(prefix=f".work-{os.getpid()}-", dir=out))
    except BaseException:
        # A path too long for the scratch, say: what this run made goes.
        if lock is not None:
            lock_path.unlink(missing_ok=True)
            lock.close()
        _remove_made(made)
        raise
    try:
        yield out, work
    except BaseException:
        lock_path.unlink(missing_ok=True)
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
            _remove_made(made)      # a failed run has written no outputs of its own
        raise
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
        lock_path.unlink(missing_ok=True)
        lock.close()


def json_safe(obj):
    """Numbers as JSON can hold them: infinities (a PSNR of identical outputs) become null."""
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return None if not math.isfinite(obj) else float(obj)
    return obj


def print_json(obj) -> None:
    print(json.dumps(json_safe(obj), indent=2, sort_keys=True))
