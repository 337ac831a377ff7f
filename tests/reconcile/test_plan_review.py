"""`brain merge --plan`: every incoming block's verdict, validated ones included (issue #19 Deliver 2).

`--json` lists every judged block; the table and markdown renderings count the verdicts, list every refused or
answered block, then at most `SHOWN_VALIDATED` validated ones with "and N more".
"""

from __future__ import annotations

from pathlib import Path

from cli.commands.merge import SHOWN_VALIDATED
from tests.cli.conftest import BrainRunner, assert_one_line_error
from tests.reconcile.helpers import ACTOR, add, base, fact, source


def test_plan_lists_refused_and_validated_blocks_with_codes(tmp_path: Path, brain: BrainRunner) -> None:
    b, a, _ = base(tmp_path / "b")
    add(b, fact("Beta", "red", a))
    blue = fact("Beta", "blue", a)
    gamma = fact("Gamma", "gamma is third", a)
    add(b, blue, gamma, branch="x")
    run = brain("--brain", str(b.path), "merge", "x", "--plan", "--json")
    assert run.code == 0, run.stderr
    review = run.json()
    rows = {v["block"]: v for v in review["verdicts"]}
    incoming = {str(blue[0].block_id), str(gamma[0].block_id), *(str(r.block_id) for r in (*blue[1], *gamma[1]))}
    assert set(rows) == incoming and review["judged"] == len(incoming)
    refused = rows[str(blue[0].block_id)]
    assert refused["verdict"] == "contradicted" and refused["codes"] == ["contradiction"]
    assert refused["title"] == "Beta" and refused["module"] == "semantic" and refused["resolution"] is None
    validated = rows[str(gamma[0].block_id)]
    assert (validated["verdict"], validated["codes"], validated["title"]) == ("validated", [], "Gamma")
    assert {rows[str(r.block_id)]["title"] for r in gamma[1]} == {
        f"{kind} record of {gamma[0].block_id.short}" for kind in ("derivation", "validation")
    }
    assert sum(v["verdict"] == "validated" for v in rows.values()) == len(incoming) - 1

    table = brain("--brain", str(b.path), "merge", "x", "--plan")
    assert table.code == 0
    assert f"{len(incoming)} incoming blocks judged: {len(incoming) - 1} validated, 1 contradicted" in table.stdout
    refused_part, _, validated_part = table.stdout.partition("validated:")
    assert "contradiction" in refused_part and "Beta" in refused_part and "Gamma" not in refused_part
    assert "Gamma" in validated_part and "derivation record" in validated_part


def test_markdown_bounds_the_validated_list_and_json_keeps_all(tmp_path: Path, brain: BrainRunner) -> None:
    b, _, _ = base(tmp_path / "b")
    many = [source(f"incoming source number {i}\n") for i in range(SHOWN_VALIDATED // 2 + 5)]
    add(b, *many, branch="x")
    add(b, source("ours moved on\n"))
    incoming = 2 * len(many)  # each source with its registration record
    run = brain("--brain", str(b.path), "merge", "x", "--plan", "--json")
    assert run.code == 0 and len(run.json()["verdicts"]) == incoming and run.json()["validated"] == incoming
    md = brain("--brain", str(b.path), "merge", "x", "--plan", "--format", "markdown")
    assert md.code == 0
    assert f"{incoming} incoming blocks judged: {incoming} validated" in md.stdout
    assert "### validated" in md.stdout and "### needs an answer" not in md.stdout
    listed = [line for line in md.stdout.splitlines() if line.startswith("| sha256:")]
    assert len(listed) == SHOWN_VALIDATED
    assert f"and {incoming - SHOWN_VALIDATED} more validated blocks (every one in --json)" in md.stdout
    assert (
        sum("registration" in line for line in listed) + sum("text/plain" in line for line in listed) == SHOWN_VALIDATED
    )


def test_the_review_says_what_comes_next(tmp_path: Path, brain: BrainRunner) -> None:
    b, a, _ = base(tmp_path / "b")
    add(b, fact("Beta", "red", a))
    blue = fact("Beta", "blue", a)
    add(b, blue, fact("Gamma", "gamma is third", a), branch="x")
    where = ["--brain", str(b.path), "--actor", ACTOR]
    plan = brain(*where, "merge", "x", "--plan")
    assert plan.code == 0 and plan.stdout.startswith("planned: x (")  and " into main (" in plan.stdout.splitlines()[0]
    assert "`brain merge x --reason TEXT` would halt on 1 incoming block to admit or reject" in plan.stderr
    halted = brain(*where, "merge", "x", "--reason", "join x")
    assert halted.code == 5 and "validated:" not in halted.stdout and "strategy" not in halted.stdout
    assert "needs an answer:" in halted.stdout
    status = brain(*where, "reconcile", "status", "--json")
    assert status.code == 0
    assert status.json()["next"] == [
        f"`brain reconcile resolve {blue[0].block_id.short} --admit|--reject [--reason TEXT]` (contradicted)",
        "`brain reconcile abort` discards it (nothing was committed)",
    ]
    answered = brain(*where, "reconcile", "resolve", blue[0].block_id.hex[:6], "--reject", "--json")
    assert answered.code == 0 and answered.json()["block"] == str(blue[0].block_id)
    shown = brain(*where, "reconcile", "status")
    assert shown.code == 0 and "answered:" in shown.stdout and "needs an answer" not in shown.stdout
    assert shown.stdout.rstrip().endswith("`brain reconcile continue` commits it\n"
                                          "  `brain reconcile abort` discards it (nothing was committed)")
    done = brain(*where, "reconcile", "continue")
    assert done.code == 0 and "validated:" not in done.stdout and "strategy" not in done.stdout


def test_a_clean_plan_says_the_merge_commits(tmp_path: Path, brain: BrainRunner) -> None:
    b, _, _ = base(tmp_path / "b")
    add(b, source("theirs\n"), branch="x")
    add(b, source("ours\n"))
    plan = brain("--brain", str(b.path), "merge", "x", "--plan", "--strategy", "squash")
    assert plan.code == 0
    assert "nothing needs answering: `brain merge x --strategy squash --reason TEXT` commits it" in plan.stderr
    assert "1 new single-parent snapshot by us" in plan.stdout


def test_merge_takes_the_refs_branch_create_takes(tmp_path: Path, brain: BrainRunner) -> None:
    b, _, _ = base(tmp_path / "b")
    add(b, source("theirs\n"), branch="x")
    theirs = add(b, source("theirs again\n"), branch="x")
    add(b, source("ours\n"))
    where = ["--brain", str(b.path)]
    older = brain(*where, "merge", "x~1", "--plan", "--json")
    assert older.code == 0 and older.json()["theirs"] == [str(b.snapshot(theirs).first_parent)]
    assert brain(*where, "merge", "HEAD~1", "--plan", "--json").json()["outcome"] == "up_to_date"
    assert brain(*where, "merge", theirs.hex[:9], "--plan", "--json").json()["theirs"] == [str(theirs)]
    unknown = brain(*where, "merge", "nosuch", "--plan")
    assert_one_line_error(unknown, 4)
    assert "or a registry reference" in unknown.stderr
    assert_one_line_error(brain(*where, "merge", "x~9", "--plan"), 4)
