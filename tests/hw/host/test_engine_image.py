"""The engine run's checker (hw/engine_image.check_run) says where a result is off in plain numbers."""

import numpy as np
import pytest

from hw.host.engine_image import check_run


def test_a_wrong_score_is_named_in_plain_integers():
    with pytest.raises(AssertionError) as exc:
        check_run(np.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 5]]), {}, None)
    assert str(exc.value) == "1 scores differ from the golden model, first at (1, 1): RTL 4 golden 5"
