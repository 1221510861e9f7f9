import pytest

from freshstack_hf.atomic import atomic_path


def test_success_replaces_the_target(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    with atomic_path(target) as tmp:
        assert tmp.parent == target.parent and tmp != target
        tmp.write_text("new")
        assert not target.exists()  # nothing visible until the block ends
    assert target.read_text() == "new"
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]


@pytest.mark.parametrize("durable", [False, True])
def test_failure_keeps_the_old_file_and_leaves_no_temporary(tmp_path, durable):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(OSError, match="disk full"), atomic_path(target, durable=durable) as tmp:
        tmp.write_text("half")
        raise OSError("disk full")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
