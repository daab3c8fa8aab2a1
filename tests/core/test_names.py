"""The one rule for names: a run's or a search's name is a folder name inside results_dir."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ludwig_nb.core.names import MAX_NAME, safe_name
from ludwig_nb.store.rundir import is_valid_run_id


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("../../x", "x"),
        ("my run", "my-run"),
        ("a/../../b", "a-b"),
        ("/", "run"),
        ("..", "run"),
        ("v1.2_b", "v1.2_b"),
        ("<b>hi</b>", "b-hi-b"),
    ],
)
def test_names_are_reduced_to_a_safe_folder_name(name, slug):
    assert safe_name(name) == slug


@given(st.text(max_size=200))
def test_every_name_is_one_safe_component_and_a_valid_run_id_start(name):
    slug = safe_name(name)
    assert slug and len(slug) <= MAX_NAME and "/" not in slug and ".." not in slug
    assert slug[0] not in ".-" and slug[-1] not in ".-"
    assert is_valid_run_id(f"{slug}-20260101-000000-ab12")
