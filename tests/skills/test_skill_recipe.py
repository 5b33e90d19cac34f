"""docs/architecture.md, "How to add a skill", done exactly as written: a folder of three
files (`__init__.py`, `skill.yaml`, `skill.py`) and nothing else. `word_count` counts the
words of its input and, asked to, writes the count into the workspace through governance.
The folder is made under a skills root of the test's, which is synced as startup syncs the
shipped `skills/` package; then the owner lists it and runs it from chat."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from bot.app import Lancelot
from core.skills.builtin import sync_system_skills
from tests.core.skills.builder import receipts, registry_of
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say

# 1. The manifest: name, version, what it may do, its inputs and outputs, its risk, its entry.
MANIFEST = """\
name: word_count
version: 1.0.0
description: Counts the words of a text; can keep the count in a file.
permissions: [read_input, write_output, write_files]
inputs:
  text: {type: string, required: true, description: the text to count}
  keep_in: {type: string, description: a workspace file to write the count into}
outputs:
  words: {type: integer, required: true}
risk: T1
entry_point: skill:run
timeout_seconds: 10
"""

# 2. The code: only core.skills.api; every action it takes goes through ctx.run (governance).
CODE = """\
\"\"\"word_count: the words of a text, kept in a file if asked.\"\"\"

from __future__ import annotations

from core.skills.api import SkillContext, SkillFailed, ToolAction


async def run(ctx: SkillContext) -> None:
    \"\"\"Count the `text` input's words; write the count to `keep_in` when given.\"\"\"
    words = len(str(ctx.read_input("text")).split())
    ctx.write_output("words", words)
    keep_in = ctx.read_input().get("keep_in")
    if keep_in:
        params = {"path": keep_in, "content": f"{words}\\n"}
        outcome = await ctx.run(ToolAction("file.write", f"write {keep_in}", params))
        if not outcome.ok:
            raise SkillFailed(f"the count was not kept: {outcome.text}")
"""


def add_skill(root: Path) -> Path:
    """The recipe: one folder, three files."""
    folder = root / "word_count"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text('"""The word_count skill (SYSTEM)."""\n')
    (folder / "skill.yaml").write_text(MANIFEST)
    (folder / "skill.py").write_text(CODE)
    return folder


def outputs_of(body: str) -> dict[str, object]:
    return dict(json.loads(body[body.index("{") :]))


async def test_a_skill_added_as_one_folder_is_listed_and_runs_governed(
    app: Lancelot, phone: MemoryChannel, tmp_path: Path
) -> None:
    folder = add_skill(tmp_path / "skills")
    assert sorted(p.name for p in folder.iterdir()) == ["__init__.py", "skill.py", "skill.yaml"]
    assert await sync_system_skills(registry_of(app), folder.parent) == []

    listed = await say(app, phone, "/skills")
    counted = await say(app, phone, '/skills run word_count {"text": "one two three"}')
    kept = await say(app, phone, '/skills run word_count {"text": "a b", "keep_in": "count.txt"}')

    assert "word_count" in listed.body
    assert counted.title == "Skill word_count: done"
    assert outputs_of(counted.body)["words"] == 3
    assert kept.title == "Skill word_count: done", kept.body
    assert (app.home / "workspace" / "count.txt").read_text() == "2\n"
    runs = [r for r in await receipts(app, "skill_run") if r.status == "success"]
    assert len(runs) == 2
    [written] = await receipts(app, "tool_run")  # the write went through governance
    assert (written.action_name, written.status) == ("file.write", "success")
    assert written.parent_id == runs[-1].id  # under the run that asked for it


async def test_a_skill_whose_manifest_is_wrong_is_skipped_and_never_imported(
    app: Lancelot, tmp_path: Path
) -> None:
    folder = add_skill(tmp_path / "skills")
    (folder / "skill.yaml").write_text(MANIFEST.replace("risk: T1", "risk: T9"))
    (folder / "skill.py").write_text(textwrap.dedent(CODE) + "\nraise SystemExit('imported')\n")
    [problem] = await sync_system_skills(registry_of(app), folder.parent)
    assert "risk" in problem
    assert await registry_of(app).get("word_count") is None
