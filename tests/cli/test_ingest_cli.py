"""`brain ingest` through the real entry point: bad input and hostile proposers are reported per source,
never abort the run or corrupt the brain; `--strict`, `--allow`, `--json`, `--dry-run`, piped progress."""

from __future__ import annotations

import os
import re
import sys
import textwrap
from pathlib import Path

import pytest

from brain.brain import Brain
from tests.cli.conftest import BRAIN_EXE, BrainRunner, Run, _environment, assert_one_line_error
from tests.unprivileged import run_unprivileged

ACTOR = "curator@example.org"

# One exec proposer whose behaviour is chosen by a `MODE=...` marker in the source text.
PROPOSER = textwrap.dedent(
    """
    import json, os, sys, time
    request = json.load(sys.stdin)
    text, source = request["text"], request["task"]["source"]

    def answer(candidates):
        json.dump({"schema_version": "boltzmann.candidates/v1", "candidates": candidates}, sys.stdout)

    def semantic(**extra):
        payload = {"kind": "concept", "label": "term " + source[7:19], "statement": "a statement"}
        return {"memory_type": "semantic", "payload": {**payload, **extra}, "evidence": [source], "locator": "L1"}

    mode = text.split("MODE=")[1].split()[0] if "MODE=" in text else "good"
    if mode == "hang":
        time.sleep(60)
    elif mode == "crash":
        sys.stderr.write("boom\\n")
        sys.exit(3)
    elif mode == "garbage":
        print("this is not JSON {")
    elif mode == "canonical":
        answer([{"memory_type": "canonical", "payload": {"blob": source, "media_type": "text/plain", "size": 1},
                 "evidence": [source]}])
    elif mode == "provenance":
        answer([{"memory_type": "provenance", "payload": {"record": {}}, "evidence": [source]}])
    elif mode == "float":
        answer([semantic(statement=1.5), semantic(label="fine " + source[7:19])])
    elif mode == "relation":
        answer([semantic(relations=[{"predicate": "uses", "target": "sha256:" + "f" * 64}])])
    elif mode == "evidence":
        other = "sha256:" + "e" * 64
        answer([{**semantic(), "evidence": [source, other]}])
    elif mode == "vanish":
        os.remove(os.environ["VANISHING_FILE"])
        answer([semantic()])
    else:
        answer([semantic()])
    """
)


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for relpath, content in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


@pytest.fixture
def brain_dir(brain: BrainRunner, tmp_path: Path) -> Path:
    target = tmp_path / "brain"
    assert brain("--brain", str(target), "init").code == 0
    return target


def _proposer(tmp_path: Path) -> str:
    script = tmp_path / "proposer.py"
    script.write_text(PROPOSER)
    return f"exec:{sys.executable} {script}"


def _codes(data: dict) -> dict[str, list[tuple[str, str]]]:  # type: ignore[type-arg]
    return {o["relpath"]: sorted((p["code"], p["kind"]) for p in o["problems"]) for o in data["outcomes"]}


