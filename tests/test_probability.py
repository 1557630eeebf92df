"""``verify.probability`` is ``WEIGHTS . feature_vector`` unrolled for speed: they must agree."""
from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from resolvers.verification.verify import PLATT, WEIGHTS, Features, feature_vector, probability

# title similarities near the hinges (0.9, 0.97) as well as anywhere in [0, 1]
titles = st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.9, 0.97, 1.0]),
                   st.floats(0.89, 0.98))
signs = st.sampled_from([-1, 0, 1])


def reference_probability(f: Features) -> float:
    """The model as written down: bias plus weights times the feature vector, then Platt."""
    weights = list(WEIGHTS.values())
    z = weights[0] + sum(w * x for w, x in zip(weights[1:], feature_vector(f), strict=True))
    z = PLATT[0] * z + PLATT[1]
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


@settings(max_examples=500, deadline=None)
@given(title=titles, title_len=st.floats(0.0, 3.0), author=signs, year=signs, volume=signs, page=signs,
       venue=signs, aligned=st.sampled_from([0, 1]))
def test_probability_is_the_weighted_feature_vector(title, title_len, author, year, volume, page, venue, aligned):
    f = Features(title, title_len, author, year, volume, page, venue, aligned)
    assert len(feature_vector(f)) == len(WEIGHTS) - 1
    assert math.isclose(probability(f), reference_probability(f), rel_tol=1e-9, abs_tol=1e-12)
