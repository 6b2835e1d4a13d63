"""Attack findings of session 14 fixed as kinds (F4, F8, F9):

* a size checked with ``stat`` then an unbounded read: a symlink to ``/dev/zero`` has size 0 and was read
  until memory ran out (features file; the same read served study and users files and the model options
  file);
* YAML anchors and aliases: a 431-byte features file expanded to gigabytes when its value was printed in
  an error message, and a study file's line-recording walk followed every alias;
* links: a note listing every one of 60,000 unknown parameters (2 MB), ``int()`` taking ``1_0`` as 10.
"""
import os
import re

import pytest

from workspace.errors import CandorError

BOMB = "mean radius:\n  decimals:\n    " + "\n    ".join(
    [f"- &a0 [{', '.join(['lol'] * 9)}]"] + [f"- &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]) + "\n"


@pytest.fixture
def zero_link(tmp_path):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")

    def make(name):
        link = tmp_path / name
        link.symlink_to("/dev/zero")
        return link
    return make


def test_a_features_file_linked_to_dev_zero_is_refused_without_reading(zero_link):
    from workspace.feature_names import load_features

    with pytest.raises(CandorError, match=re.escape("features file z.yaml: not a regular file")):
        load_features(zero_link("z.yaml"), ["mean radius"])


def test_a_study_file_linked_to_dev_zero_is_an_error_at_line_1(zero_link):
    from study.schema import StudyError, load_study, validate_file

    errors = validate_file(zero_link("s.yaml"))
    assert len(errors) == 1 and errors[0].line == 1 and "not a regular file" in errors[0].message
    with pytest.raises(StudyError, match="not a regular file"):
        load_study(zero_link("t.yaml"))


def test_a_users_file_linked_to_dev_zero_is_refused(zero_link):
    from accounts.users import AccountsError, load_users

    with pytest.raises(AccountsError, match="not a regular file"):
        load_users(zero_link("users.txt"))


def test_a_data_file_linked_to_dev_zero_is_refused_before_its_size_is_estimated(zero_link):
    from workspace.tables import read_table

    with pytest.raises(CandorError, match="data file not found"):
        read_table(zero_link("d.csv"))


def test_read_bounded_reads_at_most_the_limit_even_from_a_growing_file(tmp_path):
    from workspace.safe_files import read_bounded

    f = tmp_path / "f.txt"
    f.write_bytes(b"x" * 100)
    assert read_bounded(f, 100) == b"x" * 100
    with pytest.raises(CandorError, match=re.escape("f.txt: 100 bytes; at most 99 are read")):
        read_bounded(f, 99)


def test_a_yaml_alias_bomb_in_a_features_file_is_refused_at_its_line_before_it_expands(tmp_path):
    from workspace.feature_names import load_features

    assert len(BOMB) < 600
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    with pytest.raises(CandorError, match=re.escape("bomb.yaml: line 3: anchors and aliases")):
        load_features(path, ["mean radius"])  # unguarded: 110 s and 2.5 GB before a MemoryError


def test_a_yaml_alias_bomb_in_a_study_file_is_one_error_at_its_line(tmp_path):
    from study.schema import validate_text

    text = "id: s1\nstimuli:\n  " + BOMB.replace("\n", "\n  ")
    errors = validate_text(text)
    assert [(e.line, e.message[:20]) for e in errors] == [(5, "anchors and aliases ")]


def test_a_python_tag_is_refused_by_name_before_anything_is_built(tmp_path):
    from workspace.safe_files import plain_yaml

    with pytest.raises(CandorError, match=re.escape("f.yaml: line 1: tags like tag:yaml.org,2002:python/object")):
        plain_yaml("a: !!python/object:os.system {}\n", "f.yaml")
    assert plain_yaml("a: [1, 2]\nb: {c: text}\n", "f.yaml") == {"a": [1, 2], "b": {"c": "text"}}


def test_a_link_note_names_ten_parameters_and_counts_the_rest():
    from app.shell import url_state

    problems = [f"p{i}: not a setting of this page" for i in range(60_000)]
    text = url_state.note(problems).children.children
    assert text.count("not a setting") == 10 and text.endswith("and 59,990 more") and len(text) < 1_000


@pytest.mark.parametrize("raw", ["1_0", "١٠", "3.5", " ", "+-1", "9" * 40])
def test_a_row_or_k_that_python_would_stretch_into_a_number_is_refused(raw):
    from app.shell import url_params

    with pytest.raises(url_params._Bad, match="not a whole number"):
        url_params._int(raw, 0, 10**20, None)


def test_the_row_check_takes_whole_numbers_only(sample_workspace):
    from app import services
    from app.services.tabular import check_row

    services.init(sample_workspace, warm=False)
    assert check_row("7") == 7 and check_row(7) == 7 and check_row(7.0) == 7
    for bad in ("1_0", 3.7, True, "x" * 10_000):
        with pytest.raises(CandorError, match="row must be a whole number") as err:
            check_row(bad)
        assert len(str(err.value)) < 200
