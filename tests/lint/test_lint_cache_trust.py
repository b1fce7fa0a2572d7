"""The lint cache answers only with what lint itself would say: an entry that is not exactly a stored result,
that another user could have written, or that is not a bounded regular file is a miss, and a file moved to
another directory of a split intent is linted again (netfab.cli.lint_cache)."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lint_cache_helpers import no_linting, private_cache, run_lint
from lint_helpers import RAIL, REPO, merged, write_intent

from netfab.cli import lint_cache

LAB = (REPO / "intent" / "lab.yaml").read_text()
SCHEMA_ERROR = "error[SCHEMA-value] underlay.mtu"  # what lab.yaml with `mtu: 100` must report
NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return private_cache(tmp_path, monkeypatch)


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    intent = tmp_path / "bad.yaml"
    intent.write_text(LAB.replace("mtu: 9216", "mtu: 100"))
    return intent


def _stored(cache: Path, bad: Path) -> Path:
    """Lint `bad` (an error: exit 1) and return the one entry that lint stored."""
    code, out = run_lint(str(bad))
    assert code == 1 and SCHEMA_ERROR in out, out
    (entry,) = cache.glob("lint-*.json")
    return entry


def _plant_clean(entry: Path) -> dict[str, Any]:
    """Rewrite `entry` as a well-formed answer of "no findings": only where it sits and who wrote it may make
    it a miss. Returns the planted document."""
    doc: dict[str, Any] = json.loads(entry.read_text())
    doc["findings"] = []
    entry.write_text(json.dumps(doc))
    entry.chmod(0o600)
    return doc


def _answers_clean(bad: Path) -> bool:
    code, out = run_lint(str(bad))
    assert code in (0, 1), out
    return code == 0


# 1. No exit code is stored or trusted; an entry others could have written is refused.


@pytest.mark.parametrize(
    "edit",
    [{"findings": [], "exit_code": 0}, {"exit_code": 0}],
    ids=["clean-and-exit-0", "exit-0-beside-an-error"],
)
def test_an_entry_that_says_exit_0_is_a_miss_and_is_rewritten(cache: Path, bad: Path, edit: dict[str, Any]) -> None:
    entry = _stored(cache, bad)
    written = json.loads(entry.read_text())
    assert "exit_code" not in written  # the exit code follows from the findings; there is none to trust
    entry.write_text(json.dumps({**written, **edit}))
    code, out = run_lint(str(bad))
    assert code == 1 and SCHEMA_ERROR in out, out
    assert json.loads(entry.read_text()) == written


def test_a_hit_derives_its_exit_code_with_strict_as_lint_does(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warns = write_intent(merged(RAIL, {"qos": {"pfc": {"watchdog": None}}}), tmp_path / "w.yaml")
    assert run_lint("--strict", str(warns))[0] == 1
    assert run_lint(str(warns))[0] == 0
    no_linting(monkeypatch)
    code, out = run_lint("--strict", str(warns))
    assert code == 1 and "warning[PFC001]" in out, out
    code, out = run_lint(str(warns))
    assert code == 0 and "warning[PFC001]" in out, out


@pytest.mark.parametrize("mode", [0o620, 0o602], ids=["group-writable", "world-writable"])
def test_an_entry_others_may_write_is_neither_trusted_nor_replaced(cache: Path, bad: Path, mode: int) -> None:
    entry = _stored(cache, bad)
    planted = _plant_clean(entry)
    assert _answers_clean(bad)  # the planted entry is well formed: the user's own edit is the user's answer
    entry.chmod(mode)
    assert not _answers_clean(bad)
    assert json.loads(entry.read_text()) == planted and entry.stat().st_mode & 0o777 == mode


@as_root
def test_an_entry_of_another_user_is_neither_trusted_nor_replaced(cache: Path, bad: Path) -> None:
    entry = _stored(cache, bad)
    planted = _plant_clean(entry)
    os.chown(entry, NOBODY, NOBODY)
    assert not _answers_clean(bad)
    assert json.loads(entry.read_text()) == planted and entry.stat().st_uid == NOBODY


def test_an_entry_that_links_elsewhere_is_not_followed(tmp_path: Path, cache: Path, bad: Path) -> None:
    entry = _stored(cache, bad)
    _plant_clean(entry)
    elsewhere = tmp_path / "elsewhere.json"
    entry.rename(elsewhere)
    entry.symlink_to(elsewhere)
    assert not _answers_clean(bad)
    assert entry.is_symlink()  # not written through, nor replaced


@pytest.mark.parametrize("mode", [0o770, 0o707], ids=["group-writable", "world-writable"])
def test_a_cache_directory_others_may_write_is_neither_read_nor_written(
    tmp_path: Path, cache: Path, bad: Path, mode: int
) -> None:
    entry = _stored(cache, bad)
    planted = _plant_clean(entry)
    cache.chmod(mode)
    assert not _answers_clean(bad)
    assert json.loads(entry.read_text()) == planted
    other = tmp_path / "other.yaml"
    other.write_text(LAB)
    assert run_lint(str(other))[0] == 0
    assert list(cache.iterdir()) == [entry]


@as_root
def test_a_cache_directory_of_another_user_is_neither_read_nor_written(cache: Path, bad: Path) -> None:
    entry = _stored(cache, bad)
    planted = _plant_clean(entry)
    os.chown(cache, NOBODY, NOBODY)
    assert not _answers_clean(bad)
    assert json.loads(entry.read_text()) == planted


def test_a_linked_cache_directory_caches_while_the_directory_is_private(
    tmp_path: Path, cache: Path, bad: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real-cache"
    real.mkdir(mode=0o700)
    cache.symlink_to(real)
    entry = _stored(cache, bad)
    assert entry.parent.resolve() == real
    with monkeypatch.context() as m:
        no_linting(m)
        assert run_lint(str(bad))[0] == 1
    _plant_clean(entry)
    assert _answers_clean(bad)
    real.chmod(0o770)  # what the link leads to is what must be private
    assert not _answers_clean(bad)


@as_root
def test_a_link_of_another_user_to_a_cache_directory_is_not_followed(tmp_path: Path, cache: Path, bad: Path) -> None:
    real = tmp_path / "real-cache"
    real.mkdir(mode=0o700)
    cache.symlink_to(real)
    entry = _stored(cache, bad)
    _plant_clean(entry)
    os.lchown(cache, NOBODY, NOBODY)
    assert not _answers_clean(bad)


# 2. An entry of the wrong shape is a miss, never an internal error.


def _finding(change: dict[str, Any]) -> Callable[[str], str]:
    def edit(text: str) -> str:
        doc = json.loads(text)
        doc["findings"][0].update(change)
        return json.dumps(doc)

    return edit


def _deeply_nested(text: str) -> str:
    doc = json.loads(text)
    doc["findings"][0]["hint"] = None
    depth = 100_000  # past any recursion limit of the JSON parser
    return json.dumps(doc).replace('"hint": null', '"hint": ' + "[" * depth + "]" * depth)


@pytest.mark.parametrize(
    "edit",
    [
        _finding({"related": [[1, 2, 3]]}),
        _finding({"subject": [1]}),
        _deeply_nested,
        _finding({"location": ["bad.yaml", "30", 8]}),
        _finding({"location": ["bad.yaml", True, 8]}),
        _finding({"severity": "fatal"}),
        _finding({"status": "error"}),
        _finding({"expected": {"mtu": 9216}}),
        _finding({"extra": 1}),
        lambda text: text.replace('"format": 2', '"format": true'),
        lambda text: text.replace('"skipped": []', '"skipped": [1]'),
        lambda text: text[: len(text) // 2],
        lambda text: "[]",
    ],
    ids=[
        "related-not-locations",
        "subject-not-text",
        "nested-past-the-parser",
        "line-as-text",
        "line-as-bool",
        "unknown-severity",
        "status-lint-never-stores",
        "expected-lint-never-sets",
        "unknown-key",
        "format-as-bool",
        "skipped-not-rule-ids",
        "torn",
        "not-an-object",
    ],
)
def test_an_entry_of_the_wrong_shape_is_a_miss_and_is_rewritten(
    cache: Path, bad: Path, edit: Callable[[str], str]
) -> None:
    entry = _stored(cache, bad)
    written = entry.read_text()
    assert '"format": 2' in written and '"skipped": []' in written  # the edits above do change something
    entry.write_text(edit(written))
    code, out = run_lint(str(bad))
    assert code == 1 and SCHEMA_ERROR in out, out
    assert entry.read_text() == written


# 3. Only a regular file of bounded size is read, and opening an entry never blocks.


def test_an_entry_that_is_a_fifo_is_a_miss_without_waiting(cache: Path, bad: Path) -> None:
    entry = _stored(cache, bad)
    entry.unlink()
    os.mkfifo(entry, 0o600)
    outcome: list[tuple[int, str]] = []
    linting = threading.Thread(target=lambda: outcome.append(run_lint(str(bad))), daemon=True)
    linting.start()
    linting.join(timeout=30)
    if linting.is_alive():  # blocked opening the FIFO: a writer's open (then EOF) lets it go
        os.close(os.open(entry, os.O_WRONLY | os.O_NONBLOCK))
        linting.join(timeout=30)
        pytest.fail("lint waited for a writer of the FIFO cache entry")
    (code, out), *_ = outcome
    assert code == 1 and SCHEMA_ERROR in out, out
    assert entry.is_file()  # the user's own FIFO is no answer: replaced by the one lint gave


def test_a_fifo_entry_is_not_read_even_when_a_writer_offers_an_answer(cache: Path, bad: Path) -> None:
    entry = _stored(cache, bad)
    planted = json.dumps(_plant_clean(entry))
    entry.unlink()
    os.mkfifo(entry, 0o600)
    writer = os.open(entry, os.O_RDWR | os.O_NONBLOCK)  # Linux opens a FIFO read-write without waiting
    try:
        os.write(writer, planted.encode())  # what a reader of the FIFO would get: a clean answer
        assert not _answers_clean(bad)
    finally:
        os.close(writer)


def test_an_entry_over_the_size_cap_is_not_read(cache: Path, bad: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lint_cache, "MAX_ENTRY_BYTES", 4096)
    entry = _stored(cache, bad)
    planted = json.dumps(_plant_clean(entry))
    entry.write_text(planted + " " * (4097 - len(planted)))
    assert not _answers_clean(bad)
    entry.write_text(planted)
    assert _answers_clean(bad)  # the same entry within the cap is read


# 4. The key covers each file's path as the loader read it, not only its base name.


def test_a_file_moved_to_another_directory_of_a_split_intent_is_linted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    lines = LAB.splitlines(keepends=True)
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    Path("d1/a.yaml").write_text("".join(lines[:27]))  # version, fabric, topology
    Path("d1/b.yaml").write_text("underlay:\n  addressing: unnumbered\n  mtu: 100\n")
    Path("d2/c.yaml").write_text("".join(lines[30:]))  # qos and the rest
    code, out = run_lint("d1", "d2")
    assert code == 1 and f"d1/b.yaml:3:8: {SCHEMA_ERROR}" in out, out
    with monkeypatch.context() as m:
        no_linting(m)
        assert run_lint("d1", "d2") == (code, out)  # unmoved: still answered from the cache
    shutil.move("d1/b.yaml", "d2/b.yaml")  # same bytes, same base names, same merge order a, b, c
    code, out = run_lint("d1", "d2")
    assert code == 1 and f"d2/b.yaml:3:8: {SCHEMA_ERROR}" in out and "d1/b.yaml" not in out, out
