"""The command registry: one module per command, listed here in `--help` order (see `cli/app.py`).

Each entry is `(module, attribute)`: the attribute of `cli.commands.<module>` is the command function (its
CLI name is the function's name, see `cli.app.command_name`) or a `typer.Typer` group named like the
attribute. Nothing here imports a command module: `cli.app` loads one when its command is looked up, so
`brain status` does not import what `brain ingest` needs.
"""

from __future__ import annotations

COMMANDS: tuple[tuple[str, str], ...] = (
    ("init", "init"),
    ("ingest", "ingest"),
    ("drop", "drop"),
    ("supersede", "supersede"),
    ("demote", "demote"),
    ("redact", "redact"),
    ("prune", "prune"),
    ("diff", "diff"),
    ("status", "status"),
    ("verify", "verify"),
    ("sign", "sign"),
    ("signatures", "signatures"),
    ("checkout", "checkout"),
    ("merge", "merge"),
    ("log", "log"),
    ("ls", "ls"),
    ("show", "show"),
    ("search", "search"),
    ("context", "context"),
    ("embed", "embed"),
    ("cat", "cat"),
    ("serve", "serve"),
    ("prove", "prove"),
    ("pack", "pack"),
    ("tags", "tags"),
    ("tag", "tag"),
    ("tag", "untag"),
    ("push", "push"),
    ("pull", "pull"),
    ("fetch", "fetch"),
    ("inspect", "inspect"),
    ("login", "login"),
    ("logout", "logout"),
    ("copy", "copy"),
    ("export", "export"),
    ("proposers", "proposers"),
    ("version", "version"),
    ("doctor", "doctor"),
    # groups (`brain trust pin`) after the commands, as `--help` has always listed them
    ("trust", "trust"),
    ("branch", "branch"),
    ("reconcile", "reconcile"),
    ("config", "config"),
)
