"""judge_history on its own, over real repositories built on the host (no sandbox): which ref
changes lose history or break a ref, told from what the refs hold before and after."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from core.tools.effects import history
from core.tools.effects.history import judge_history
from core.tools.effects.model import GitChanges, RefChange
from tests.core.tools.effects.support import commit, git

MAIN = "refs/heads/main"


class Workspace:
    """A workspace holding a repository at `repo`, and an empty upper layer."""

    def __init__(self, root: Path, repo: str) -> None:
        self.lower = root / "lower"
        self.upper = root / "upper"
        self.repo = repo
        self.path = self.lower / repo if repo else self.lower
        self.path.mkdir(parents=True)
        self.upper.mkdir()
        git(self.path, "init", "-q")

    @property
    def gitdir(self) -> Path:
        """The repository's .git."""
        return self.path / ".git"

    def before(self, path: str) -> bytes | None:
        """A workspace file as it was (None when it is not a file)."""
        target = self.lower / path
        return target.read_bytes() if target.is_file() and not target.is_symlink() else None

    def write_ref(self, name: str, value: str) -> None:
        """A loose ref file holding `value`."""
        path = self.gitdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")

    def judge(self, *refs: RefChange) -> GitChanges:
        """The changes `refs` judged."""
        [judged] = judge_history([GitChanges(self.repo, refs)], self.lower, self.upper, self.before)
        return judged


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path, "repo")


@pytest.fixture
def ids(ws: Workspace) -> dict[str, str]:
    """main at c3 (c1 <- c2 <- c3, loose), `side` at a commit on c1 only it reaches (packed);
    the annotated tag `ann` at c3 and the annotated tag `lone` at a commit only it reaches."""
    found = {"c1": commit(ws.path, "one")}
    git(ws.path, "checkout", "-q", "-b", "side")
    found["side"] = commit(ws.path, "side")
    git(ws.path, "checkout", "-q", "--detach", found["c1"])
    found["lone"] = commit(ws.path, "lone")
    git(ws.path, "tag", "-a", "-m", "t", "lone")
    git(ws.path, "checkout", "-q", "main")
    git(ws.path, "pack-refs", "--all")
    found["c2"] = commit(ws.path, "two")
    found["c3"] = commit(ws.path, "three")
    git(ws.path, "tag", "-a", "-m", "t", "ann")
    found["ann"] = git(ws.path, "rev-parse", "ann")
    found["lone_tag"] = git(ws.path, "rev-parse", "lone")
    found["blob"] = git(ws.path, "rev-parse", "HEAD:f")
    found["tree"] = git(ws.path, "rev-parse", "HEAD^{tree}")
    return found


def test_a_reset_back_loses_history(ws: Workspace, ids: dict[str, str]) -> None:
    git(ws.path, "tag", "-d", "ann")
    judged = ws.judge(RefChange(MAIN, ids["c3"], ids["c1"]))
    assert (judged.lost, judged.broken) == ((MAIN,), ())
    forced = ws.judge(RefChange("refs/heads/side", ids["side"], ids["c3"]))
    assert (forced.lost, forced.broken) == (("refs/heads/side",), ())


def test_a_move_back_that_a_tag_still_reaches_loses_nothing(
    ws: Workspace, ids: dict[str, str]
) -> None:
    """The annotated tag `ann` holds c3: moving main back leaves c3 reached through it."""
    judged = ws.judge(RefChange(MAIN, ids["c3"], ids["c2"]))
    assert (judged.lost, judged.broken) == ((), ())


def test_moving_an_annotated_tag_off_the_only_commit_it_reached_loses_it(
    ws: Workspace, ids: dict[str, str]
) -> None:
    judged = ws.judge(RefChange("refs/tags/lone", ids["lone_tag"], ids["ann"]))
    assert (judged.lost, judged.broken) == (("refs/tags/lone",), ())


def test_a_deleted_ref_no_longer_reaches_anything(ws: Workspace, ids: dict[str, str]) -> None:
    """Deleting the tag that held c3 while main moves back: c3 is lost; a deletion alone is
    a deletion (told elsewhere), neither lost nor broken."""
    changes = (RefChange("refs/tags/ann", ids["ann"], None), RefChange(MAIN, ids["c3"], ids["c2"]))
    assert ws.judge(*changes).lost == (MAIN,)
    alone = ws.judge(RefChange("refs/heads/side", ids["side"], None))
    assert (alone.lost, alone.broken) == ((), ())


