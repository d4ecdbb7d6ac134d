"""The sign-off results that ship (synth/characterize.py, synth/shipped.py): each
one's name is what today's Verilog, library and tools give (else it is stale and
this fails: run `make characterize`); collecting a run's log ships what it used
and nothing else; a shipped result is what a cold run computes."""

import json
import os

import pytest

from synth import characterize, shipped
from synth.kits import LibraryError, liberty_path


def _have(library: str | None) -> bool:
    try:
        return library is None or bool(liberty_path(library))
    except LibraryError:
        return False


# Naming a result emits its block's Verilog: an engine's takes tens of seconds, so make test
# names the small blocks' results (every kind, both libraries) and CI names them all.
SMALL = ("pe", "baseline-pe", "scheduler", "softmax")


def _check_names(entries: dict) -> None:
    assert entries, "nothing ships: run `make characterize`"
    assert characterize.stale(entries) == [], "stale shipped results: run `make characterize`"
    for key in entries:
        assert (shipped.CHARACTERIZED / key).is_file(), key


def test_the_small_blocks_shipped_results_are_todays():
    """One small block's result of each kind on each library (each design point named emits its Verilog)."""
    entries = {}
    for k, w in characterize.manifest().items():
        if _have(w["library"]) and w["block"] in SMALL:
            entries.setdefault((w["kind"], w["library"]), {k: w})
    assert {kind for kind, _ in entries} == set(shipped.KINDS)
    _check_names({k: w for one in entries.values() for k, w in one.items()})


@pytest.mark.ci
def test_every_shipped_result_is_todays():
    _check_names({k: w for k, w in characterize.manifest().items() if _have(w["library"])})


def test_a_stale_result_is_named():
    """A field no gate depends on keeps a result's name; a clock it was mapped for does not."""
    key, what = next((k, w) for k, w in characterize.manifest().items() if w["kind"] == "area" and _have(w["library"]))
    reseeded = json.loads(what["config"])
    reseeded["seed"] += 1                      # the seed shapes workloads, not the Verilog's logic
    assert characterize.stale({key: {**what, "config": json.dumps(reseeded)}}) == []
    faster = json.loads(what["config"])
    faster["chip"]["clock_mhz"] += 100.0       # mapped for another clock: another result
    assert characterize.stale({key: {**what, "config": json.dumps(faster)}}) == [key]


def test_collecting_a_log_ships_what_it_used_and_prunes_the_rest(tmp_path, monkeypatch):
    monkeypatch.setattr(shipped, "CHARACTERIZED", tmp_path / "characterized")
    monkeypatch.setattr(characterize, "CHARACTERIZED", tmp_path / "characterized")
    monkeypatch.setattr(characterize, "MANIFEST", tmp_path / "characterized" / "manifest.json")
    old = tmp_path / "characterized" / "area" / "pe-old.json"
    old.parent.mkdir(parents=True)
    old.write_text("{}")
    made = tmp_path / "cache" / "pe-new.json"
    made.parent.mkdir()
    # measured in another checkout (a fresh clone's): its path within the project ships
    made.write_text(json.dumps({"area_um2": 2.0, "liberty": str(tmp_path / "clone" / ".cache/x/y.lib")}))
    log = tmp_path / "used.jsonl"
    what = {"kind": "area", "block": "pe", "config": "{}", "library": "osu018"}
    log.write_text("".join(json.dumps({"path": str(p), "shipped": "", "what": what}) + "\n"
                           for p in (made, tmp_path / "cache" / "never-made.json")))
    entries = characterize.collect([log], prune=True)
    assert entries == {"area/pe-new.json": what} and not old.exists()
    got = json.loads((tmp_path / "characterized" / "area" / "pe-new.json").read_text())
    assert got == {"area_um2": 2.0, "liberty": ".cache/x/y.lib"}     # no machine's path ships
    assert json.loads(characterize.MANIFEST.read_text()) == entries


@pytest.mark.skipif(not _have("osu018") or not _have("nangate45"), reason="make setup fetches both libraries")
def test_a_shipped_result_is_what_a_cold_run_computes(tmp_path, monkeypatch):
    """The PE's area on each library, synthesized cold, against the shipped figures."""
    import synth.area
    from golden.config import Config
    from synth.area import block_area

    monkeypatch.setattr(synth.area, "CACHE", tmp_path)
    monkeypatch.setenv("KALEIDO_SHIPPED", "0")
    checked = 0
    for key, what in characterize.manifest().items():
        if what["kind"] == "area" and what["block"] == "pe":
            cold = block_area("pe", Config.from_json(what["config"]), liberty_path(what["library"]))
            ship = json.loads((shipped.CHARACTERIZED / key).read_text())
            # The PE meets hold: no delay cell is added to what synthesis gave.
            assert cold.pop("hold_repair") is None
            assert {**cold, "liberty": None} == {**ship, "liberty": None}, key
            assert os.path.samefile(cold["liberty"], characterize.ROOT / ship["liberty"])
            checked += 1
    assert checked >= 1


def test_dropping_the_stale_results_keeps_the_rest(tmp_path, monkeypatch):
    monkeypatch.setattr(characterize, "CHARACTERIZED", tmp_path)
    monkeypatch.setattr(characterize, "MANIFEST", tmp_path / "manifest.json")
    entries = {f"area/pe-{n}.json": {"kind": "area", "block": "pe", "n": n} for n in ("old", "new")}
    for key in entries:
        (tmp_path / key).parent.mkdir(exist_ok=True)
        (tmp_path / key).write_text("{}")
    characterize.MANIFEST.write_text(json.dumps(entries))
    monkeypatch.setattr(characterize, "stale", lambda e: [k for k in e if "old" in k])
    assert characterize.main(["--drop-stale"]) == 0
    assert json.loads(characterize.MANIFEST.read_text()) == {"area/pe-new.json": entries["area/pe-new.json"]}
    assert not (tmp_path / "area/pe-old.json").exists() and (tmp_path / "area/pe-new.json").exists()
