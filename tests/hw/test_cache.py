"""The one on-disk cache (hw/cache.py): a result is made once; a result shipped
with the project is copied, not made, unless shipping is off; every result that
can ship is logged with what it is."""

import json

from hw import cache


def test_a_shipped_result_is_copied_not_made(tmp_path, monkeypatch):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "pe-abc.json").write_text('{"area_um2": 1.5}')
    made = []

    def make():
        made.append(1)
        return {"area_um2": 9.0}
    monkeypatch.delenv("KALEIDO_SHIPPED", raising=False)
    assert cache.cached_json(tmp_path / "cache" / "pe-abc.json", make, shipped) == {"area_um2": 1.5}
    assert made == [] and (tmp_path / "cache" / "pe-abc.json").is_file()
    # A name the shipped folder does not hold is made, as before.
    assert cache.cached_json(tmp_path / "cache" / "pe-def.json", make, shipped) == {"area_um2": 9.0}
    assert made == [1]


def test_shipping_off_makes_every_result(tmp_path, monkeypatch):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "pe-abc.json").write_text('{"area_um2": 1.5}')
    monkeypatch.setenv("KALEIDO_SHIPPED", "0")
    assert cache.cached_json(tmp_path / "cache" / "pe-abc.json", lambda: {"area_um2": 9.0}, shipped) == \
        {"area_um2": 9.0}


def test_every_result_that_can_ship_is_logged_with_what_it_is(tmp_path, monkeypatch):
    log = tmp_path / "used.jsonl"
    monkeypatch.setenv(cache.USED, str(log))
    cache.cached_json(tmp_path / "a.json", lambda: {}, tmp_path / "shipped", {"kind": "area", "block": "pe"})
    cache.cached_json(tmp_path / "b.json", lambda: {})           # cannot ship: not logged
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert lines == [{"path": str(tmp_path / "a.json"), "shipped": str(tmp_path / "shipped"),
                      "what": {"kind": "area", "block": "pe"}}]
