"""A rebuild after an edit that changes the intent's bytes but not what it says (a comment, the order of keys)
restamps the manifest and writes nothing else: netfab.render.manifest.SameModel, netfab.cli.build_cmd."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from netfab.load import IntentSource
from netfab.render.manifest import MANIFEST, SameModel, read_manifest, up_to_date
from tests.scale.conftest import Cli

ROOT = Path(__file__).resolve().parents[2]
RAIL = ROOT / "intent" / "rail-4su.yaml"
SUPERPOD = ROOT / "intent" / "superpod-su.yaml"
SAME = "is up to date: the intent's text changed but not what it says"


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every path but the manifest: (inode, mtime)."""
    return {
        str(p.relative_to(root)): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.name != MANIFEST
    }


def _edited(tmp_path: Path, source: Path, edit: str = "comment") -> Path:
    text = source.read_text(encoding="utf-8")
    if edit == "comment":
        text = "# a comment the reviewer asked for\n" + text.replace("\nqos:", "\n# the lossless classes\nqos:", 1)
    elif edit == "default":
        # A value the intent leaves to its default, written out: the same value, but the input says it.
        assert "max_paths" not in text
        text = text.replace("underlay:\n", "underlay:\n  max_paths: 64\n", 1)
    else:
        text = text.replace("kmin: 150KB", "kmin: 200KB")
    path = tmp_path / "edited" / source.name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _built(cli: Cli, intent: Path, out: Path, *extra: str) -> str:
    code, text = cli("build", str(intent), "-o", str(out), "-q", *extra)
    assert code == 0, text
    return text