def test_loose_refs_win_over_packed_ones(ws: Workspace, ids: dict[str, str]) -> None:
    """`side` is packed at its own commit; a loose `side` at c3 is the one git reads."""
    ws.write_ref("refs/heads/side", ids["c3"])
    git(ws.path, "tag", "-d", "ann")
    assert ws.judge(RefChange(MAIN, ids["c3"], ids["c1"])).lost == ()


def test_an_empty_loose_ref_leaves_the_packed_one(ws: Workspace, ids: dict[str, str]) -> None:
    git(ws.path, "tag", "-d", "ann")
    git(ws.path, "branch", "keep", ids["c3"])
    git(ws.path, "pack-refs", "--all")
    ws.write_ref("refs/heads/keep", "")
    assert ws.judge(RefChange(MAIN, ids["c3"], ids["c1"])).lost == ()


def test_a_detached_head_moved_off_its_own_commit_loses_it(
    ws: Workspace, ids: dict[str, str]
) -> None:
    git(ws.path, "checkout", "-q", "--detach", ids["c1"])
    alone = commit(ws.path, "alone")
    assert ws.judge(RefChange("HEAD", alone, ids["c1"])).lost == ("HEAD",)


def test_a_fast_forward_loses_nothing(ws: Workspace, ids: dict[str, str]) -> None:
    git(ws.path, "checkout", "-q", "side")
    ahead = commit(ws.path, "ahead")
    git(ws.path, "update-ref", "refs/heads/side", ids["side"])
    judged = ws.judge(RefChange("refs/heads/side", ids["side"], ahead))
    assert (judged.lost, judged.broken) == ((), ())