def test_hostile_proposers_and_bad_files_are_reported_per_source(
    brain: BrainRunner, brain_dir: Path, tmp_path: Path
) -> None:
    root = _write(
        tmp_path / "src",
        {
            "a-vanish.md": "MODE=vanish",
            **{f"b{i}.md": f"plain note {i}" for i in range(9)},
            "c-hang.md": "MODE=hang",
            "d-crash.md": "MODE=crash",
            "e-garbage.md": "MODE=garbage",
            "f-canonical.md": "MODE=canonical",
            "g-provenance.md": "MODE=provenance",
            "h-float.md": "MODE=float",
            "i-relation.md": "MODE=relation",
            "j-evidence.md": "MODE=evidence",
            "k-junk.txt": b"\x00\xff junk \x00" * 20,
            "l-latin1.txt": "caf\xe9 cr\xe8me".encode("latin-1"),
            "m-empty.md": "",
            "zz-gone.md": "will be deleted mid-run",
        },
    )
    os.symlink(".", root / "loop")
    args = ["--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root), "--json", "--timeout", "2"]
    run = brain(*args, "--proposer", _proposer(tmp_path), env={"VANISHING_FILE": str(root / "zz-gone.md")})
    assert run.code == 0, run
    codes = _codes(run.json())
    assert codes["c-hang.md"] == [("proposer-timeout", "failure")]
    assert codes["d-crash.md"] == [("proposer-crashed", "failure")]
    assert codes["e-garbage.md"] == [("proposer-garbage", "failure")]
    assert ("memory-type-not-allowed", "rejection") in codes["f-canonical.md"]
    assert ("memory-type-not-allowed", "rejection") in codes["g-provenance.md"]
    assert codes["h-float.md"] == [("schema", "rejection")]
    assert codes["i-relation.md"] == [("relation-target-not-found", "rejection")]
    assert ("evidence-not-in-task", "rejection") in codes["j-evidence.md"]
    assert ("evidence-not-found", "rejection") in codes["j-evidence.md"]
    assert ("binary-content", "note") in codes["k-junk.txt"]
    assert codes["l-latin1.txt"] == []  # undeclared Latin-1 is detected and decoded (the charset is recorded)
    assert codes["m-empty.md"] == [("empty", "skipped")]
    assert codes["loop"] == [("symlink-loop", "failure")]
    assert codes["zz-gone.md"] == [("vanished", "failure")]
    assert all(codes[f"b{i}.md"] == [] for i in range(9)) and codes["a-vanish.md"] == []
    data = run.json()
    relpaths = [o["relpath"] for o in data["outcomes"]]
    assert relpaths == sorted(relpaths) and len(relpaths) == 23  # discovery order, problems included
    assert data["validated"] == 12 and data["failed"] == 2  # a-vanish, b0-b8, the float file's sibling, l-latin1
    verify = brain("--brain", str(brain_dir), "verify", "--json")
    assert verify.code == 0 and verify.json()["ok"] is True, verify


def test_strict_exits_1_after_printing_and_committing_the_valid_part(
    brain: BrainRunner, brain_dir: Path, tmp_path: Path
) -> None:
    root = _write(tmp_path / "src", {"good.md": "a good note", "bad.md": "MODE=relation"})
    args = ["--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root), "--proposer", _proposer(tmp_path)]
    run = brain(*args, "--strict", "--json")
    assert run.code == 1, run
    assert run.json()["validated"] == 1 and run.json()["rejected_by_code"] == {"relation-target-not-found": 1}
    assert "error: --strict: 1 problem(s)" in run.stderr
    status = brain("--brain", str(brain_dir), "status", "--json").json()
    assert status["modules"]["semantic"]["block_count"] == 1 and status["modules"]["canonical"]["block_count"] == 2
    assert brain(*args, "--strict").code == 0  # nothing new to judge: both sources are unchanged


def test_strict_lets_duplicates_of_members_pass_but_not_other_rejections(
    brain: BrainRunner, brain_dir: Path, tmp_path: Path
) -> None:
    # A second proposer (as a new version of the heuristic after an upgrade) asks new questions about an
    # unchanged corpus: blocks it re-proposes are already members (`duplicate`), which adds and loses nothing.
    root = _write(tmp_path / "src", {"a.md": "a good note", "b.md": "another note"})
    args = ["--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root), "--strict", "--json"]
    assert brain(*args, "--proposer", _proposer(tmp_path)).code == 0
    upgraded = tmp_path / "upgraded"
    upgraded.mkdir()
    run = brain(*args, "--proposer", _proposer(upgraded))
    assert run.code == 0, run
    assert run.json()["rejected_by_code"] == {"duplicate": 2} and run.json()["validated"] == 0
    (root / "c.md").write_text("MODE=relation")  # a real rejection still fails the strict run
    run = brain(*args, "--proposer", _proposer(upgraded))
    assert run.code == 1 and run.json()["rejected_by_code"] == {"relation-target-not-found": 1}, run
    assert "error: --strict: 1 problem(s)" in run.stderr


def test_allow_naming_canonical_or_provenance_is_a_usage_error(
    brain: BrainRunner, brain_dir: Path, tmp_path: Path
) -> None:
    root = _write(tmp_path / "src", {"a.md": "note"})
    for allowed in ("canonical", "semantic,provenance"):
        run = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root), "--allow", allowed)
        assert_one_line_error(run, 3)
    assert brain("--brain", str(brain_dir), "ingest", str(root), "--checkpoint", "0").code == 3
    assert_one_line_error(brain("--brain", str(brain_dir), "ingest", str(root), "--media-type", "pdf"), 3)
    assert not (brain_dir / "boltzmann" / "head.json").exists()


def test_human_summary_and_dry_run(brain: BrainRunner, brain_dir: Path, tmp_path: Path) -> None:
    root = _write(tmp_path / "src", {"a.md": "# Caches\n\nA shard is a slice of the cache.\n", "e.md": ""})
    dry = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root), "--dry-run")
    assert dry.code == 0 and dry.stdout.startswith("would register 1, unchanged 0"), dry
    assert not (brain_dir / "boltzmann" / "head.json").exists()
    run = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root), "--license", "CC0-1.0")
    assert run.code == 0 and run.stdout.startswith("registered 1, unchanged 0, duplicate 0, skipped 1"), run
    assert "e.md" in run.stdout and "empty" in run.stdout


def test_missing_source_is_not_found(brain: BrainRunner, brain_dir: Path, tmp_path: Path) -> None:
    run = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(tmp_path / "nope"))
    assert_one_line_error(run, 4)


def test_piped_progress_is_plain_lines(brain_exe: BrainRunner, tmp_path: Path) -> None:
    target = tmp_path / "brain"
    root = _write(tmp_path / "src", {f"n{i}.md": f"# N{i}\n\nA thing{i} is a note.\n" for i in range(3)})
    assert brain_exe("--brain", str(target), "init").code == 0
    run = brain_exe("--brain", str(target), "--actor", ACTOR, "ingest", str(root))
    assert run.code == 0, run
    assert "ingest: 3/3" in run.stderr and "\x1b[" not in run.stderr + run.stdout
    quiet = brain_exe("--brain", str(target), "--actor", ACTOR, "-q", "ingest", str(root))
    assert quiet.stderr == "" and quiet.stdout.startswith("registered 0, unchanged 3")


