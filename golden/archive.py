"""The activation archive: a real model's int8 activations on disk, as
``kaleido capture`` writes them and every other command reads them.

An archive is a folder::

    manifest.json                       what is in it (below)
    step000/layer000/q.npy              int8 [heads, N, D]: each captured head's Q as the array sees it
    step000/layer000/k.npy, v.npy       the same for K and V
    step000/layer000/qkv.npy            int8 [N, C]: the input of a linear layer, one file a role

The manifest names the model (family, class, its configuration, whether its
weights were trained), the model's shape (``layers``, ``heads``, ``head_dim``,
``hidden``, ``mlp``, ``text_tokens``, ``joint_text``), the token ``grid`` and
the head's RoPE ``partition``, the denoising ``steps`` captured (their index,
noise level and timestep) out of ``total_steps``, the ``layers`` and ``heads``
captured, the quantization, and one entry per file: its ``shape``, ``dtype``
(always int8) and the quantization ``scales`` (one per head for Q, K, V, each
head's tensor quantized on its own; one for a linear layer's whole input).
Only video tokens are kept, in the order of a head's tokens (t, then y, then x).

:func:`open_archive` validates an archive before anything reads it: the
manifest's fields and types, that every file it names is there with the shape
and dtype it says, and that every scale is a finite positive number. A
capture writes into a scratch folder and renames it into place last, so an
interrupted capture never leaves a folder that reads as an archive.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass

import numpy as np

from .rope import MODELS
from .workload import WorkloadError

__all__ = ["FORMAT", "VERSION", "ROLES", "QKV", "LINEAR_ROLES", "ArchiveError", "Archive", "ArchiveWriter",
           "open_archive",
           "tensor_name", "QUANTIZATION"]

FORMAT = "kaleido-activations"
VERSION = 1

#: The attention operands, one file each per (step, layer): ``[heads, N, D]``.
QKV = ("q", "k", "v")

#: The linear layers whose inputs an archive may hold, one ``[N, width]`` file
#: each per (step, layer): the QKV projection, the attention's output
#: projection, the MLP's two layers, and a cross-attention's query and output
#: projections. A model without one (no cross-attention) has no file for it.
LINEAR_ROLES = ("qkv", "out", "mlp1", "mlp2", "cross_q", "cross_out")

ROLES = QKV + LINEAR_ROLES

QUANTIZATION = "per-tensor symmetric int8: s = max|x| / 127, q = clip(round(x / s), -128, 127)"

#: The manifest's fields and the Python types each must have.
_FIELDS = {"format": str, "version": int, "complete": bool, "model": dict, "shape": dict, "grid": list,
           "partition": list, "steps": list, "total_steps": int, "layers": list, "heads": list,
           "quantization": str, "tensors": dict}
_SHAPE = {"layers": int, "heads": int, "head_dim": int, "hidden": int, "mlp": int, "text_tokens": int,
          "joint_text": bool}


class ArchiveError(WorkloadError):
    """An activation archive that cannot be read as one."""


def tensor_name(step: int, layer: int, role: str) -> str:
    """A file's path inside the archive."""
    return f"step{step:03d}/layer{layer:03d}/{role}.npy"


@dataclass(frozen=True)
class Archive:
    """A validated archive (:func:`open_archive`).

    Members
    -------
    path : str
    manifest : dict
        The manifest as read.
    """

    path: str
    manifest: dict

    @property
    def family(self) -> str:
        return self.manifest["model"]["family"]

    @property
    def shape(self) -> dict:
        return self.manifest["shape"]

    @property
    def grid(self) -> tuple[int, int, int]:
        return tuple(self.manifest["grid"])

    @property
    def partition(self) -> tuple[int, int, int]:
        return tuple(self.manifest["partition"])

    @property
    def steps(self) -> list[int]:
        """The captured steps' indices in the model's denoising loop."""
        return [s["index"] for s in self.manifest["steps"]]

    @property
    def layers(self) -> list[int]:
        return list(self.manifest["layers"])

    @property
    def heads(self) -> list[int]:
        return list(self.manifest["heads"])

    @property
    def trained(self) -> bool:
        return bool(self.manifest["model"].get("trained"))

    def roles(self, step: int, layer: int) -> list[str]:
        """The linear layers whose inputs were captured at (step, layer)."""
        return [r for r in LINEAR_ROLES if tensor_name(step, layer, r) in self.manifest["tensors"]]

    def operands(self, step: int, layer: int, head: int) -> tuple[np.ndarray, float, np.ndarray, float,
                                                                  np.ndarray, float]:
        """``q, sq, k, sk, v, sv`` of one captured head: int8 ``[N, D]`` and their scales."""
        i = self.heads.index(head)
        out = []
        for role in QKV:
            name = tensor_name(step, layer, role)
            out += [np.ascontiguousarray(self._load(name)[i]), float(self.manifest["tensors"][name]["scales"][i])]
        return tuple(out)

    def linear_input(self, step: int, layer: int, role: str) -> tuple[np.ndarray, float]:
        """A linear layer's int8 input ``[N, width]`` at (step, layer) and its scale."""
        name = tensor_name(step, layer, role)
        return np.asarray(self._load(name)), float(self.manifest["tensors"][name]["scales"][0])

    def _load(self, name: str) -> np.ndarray:
        return np.load(os.path.join(self.path, name), mmap_mode="r", allow_pickle=False)