def test_a_fast_forward_in_a_shallow_clone_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below a shallow clone's boundary history is missing by design: git must be told
    where it ends, or the walk fails and the move would be counted lost. (git walks by
    date: with every commit in the same second, it reaches the boundary's parents.)"""
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2020-01-01T00:00:00 +0000")
    source = Workspace(tmp_path / "source", "repo")
    for number in range(4):
        commit(source.path, f"c{number}")
    ws = Workspace(tmp_path / "clone", "repo")
    shutil.rmtree(ws.path)
    git(ws.lower, "clone", "-q", "--depth", "2", f"file://{source.path}", "repo")
    git(ws.path, "remote", "remove", "origin")  # its ref would be one more tip
    boundary = git(ws.path, "rev-parse", "HEAD~1")
    tip = commit(ws.path, "two past the boundary")
    git(ws.path, "branch", "late", boundary)
    judged = ws.judge(RefChange("refs/heads/late", boundary, tip))
    assert (judged.lost, judged.broken) == ((), ())


def test_a_detached_head_still_reaches_its_commit(ws: Workspace, ids: dict[str, str]) -> None:
    git(ws.path, "tag", "-d", "ann")
    git(ws.path, "checkout", "-q", "--detach", ids["c3"])
    assert ws.judge(RefChange(MAIN, ids["c3"], ids["c1"])).lost == ()


def test_head_must_hold_a_commit_itself_not_a_tag(ws: Workspace, ids: dict[str, str]) -> None:
    assert ws.judge(RefChange("HEAD", f"ref: {MAIN}", ids["ann"])).broken == ("HEAD",)


def test_each_changed_ref_is_checked(ws: Workspace, ids: dict[str, str]) -> None:
    """A good ref first does not spare the ones after it."""
    good = RefChange("refs/heads/a", None, ids["c3"])
    bad = RefChange("refs/heads/b", None, ids["blob"])
    assert ws.judge(good, bad).broken == ("refs/heads/b",)


@pytest.mark.parametrize("target", ["blob", "tree", "ann"])
def test_a_branch_set_to_what_is_not_a_commit_is_broken(
    ws: Workspace, ids: dict[str, str], target: str
) -> None:
    judged = ws.judge(RefChange("refs/heads/side", ids["side"], ids[target]))
    assert judged.broken == ("refs/heads/side",)


def test_a_tag_may_hold_a_tag_object_that_peels_to_a_commit(
    ws: Workspace, ids: dict[str, str]
) -> None:
    judged = ws.judge(RefChange("refs/tags/v1", None, ids["ann"]))
    assert (judged.lost, judged.broken) == ((), ())
    assert ws.judge(RefChange("refs/tags/v2", None, ids["tree"])).broken == ("refs/tags/v2",)


@pytest.mark.parametrize(
    ("value", "broken"),
    [
        ("garbage", True),
        ("0" * 40, True),
        ("ref: refs/heads/nowhere", True),
        ("ref: refs/heads/side", False),
        ("ref:refs/heads/side", False),
    ],
)
def test_head_must_lead_to_a_commit(
    ws: Workspace, ids: dict[str, str], value: str, broken: bool
) -> None:
    judged = ws.judge(RefChange("HEAD", f"ref: {MAIN}", value))
    assert judged.broken == (("HEAD",) if broken else ())


def test_a_new_head_on_a_branch_yet_to_be_born_is_how_git_starts(ws: Workspace) -> None:
    """A new repository's HEAD names a branch with no commit yet: not broken. A new ref
    symbolic to a branch that holds a blob is."""
    assert ws.judge(RefChange("HEAD", None, "ref: refs/heads/main")).broken == ()
    blob = git(ws.path, "hash-object", "-w", "--stdin")
    ws.write_ref("refs/heads/blobby", blob)
    judged = ws.judge(RefChange("HEAD", None, "ref: refs/heads/blobby"))
    assert judged.broken == ("HEAD",)
    assert ws.judge(RefChange("refs/tags/t", None, "ref: refs/tags/none")).broken == (
        "refs/tags/t",
    )


def chain(ws: Workspace, count: int, commit_id: str) -> str:
    """`count` refs, each symbolic to the next but the last, which holds `commit_id`; the
    value that starts the chain."""
    for number in range(1, count):
        ws.write_ref(f"refs/heads/l{number}", f"ref: refs/heads/l{number + 1}")
    ws.write_ref(f"refs/heads/l{count}", commit_id)
    return "ref: refs/heads/l1"


def resolves(repo: Path, name: str) -> bool:
    """Whether git itself follows `name` to a commit."""
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", f"{name}^{{commit}}"],
        cwd=repo,
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


@pytest.mark.parametrize("count", [3, 4, 5, 6])
def test_symbolic_refs_are_followed_as_far_as_git_follows_them(
    ws: Workspace, ids: dict[str, str], count: int
) -> None:
    """HEAD set to a chain of symbolic refs is broken exactly when git cannot follow it."""
    start = chain(ws, count, ids["c3"])
    (ws.gitdir / "HEAD").write_text(start + "\n")
    followed = resolves(ws.path, "HEAD")
    assert followed == (count < 5)  # git reads five refs at most, HEAD the first
    judged = ws.judge(RefChange("HEAD", f"ref: {MAIN}", start))
    assert judged.broken == (() if followed else ("HEAD",))


def test_a_commit_the_dry_run_made_is_read_from_its_upper_layer(
    ws: Workspace, ids: dict[str, str]
) -> None:
    """A commit on top whose object only the dry run holds is a commit, and loses nothing."""
    new = commit(ws.path, "four")
    loose = Path(ws.repo, ".git", "objects", new[:2], new[2:])
    moved = ws.upper / loose
    moved.parent.mkdir(parents=True)
    (ws.lower / loose).rename(moved)
    git(ws.path, "update-ref", MAIN, ids["c3"])
    judged = ws.judge(RefChange(MAIN, ids["c3"], new))
    assert (judged.lost, judged.broken) == ((), ())


def test_a_repository_at_the_workspace_root(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, "")
    first, second = commit(ws.path, "one"), commit(ws.path, "two")
    judged = ws.judge(RefChange(MAIN, second, first))
    assert (judged.lost, judged.broken) == ((MAIN,), ())


def test_what_cannot_be_read_safely_is_broken_and_nothing_else(
    ws: Workspace, ids: dict[str, str], tmp_path: Path
) -> None:
    (ws.gitdir / "objects" / "info" / "alternates").write_text(f"{tmp_path}\n")
    judged = ws.judge(
        RefChange(MAIN, ids["c3"], ids["c1"]), RefChange("refs/heads/gone", ids["c1"], None)
    )
    assert (judged.lost, judged.broken) == ((), (MAIN,))


def test_too_many_refs_to_read_is_broken(
    ws: Workspace, ids: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the bound the refs are read; one more and the repository is not."""
    loose = sum(1 for p in (ws.gitdir / "refs").rglob("*") if p.is_file())
    monkeypatch.setattr(history, "MAX_REFS", loose)
    assert ws.judge(RefChange(MAIN, ids["c3"], ids["c1"])).broken == ()
    monkeypatch.setattr(history, "MAX_REFS", loose - 1)
    assert ws.judge(RefChange(MAIN, ids["c3"], ids["c1"])).broken == (MAIN,)
