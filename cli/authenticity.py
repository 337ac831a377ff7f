"""How authenticity (§9.7) reads for people: one block shared by `verify`, `signatures` and `pull`, and the
`brain signatures` result."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import RenderableType
from rich.text import Text

from brain.authn.decision import Authentication, Verdict
from brain.authn.outcomes import Outcome, Role, State
from cli.output import Output, Result

_STATE_STYLE = {
    State.AUTHORIZED: "bold green",
    State.UNSIGNED: "yellow",
    State.ATTRIBUTABLE: "yellow",
    State.UNAUTHORIZED: "bold red",
}


def verdict_rows(output: Output, verdicts: Iterable[Verdict], withdrawn: Iterable[Verdict] = ()) -> RenderableType:
    """A table: record, key, subject, claimed and held scopes, outcome."""
    table = output.table("record", "key", "subject", "claimed", "held", "outcome")
    for verdict, moved in [(v, False) for v in verdicts] + [(v, True) for v in withdrawn]:
        outcome = str(verdict.outcome) + (" (withdrawn)" if moved else "")
        style = "green" if verdict.outcome is Outcome.VALID else "red"
        table.add_row(
            verdict.record.short, verdict.embedded_key or verdict.key, verdict.subject or "-",
            ",".join(verdict.claimed_scopes) or "-", ",".join(verdict.held_scopes) or "-", Text(outcome, style=style),
        )
    return table


def render_authenticity(auth: Authentication, output: Output) -> Iterable[RenderableType]:
    """The authenticity section."""
    if auth.state is State.UNSIGNED and auth.trust_root is None and auth.role is not Role.REVISION:
        yield Text.assemble(
            ("authenticity", "bold"), "  ", ("unsigned", "yellow"), "  (not governed: no trust root, no signatures)"
        )
        return
    yield Text.assemble(("authenticity", "bold"), "  ", (str(auth.state), _STATE_STYLE[auth.state]),
                        f"  ({auth.role}, stance {auth.stance})")
    if auth.trust_root is not None:
        pinned = "  pinned" if auth.pinned else ""
        yield f"  trust root  {auth.trust_root}  revision {auth.trust_root_revision}{pinned}"
    else:
        yield "  trust root  none in force"
    required = ", ".join(auth.required_scopes) or "none"
    if auth.undetermined:
        required += f"  (open: {', '.join(auth.undetermined)})"
    yield f"  required    {required}"
    if auth.quorum_required is not None:
        yield f"  quorum      {auth.quorum_met} of {auth.quorum_required}"
    if auth.signatures or auth.withdrawn:
        yield verdict_rows(output, auth.signatures, auth.withdrawn)
    for finding in auth.findings:
        flag = ("blocking", "red") if finding.blocking else ("note", "yellow")
        yield Text.assemble("  ", (f"{flag[0]:<8}", flag[1]), f" {finding.code}  {finding.detail}")


class SignaturesResult(Result):
    """The snapshot, its state, and one verdict per record (withdrawn ones apart)."""

    snapshot: str
    state: State
    role: Role
    trust_root: str | None
    required_scopes: list[str]
    signatures: list[Verdict]
    withdrawn: list[Verdict]


def render_signatures(result: SignaturesResult, output: Output) -> Iterable[RenderableType]:
    """`brain signatures` for people: the snapshot's state, then one row per record."""
    yield f"snapshot {result.snapshot}  {result.state} ({result.role})"
    if not result.signatures and not result.withdrawn:
        yield "no signature records"
        return
    yield verdict_rows(output, result.signatures, result.withdrawn)