def _need(cond: bool, path: str, what: str) -> None:
    if not cond:
        raise ArchiveError(f"{path}: {what}")


def _check_manifest(m, path: str) -> None:
    _need(isinstance(m, dict), path, "manifest.json is not a JSON object")
    _need(m.get("format") == FORMAT, path, f"not a {FORMAT} archive (manifest format {m.get('format')!r})")
    for key, kind in _FIELDS.items():
        _need(key in m, path, f"manifest.json lacks {key!r}")
        _need(isinstance(m[key], kind) and not (kind is int and isinstance(m[key], bool)), path,
              f"manifest {key!r} must be a {kind.__name__}, got {type(m[key]).__name__}")
    _need(m["version"] == VERSION, path, f"archive version {m['version']}; this kaleido reads version {VERSION}")
    _need(m["complete"], path, "the capture that wrote it did not finish (manifest says incomplete)")
    _need(isinstance(m["model"].get("family"), str), path, "manifest model lacks its family")
    _need(m["model"]["family"] in MODELS, path, f"manifest names model family {m['model']['family']!r}, which "
          f"this kaleido does not know (it knows {', '.join(MODELS)})")
    for key, kind in _SHAPE.items():
        v = m["shape"].get(key)
        _need(isinstance(v, kind) and not (kind is int and isinstance(v, bool)), path,
              f"manifest shape {key!r} must be a {kind.__name__}, got {v!r}")
    s = m["shape"]
    _need(min(s["layers"], s["heads"], s["head_dim"], s["hidden"], s["mlp"]) >= 1 and s["text_tokens"] >= 0, path,
          "manifest shape has a size below 1")
    _need(s["heads"] * s["head_dim"] == s["hidden"], path,
          f"manifest shape: {s['heads']} heads of {s['head_dim']} are not {s['hidden']} wide")
    _need(len(m["grid"]) == 3 and all(type(v) is int and v >= 1 for v in m["grid"]), path,
          f"manifest grid {m['grid']} is not three positive integers")
    _need(len(m["partition"]) == 3 and all(type(v) is int and v >= 0 for v in m["partition"])
          and sum(m["partition"]) == s["head_dim"], path,
          f"manifest partition {m['partition']} does not split a head of {s['head_dim']}")
    _need(m["total_steps"] >= 1, path, "manifest total_steps below 1")
    _need(len(m["steps"]) >= 1, path, "manifest lists no captured step")
    for st in m["steps"]:
        _need(isinstance(st, dict) and type(st.get("index")) is int and 0 <= st["index"] < m["total_steps"], path,
              f"manifest step {st!r} has no index within the {m['total_steps']} steps")
        sigma = st.get("sigma")
        _need(isinstance(sigma, (int, float)) and math.isfinite(sigma), path, f"manifest step {st['index']}: "
              f"sigma {sigma!r} is not a finite number")
    for key, top in (("layers", s["layers"]), ("heads", s["heads"])):
        vals = m[key]
        _need(len(vals) >= 1 and all(type(v) is int and 0 <= v < top for v in vals) and len(set(vals)) == len(vals),
              path, f"manifest {key} {vals} are not distinct indices below {top}")
    steps = [st["index"] for st in m["steps"]]
    _need(len(set(steps)) == len(steps), path, "manifest lists a step twice")


