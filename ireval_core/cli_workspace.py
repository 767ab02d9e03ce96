"""The ``workspace`` sub-command: what the team workspace records, and saving to it.

``python -m ireval_core workspace [--url URL] save --name NAME --by NAME [--project P]
[--note TEXT] [--qrels FILE] [--run FILE ...] [--labels FILE ...] [--metadata FILE]``
saves files as a dataset of project ``P`` (default ``default``), as the anonymous local
user: a workspace without members (local mode) takes it under the typed name, one with
members refuses it (only a signed-in person writes there, in the app). It prints the
dataset's short id and name; the same files saved again print the dataset already saved.

``python -m ireval_core workspace [--url URL] audit [--since DATE] [--verify]`` lists the
audit log (one tab-separated line per write: number, time, who, action, project, target,
detail), or with ``--verify`` checks its hash chain: exit status 0 when it is intact, 1
with the first row changed or removed named on stderr. It reads as
:data:`~ireval_core.workspace.OPERATOR`: whoever holds the database's URL reads the
whole log, in a workspace with members too (the app's people read it by their roles).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

__all__ = ["add_parsers", "run"]


def add_parsers(sub: Any) -> None:
    """Add the ``workspace`` sub-command to ``sub`` (``add_subparsers()``)."""
    ws = sub.add_parser("workspace", help="the team workspace: save files, the audit log",
                        description="What the team workspace records, and saving to it.")
    ws.add_argument("--url", default=None, metavar="URL",
                    help="the workspace: a database URL or a SQLite file (default "
                         "$IREVAL_WORKSPACE, else ~/.local/share/ireval/workspace.db)")
    actions = ws.add_subparsers(dest="workspace_command", required=True)
    audit = actions.add_parser(
        "audit", help="list the audit log, or verify its hash chain",
        description="Every write (dataset saved, version added, note, decision, member "
                    "added, role changed, deletion) with who did it and when; each row's "
                    "SHA-256 chains it to the row before.")
    audit.add_argument("--since", default=None, metavar="DATE",
                       help="only rows at or after DATE (ISO 8601, UTC: 2026-11-01 or "
                            "2026-11-01T09:30)")
    audit.add_argument("--verify", action="store_true",
                       help="check the chain instead: exit 0 when intact, 1 naming the "
                            "first row changed or removed")
    save = actions.add_parser(
        "save", help="save files as a dataset of a project (a workspace without members)",
        description="Save files as a dataset, as the local user: a workspace with members "
                    "refuses it (people sign in to the app to write there).")
    save.add_argument("--name", required=True, help="the dataset's name")
    save.add_argument("--by", required=True, metavar="NAME", help="who saves it")
    save.add_argument("--project", default="default",
                      help="the project it joins (default: default)")
    save.add_argument("--note", default="", help="a note saved with it")
    save.add_argument("--qrels", metavar="FILE", help="the qrels file")
    for kind in ("run", "labels"):
        save.add_argument(f"--{kind}", action="append", default=[], metavar="FILE",
                          help=f"a {kind} file (repeat for several)")
    save.add_argument("--metadata", metavar="FILE", help="a query metadata file")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``workspace audit``; errors propagate (the CLI turns them into exit 2)."""
    from .workspace import OPERATOR, Workspace  # SQLAlchemy: only for this command

    if args.workspace_command == "save":
        return _save(args, out)
    with Workspace.open(args.url) as ws:
        if args.verify:
            check = ws.verify_audit(actor=OPERATOR)
            if check.intact:
                rows_word = "row" if check.rows == 1 else "rows"
                out.write(f"audit log intact: {check.rows} {rows_word} in {ws.url}\n")
                return 0
            sys.stderr.write(f"audit log broken at row {check.broken_row} in {ws.url}: "
                             f"{check.reason}\n")
            return 1
        rows = ws.audit(since=args.since, actor=OPERATOR)
        out.write("row\tat\twho\taction\tproject\ttarget\tdetail\n")
        for e in rows:
            out.write(f"{e.id}\t{e.at}\t{_one_line(e.who)}\t{e.action}\t"
                      f"{_one_line(e.project)}\t{_one_line(e.target)}\t{_one_line(e.detail)}\n")
    return 0


def _one_line(text: str) -> str:
    """``text`` on one line of a tab-separated table (tabs and line breaks as spaces)."""
    return " ".join(text.replace("\t", " ").splitlines())


def _save(args: argparse.Namespace, out: TextIO) -> int:
    """``workspace save``: the files read, saved as the anonymous local user."""
    from pathlib import Path

    from .workspace import ANONYMOUS, Workspace

    paths = [("qrels", args.qrels)] if args.qrels else []
    paths += [(kind, p) for kind in ("run", "labels") for p in getattr(args, kind)]
    paths += [("metadata", args.metadata)] if args.metadata else []
    if not paths:
        raise ValueError("workspace save: name at least one file (--qrels, --run, --labels "
                         "or --metadata)")
    files = [(kind, Path(p).name, Path(p).read_bytes()) for kind, p in paths]
    with Workspace.open(args.url) as ws:
        info = ws.save_dataset(files, name=args.name, note=args.note, saved_by=args.by,
                               actor=ANONYMOUS, project=args.project)
    out.write(f"{info.short_id}\t{info.name}\tproject {info.project}\n")
    return 0
