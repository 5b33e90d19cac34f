"""Which git command lines only read: status, log, diff, show, blame and friends, and the
listing forms of branch, tag, remote and reflog.

Git reads the repository's own configuration, and some settings there run programs
(`core.fsmonitor`, `diff.external`, textconv drivers). The workspace's `.git/config` is off
limits to the file tools for that reason; a caller that runs these outside a sandbox should
still neutralise them (`git -c core.fsmonitor= ...`) or mount the workspace read-only.
"""

from __future__ import annotations

from collections.abc import Sequence

from soul.wrappers import names

_GLOBAL_FLAGS = frozenset(
    {"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs"}
    | {"--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects"}
)
_READS = names(
    "status log diff show blame ls-files ls-tree rev-parse rev-list describe shortlog "
    "cat-file merge-base for-each-ref name-rev count-objects show-ref version grep branch "
    "tag remote reflog"
)
# Options of the reading subcommands that write a file or run a program.
_FORBIDDEN = ("--output", "--ext-diff", "--textconv", "--filters", "--open-files-in-pager")
_LIST_VALUED = frozenset(
    {"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format"}
)
_LIST_FLAGS = frozenset(
    {"--list", "--column", "--no-column", "--color", "--no-color", "--ignore-case", "--omit-empty"}
)
_BRANCH_FLAGS = _LIST_FLAGS | {"--all", "--remotes", "--verbose", "--show-current", "--abbrev"}
_BRANCH_FLAGS |= {"--no-abbrev"}


def git_reason(args: Sequence[str]) -> str | None:
    """Why `git ARGS` may write; None when it only reads."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-C" and i + 1 < len(args):
            i += 2
        elif args[i] in _GLOBAL_FLAGS:
            i += 1
        else:
            return f"git {args[i]} is not proven read-only"
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1 :]
    if sub not in _READS:
        return f"git {sub} may write"
    for arg in rest:
        key = arg.partition("=")[0]
        if key.startswith("--") and len(key) > 2 and any(f.startswith(key) for f in _FORBIDDEN):
            return f"git {sub} {arg} writes a file or runs a program"
        if sub == "grep" and arg.startswith("-O"):
            return "git grep -O runs a program"
    if sub == "branch":
        return _listing("branch", rest, _BRANCH_FLAGS, "arlvi")
    if sub == "tag":
        return _listing("tag", rest, _LIST_FLAGS, "lin0123456789")
    if sub == "remote" and any(a not in ("-v", "--verbose") for a in rest):
        return "git remote with arguments may change or contact a remote"
    if sub == "reflog" and rest[:1] and rest[0] in ("expire", "delete", "drop"):
        return f"git reflog {rest[0]} rewrites the reflog"
    return None


def _listing(sub: str, args: Sequence[str], flags: frozenset[str], letters: str) -> str | None:
    """`git branch`/`git tag` read only when they list: known flags, and names only with -l."""
    operands: list[str] = []
    listing = False
    skip = False
    for k, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg.startswith("--"):
            key = arg.partition("=")[0]
            if key not in flags and key not in _LIST_VALUED:
                return f"git {sub} {arg} is not a listing option"
            listing = listing or key == "--list"
            following = args[k + 1] if k + 1 < len(args) else "-"
            skip = key in _LIST_VALUED and "=" not in arg and not following.startswith("-")
        elif arg.startswith("-") and len(arg) > 1:
            if any(c not in letters for c in arg[1:]):
                return f"git {sub} {arg} is not a listing option"
            listing = listing or "l" in arg
        else:
            operands.append(arg)
    if operands and not listing:
        return f"git {sub} {operands[0]} creates it"
    return None