def _check_tensors(m: dict, path: str) -> None:
    """Every file the manifest must name is named, is there, and is what it says."""
    s, n = m["shape"], int(np.prod(m["grid"]))
    tensors = m["tensors"]
    expected = {}
    for step in (st["index"] for st in m["steps"]):
        for layer in m["layers"]:
            for role in QKV:
                expected[tensor_name(step, layer, role)] = [len(m["heads"]), n, s["head_dim"]]
    for name in expected:
        _need(name in tensors, path, f"manifest names no {name}")
    for name, entry in tensors.items():
        _need(isinstance(entry, dict) and isinstance(entry.get("shape"), list) and isinstance(
            entry.get("scales"), list), path, f"manifest entry {name} lacks its shape or scales")
        role = os.path.basename(name)[:-len(".npy")] if name.endswith(".npy") else ""
        _need(role in ROLES, path, f"manifest entry {name} is not one of the archive's files")
        if role in QKV:
            _need(entry["shape"] == expected.get(name), path,
                  f"manifest says {name} is {entry['shape']}, the archive's heads and grid make it "
                  f"{expected.get(name)}")
        else:
            _need(len(entry["shape"]) == 2 and entry["shape"][0] == n, path,
                  f"manifest says {name} is {entry['shape']}; a linear input is [{n}, width]")
        count = entry["shape"][0] if role in QKV else 1
        _need(len(entry["scales"]) == count and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0
            for v in entry["scales"]), path, f"{name}: its scales must be {count} finite positive numbers")
        file = os.path.join(path, name)
        _need(os.path.isfile(file), path, f"{name} is missing")
        try:
            arr = np.load(file, mmap_mode="r", allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise ArchiveError(f"{path}: {name} is not an .npy file ({str(exc).splitlines()[0]})") from None
        _need(arr.dtype == np.int8, path, f"{name} is {arr.dtype}, not int8")
        _need(list(arr.shape) == entry["shape"], path, f"{name} is {list(arr.shape)}, the manifest says "
              f"{entry['shape']}")


def open_archive(path: str) -> Archive:
    """The archive at ``path``, validated; an :class:`ArchiveError` (one line) if
    it is not one."""
    if not os.path.isdir(path):
        raise ArchiveError(f"{path}: no such folder" if not os.path.exists(path) else f"{path}: not a folder")
    mpath = os.path.join(path, "manifest.json")
    if not os.path.isfile(mpath):
        raise ArchiveError(f"{path}: no manifest.json (not an archive, or a capture that did not finish)")
    try:
        with open(mpath) as fh:
            m = json.load(fh, parse_constant=lambda c: float("nan"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ArchiveError(f"{path}: manifest.json does not read as JSON ({str(exc).splitlines()[0]})") from None
    except RecursionError:
        raise ArchiveError(f"{path}: manifest.json nests deeper than a manifest does") from None
    _check_manifest(m, path)
    _check_tensors(m, path)
    return Archive(path, m)


class ArchiveWriter:
    """Writes an archive into a scratch folder beside ``path`` and moves it into
    place only when :meth:`finish` writes its manifest: a capture that stops
    midway leaves no folder at ``path`` (use it as a context manager: an
    exception removes the scratch folder)."""

    def __init__(self, path: str):
        self.path = os.path.abspath(path)
        if os.path.exists(self.path):
            raise ArchiveError(f"{path}: already exists; name a new folder")
        parent = os.path.dirname(self.path)
        if not os.path.isdir(parent):
            raise ArchiveError(f"{path}: its folder {parent} does not exist")
        self.scratch = f"{self.path}.partial-{os.getpid()}"
        os.makedirs(self.scratch)
        self.tensors: dict[str, dict] = {}

    def add(self, step: int, layer: int, role: str, data: np.ndarray, scales: list[float]) -> None:
        """One int8 file and its scales."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}")
        data = np.asarray(data)
        if data.dtype != np.int8:
            raise ValueError(f"{role}: int8 only, got {data.dtype}")
        name = tensor_name(step, layer, role)
        os.makedirs(os.path.dirname(os.path.join(self.scratch, name)), exist_ok=True)
        np.save(os.path.join(self.scratch, name), data)
        self.tensors[name] = {"shape": list(data.shape), "dtype": "int8", "scales": [float(s) for s in scales]}

    def finish(self, manifest: dict) -> Archive:
        """Write the manifest (with the files added), check the whole archive as a
        reader will, and move it into place."""
        m = dict(manifest, format=FORMAT, version=VERSION, complete=True, quantization=QUANTIZATION,
                 tensors=self.tensors)
        with open(os.path.join(self.scratch, "manifest.json"), "w") as fh:
            json.dump(m, fh, indent=1, sort_keys=True, allow_nan=False)
        open_archive(self.scratch)          # checked as a reader will, before it is in place
        os.rename(self.scratch, self.path)
        return Archive(self.path, m)

    def discard(self) -> None:
        import shutil
        shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if kind is not None:
            self.discard()
        return False