def test_a_comment_restamps_the_manifest_and_writes_nothing_else(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    _built(cli, RAIL, out)
    tree = out / "rail-4su"
    before, tree_inode, manifest = _files(tree), tree.stat().st_ino, read_manifest(tree)
    assert manifest is not None and manifest.model is not None
    edited = _edited(tmp_path, RAIL)
    text = _built(cli, edited, out)
    assert SAME in text and "built " not in text
    assert _files(tree) == before and tree.stat().st_ino == tree_inode  # nothing rendered, nothing swapped
    after = read_manifest(tree)
    assert after is not None and after.model == manifest.model and after.files == manifest.files
    assert after.inputs != manifest.inputs  # it names the edited intent's bytes now
    # ... so the next build of the edited intent is the plain no-op, and a fresh build agrees file for file.
    assert "built from these inputs and unchanged since" in _built(cli, edited, out)
    fresh = tmp_path / "fresh"
    _built(cli, edited, fresh)
    made = read_manifest(fresh / "rail-4su")
    assert made is not None and made.inputs == after.inputs and made.model == after.model
    assert {k: (r.digest, r.inputs) for k, r in made.files.items()} == {
        k: (r.digest, r.inputs) for k, r in after.files.items()
    }
    assert sorted(p.name for p in out.iterdir()) == ["rail-4su"]  # no staging tree, no temporary manifest


def test_a_default_written_out_or_a_knob_is_a_rebuild(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    _built(cli, RAIL, out)
    # The same value the default gives, now stated: the validated intent says more (lint rules read what was
    # stated), so it is designed and rendered again, and every file comes out the same.
    text = _built(cli, _edited(tmp_path, RAIL, "default"), out)
    assert SAME not in text and "built " in text and ", 0 written)" in text
    text = _built(cli, _edited(tmp_path, RAIL, "knob"), out)
    assert SAME not in text and "written)" in text and ", 0 written)" not in text


def test_other_options_a_hand_edit_or_an_older_manifest_are_a_rebuild(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    _built(cli, RAIL, out)
    edited = _edited(tmp_path, RAIL)
    assert SAME not in _built(cli, edited, out, "--strict")  # built under other options
    _built(cli, RAIL, out)
    config = next((out / "rail-4su" / "configs").iterdir())
    original = config.read_bytes()
    config.write_bytes(original + b"! hand edit\n")
    text = _built(cli, edited, out)
    assert SAME not in text and config.read_bytes() == original
    # A manifest without a model (an older netfab's) is never taken for one.
    path = out / "rail-4su" / MANIFEST
    data = json.loads(path.read_text())
    del data["model"]
    path.write_text(json.dumps(data))
    assert SAME not in _built(cli, RAIL, out)


def test_every_network_must_be_the_same(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    _built(cli, SUPERPOD, out)
    trees = sorted(p.name for p in out.iterdir())
    assert len(trees) == 3
    edited = _edited(tmp_path, SUPERPOD)
    before = {t: _files(out / t) for t in trees}
    assert "are up to date: the intent's text changed" in _built(cli, edited, out)
    assert {t: _files(out / t) for t in trees} == before
    # One network's tree gone: the whole intent is built again (each network keeps its own unchanged files).
    _built(cli, SUPERPOD, out)
    storage = next(t for t in trees if t.endswith("-storage"))
    os.rename(out / storage, tmp_path / "moved")
    text = _built(cli, edited, out)
    assert SAME not in text and "are up to date" not in text and (out / storage).is_dir()
    # --network builds and checks that network alone.
    assert SAME in _built(cli, SUPERPOD, out, "--network", "storage")


def test_a_restamp_lands_in_the_tree_it_checked(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    _built(cli, RAIL, out)
    manifest = read_manifest(out / "rail-4su")
    assert manifest is not None and manifest.model is not None
    held = SameModel.check(out, "rail-4su", manifest.model)
    assert held is not None
    assert SameModel.check(out, "rail-4su", "another model") is None
    try:
        # Another build swaps its tree in between the check and the stamp.
        os.rename(out / "rail-4su", tmp_path / "replaced")
        (out / "rail-4su").mkdir()
        held.restamp("new inputs")
    finally:
        held.close()
    assert not (out / "rail-4su" / MANIFEST).exists()
    stamped = read_manifest(tmp_path / "replaced")
    assert stamped is not None and stamped.inputs == "new inputs" and stamped.files == manifest.files


def test_a_symlinked_tree_is_never_checked(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "build"
    _built(cli, RAIL, out)
    manifest = read_manifest(out / "rail-4su")
    assert manifest is not None and manifest.model is not None
    os.rename(out / "rail-4su", tmp_path / "elsewhere")
    (out / "rail-4su").symlink_to(tmp_path / "elsewhere")
    assert SameModel.check(out, "rail-4su", manifest.model) is None


@pytest.mark.parametrize("intent", [RAIL, SUPERPOD])
def test_the_model_digest_is_the_same_in_every_process(intent: Path) -> None:
    script = (
        "import sys; from pathlib import Path\n"
        "from netfab.load import load_intent_source\n"
        "from netfab.lint.api import validate\n"
        "from netfab.render.manifest import model_digest\n"
        "intent, _ = validate(load_intent_source([Path(sys.argv[1])]))\n"
        "print([model_digest(intent, n, 'strict=False', 'code') for n in intent.network_names()])\n"
    )
    seen = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", script, str(intent)], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        seen.add(done.stdout)
    assert len(seen) == 1 and "None" not in seen.pop()


def test_the_head_only_ever_spares_a_parse(cli: Cli, tmp_path: Path) -> None:
    """The manifest's head (format, inputs, model, as netfab writes it) answers "not these inputs" or "not this
    model" without parsing 19,000 file records; any other answer comes from the full parse."""
    out = tmp_path / "build"
    _built(cli, RAIL, out)
    path = out / "rail-4su" / MANIFEST
    data = json.loads(path.read_text())
    inputs, model = data["inputs"], data["model"]
    assert up_to_date("rail-4su", out, inputs) is not None
    assert up_to_date("rail-4su", out, "0" * 40) is None
    # Keys in another order: no head of netfab's form, so the full parse answers, the same way.
    path.write_text(json.dumps({"files": data["files"], "model": model, "inputs": inputs, "format": 2}))
    assert up_to_date("rail-4su", out, inputs) is not None
    held = SameModel.check(out, "rail-4su", model)
    assert held is not None
    held.close()
    # A head that names these inputs while a later key says otherwise: the full parse has the last word.
    text = json.dumps(data, separators=(",", ":"))
    path.write_text(text[:-1] + ',"inputs":"' + "1" * 40 + '","model":"' + "2" * 32 + '"}')
    assert path.read_text().startswith('{"format":2,"inputs":"' + inputs)
    assert up_to_date("rail-4su", out, inputs) is None
    assert SameModel.check(out, "rail-4su", model) is None


def _saved_meanwhile(monkeypatch: pytest.MonkeyPatch, intent: Path, old: str, new: str) -> None:
    """The intent is saved with `new` in place of `old` right after a verb first read and parsed it (an
    editor's save landing while netfab works)."""
    import netfab.load as load_module

    real = load_module.load_intent_source

    def load_intent_source(paths: list[Path]) -> IntentSource:
        source = real(paths)
        text = intent.read_text(encoding="utf-8")
        if old in text:
            intent.write_text(text.replace(old, new), encoding="utf-8")
        return source

    monkeypatch.setattr(load_module, "load_intent_source", load_intent_source)


def test_a_file_saved_during_a_build_is_stamped_as_the_text_it_was_built_from(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent = tmp_path / "rail-4su.yaml"
    intent.write_text(RAIL.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "build"
    with monkeypatch.context() as patch:
        _saved_meanwhile(patch, intent, "kmin: 150KB", "kmin: 200KB")
        _built(cli, intent, out)
    assert "kmin: 200KB" in intent.read_text(encoding="utf-8")
    # Built from the text read first (150KB), so recorded as that text: the saved one is a change.
    text = _built(cli, intent, out)
    assert "is up to date" not in text and "written)" in text and ", 0 written)" not in text
    fresh = tmp_path / "fresh"
    _built(cli, intent, fresh)
    assert {p.name: p.read_bytes() for p in (out / "rail-4su" / "configs").iterdir()} == {
        p.name: p.read_bytes() for p in (fresh / "rail-4su" / "configs").iterdir()
    }


def test_a_file_saved_during_a_lint_never_files_its_findings_under_the_other_text(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NETFAB_CACHE_DIR", str(tmp_path / "cache"))
    intent = tmp_path / "rail-4su.yaml"
    good = RAIL.read_text(encoding="utf-8")
    intent.write_text(good, encoding="utf-8")
    bad = good.replace("kmin: 150KB", "kmin: 2000KB")  # above kmax: an error
    with monkeypatch.context() as patch:
        _saved_meanwhile(patch, intent, "kmin: 150KB", "kmin: 2000KB")
        code, _ = cli("lint", str(intent))
    assert code == 0 and intent.read_text(encoding="utf-8") == bad  # linted the text it read first
    code, text = cli("lint", str(intent))
    assert code == 1, text  # the saved text's own answer, not the first text's from the cache


def test_a_restamp_that_fails_leaves_the_old_manifest_and_nothing_beside_it(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "build"
    _built(cli, RAIL, out)
    tree = out / "rail-4su"
    before = (tree / MANIFEST).read_bytes()
    names = sorted(p.name for p in tree.iterdir())
    manifest = read_manifest(tree)
    assert manifest is not None and manifest.model is not None
    held = SameModel.check(out, "rail-4su", manifest.model)
    assert held is not None

    def full(fd: int, data: object) -> int:
        raise OSError(28, "No space left on device")

    try:
        with monkeypatch.context() as patch, pytest.raises(OSError, match="No space"):
            patch.setattr(os, "write", full)
            held.restamp("new inputs")
    finally:
        held.close()
    assert (tree / MANIFEST).read_bytes() == before
    assert sorted(p.name for p in tree.iterdir()) == names  # no half-written manifest beside it
    # A build over it goes on as an ordinary rebuild when the restamp cannot be written.
    with monkeypatch.context() as patch:
        patch.setattr(SameModel, "restamp", lambda self, inputs: full(0, b""))
        text = _built(cli, _edited(tmp_path, RAIL), out)
    assert SAME not in text and ", 0 written)" in text
