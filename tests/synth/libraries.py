"""The cell libraries a test can name outright, as ``make setup`` fetched them
(None where a library is missing, so a test skips rather than fails).

A test that checks the flow against figures read by hand from one library's
liberty, or a netlist written in its cells, names that library; every other
test takes the flow's default (:func:`synth.flow.default_liberty`)."""

from synth.kits import LibraryError, liberty_path


def fetched(name: str) -> str | None:
    """The liberty file of the kit ``name``, or None if it was not fetched."""
    try:
        return liberty_path(name)
    except LibraryError:
        return None


OSU018_LIB = fetched("osu018")
NANGATE45_LIB = fetched("nangate45")