RECORDER = textwrap.dedent(
    """
    import json, os, pathlib, sys
    request = json.load(sys.stdin)
    log = pathlib.Path(os.environ["REQUEST_LOG"])
    with log.open("a") as handle:
        handle.write(json.dumps(request["task"]) + "\\n")
    flag = pathlib.Path(os.environ["FAIL_FLAG"])
    if flag.exists():
        flag.unlink()
        sys.exit(2)
    source = request["task"]["source"]
    payload = {"kind": "fact", "label": "seen " + source[7:19], "statement": request["text"].strip()}
    json.dump({"schema_version": "boltzmann.candidates/v1", "producer": {"kind": "model", "id": "acme/rec",
               "version": "7"}, "candidates": [{"memory_type": "semantic", "payload": payload,
               "evidence": [source], "locator": "L1"}]}, sys.stdout)
    """
)


def test_task_shape_and_a_failed_proposal_is_retried_not_cached(
    brain: BrainRunner, brain_dir: Path, tmp_path: Path
) -> None:
    root = _write(tmp_path / "src", {"a.md": "alpha"})
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    log, flag = tmp_path / "requests.jsonl", tmp_path / "fail-once"
    flag.touch()
    env = {"REQUEST_LOG": str(log), "FAIL_FLAG": str(flag)}
    args = ["--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root), "--json"]
    args += ["--proposer", f"exec:{sys.executable} {script}", "--allow", "semantic,episodic"]
    args += ["--instructions", "be brief"]
    first = brain(*args, env=env)
    assert first.code == 0 and _codes(first.json())["a.md"] == [("proposer-crashed", "failure")], first
    second = brain(*args, env=env)
    data = second.json()
    assert (data["unchanged"], data["validated"], data["cache_hits"]) == (1, 1, 0), second
    third = brain(*args, env=env)
    assert third.json()["proposed"] == 0  # answered once: neither asked again nor re-judged
    tasks = [__import__("json").loads(line) for line in log.read_text().splitlines()]
    assert len(tasks) == 2 and tasks[0] == tasks[1]
    task_id = tasks[0].pop("task_id")
    assert tasks[0] == {
        "operation": "extract_knowledge",
        "source": data["outcomes"][0]["block"],
        "allowed_memory_types": ["episodic", "semantic"],
        "requirements": [],
        "output_schema": "boltzmann.candidates/v1",
        "instructions": "be brief",
    }
    records = [r for _, r in Brain.open(brain_dir).ledger().records if r.record_type in ("derivation", "validation")]
    assert [(r.producer.kind, r.producer.id, r.producer.version) for r in records if r.record_type == "derivation"] == [
        ("model", "acme/rec", "7")
    ]
    assert re.fullmatch("[0-9a-f]{64}", task_id) and {r.task for r in records} == {task_id}  # the records name the task


def test_include_exclude_and_brainignore(brain: BrainRunner, brain_dir: Path, tmp_path: Path) -> None:
    root = _write(
        tmp_path / "src",
        {"docs/a.md": "a", "docs/b.txt": "b", "docs/skip/c.md": "c", "notes/d.md": "d", ".brainignore": "notes/\n"},
    )
    args = ["--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root), "--dry-run", "--json"]
    run = brain(*args, "--include", "*.md", "--exclude", "docs/skip/")
    assert [o["relpath"] for o in run.json()["outcomes"]] == ["docs/a.md"], run


def test_an_unreadable_file_is_a_failure_and_the_run_goes_on(brain: BrainRunner, tmp_path: Path) -> None:
    # Without root's power over modes (tests/unprivileged.py): root reads a file whatever its mode.
    root = _write(tmp_path / "src", {"locked.md": "secret", "open.md": "fine"})
    assert brain("--brain", str(tmp_path / "brain"), "init").code == 0
    (root / "locked.md").chmod(0)
    done = run_unprivileged(
        [str(BRAIN_EXE), "--brain", str(tmp_path / "brain"), "--actor", ACTOR, "ingest", str(root), "--json"],
        cwd=tmp_path, env=_environment(None),
    )
    run = Run(done.returncode, done.stdout, done.stderr)
    assert run.code == 0 and _codes(run.json())["locked.md"] == [("unreadable", "failure")], run
    assert run.json()["registered"] == 1


def test_the_brain_directory_under_the_root_is_not_ingested(brain: BrainRunner, tmp_path: Path) -> None:
    root = _write(tmp_path / "project", {"notes/a.md": "# A\n\nA note is a text.\n"})
    assert brain("init", cwd=root).code == 0  # the default --brain is ./brain, inside the root
    first = brain("--actor", ACTOR, "ingest", ".", "--json", cwd=root)
    assert first.code == 0 and [o["relpath"] for o in first.json()["outcomes"]] == ["notes/a.md"], first
    again = brain("--actor", ACTOR, "ingest", ".", "--json", cwd=root)
    assert again.json()["sources"] == 1 and again.json()["unchanged"] == 1
    assert_one_line_error(brain("--actor", ACTOR, "ingest", "brain/blobs", cwd=root), 3)
