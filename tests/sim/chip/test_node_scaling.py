"""The scaling equations, held to the published paper's own worked numbers."""

import pytest

from sim.chip.node_scaling import DENSITY, energy_factor, scale_area, scale_delay, scale_energy


def test_the_papers_worked_example():
    # Stillmaker and Baas's erratum to their section 4.2: energy factors of 32 nm
    # HP at 0.9 V and of 65 nm at 1.3 V, and a 1 pJ operation brought across.
    assert energy_factor(32, 0.9) == pytest.approx(0.4571, abs=1e-4)
    assert energy_factor(65, 1.3) == pytest.approx(2.604, abs=1e-3)
    assert scale_energy(1.0, (65, 1.3), (32, 0.9)) == pytest.approx(0.1755, abs=1e-4)


def test_from_this_projects_node_to_the_papers():
    # 180 nm at 1.8 V to 16 nm HP at 0.8 V: about 99x the density, 219x less energy, 12x less delay.
    assert scale_area(99.0, 180, 16) == pytest.approx(1.0)
    assert 1 / scale_energy(1.0, (180, 1.8), (16, 0.8)) == pytest.approx(26.372 / 0.120272, rel=1e-6)   # 219.3
    assert 1 / scale_delay(1.0, (180, 1.8), (16, 0.8)) == pytest.approx(79.0116 / 6.726, rel=1e-6)     # 11.75
    assert scale_energy(3.0, (45, 0.9), (45, 0.9)) == 3.0
    assert list(DENSITY) == sorted(DENSITY, reverse=True)


def test_an_unknown_node_is_refused():
    with pytest.raises(ValueError, match="no scaling equations for 28 nm"):
        scale_area(1.0, 180, 28)
    with pytest.raises(ValueError, match="HP or LP"):
        energy_factor(16, 0.8, "ULP")
