"""Issue 16's "a task waiting on an approval across a kill -9 answers after Approve": `lancelot
chat` as a real process, the real OpenAI SDK against its wire fake, killed (SIGKILL) while the
agent waits for the owner; a new process, /approvals, Approve: the file goes once and the
agent answers the request it was asked before the kill."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import sys
from pathlib import Path

from core.config import load_settings
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from tests.bot.test_agent_end_to_end import answer, intent, tool
from tests.fakes.llm import FakeModelServer
from tests.fakes.llm.wiring import DEEP, FAKES, FAST, base_url
from tests.fakes.processes import reap, spawn

REPO = Path(__file__).resolve().parents[2]
WAIT = 60.0


class Chat:
    """One `lancelot chat` process: lines in, everything it prints collected."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.printed = ""

    async def say(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{line}\n".encode())
        await self.process.stdin.drain()

    async def until(self, pattern: str) -> re.Match[str]:
        """Read what it prints until `pattern` appears (in all of it so far)."""
        assert self.process.stdout is not None
        async with asyncio.timeout(WAIT):
            while (found := re.search(pattern, self.printed)) is None:
                chunk = await self.process.stdout.read(4096)
                assert chunk, f"the process ended; it printed:\n{self.printed}"
                self.printed += chunk.decode()
        return found


async def start(home: Path, fake: FakeModelServer) -> Chat:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("LANCELOT_", "FEATURE_"))},
        "LANCELOT_HOME": str(home),
        "LANCELOT_WEB_PORT": str(port),
        "LANCELOT_PROVIDER": "openai",
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": base_url(fake),
        "LANCELOT_LLM_OPENAI_FAST_MODEL": FAST,
        "LANCELOT_LLM_OPENAI_DEEP_MODEL": DEEP,
        "LANCELOT_LOCAL_MODEL": str(home.parent / "no-local-model.gguf"),
        "FEATURE_LOCAL_MODEL": "false",
        "FEATURE_UNIFIED_CLASSIFICATION": "true",
        "LANCELOT_SANDBOX_WARM_AT_START": "false",
    }
    process = await spawn(
        sys.executable,
        "-m",
        "bot.cli",
        "chat",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        cwd=REPO,
    )
    chat = Chat(process)
    await chat.until("Lancelot console")
    return chat


async def test_a_task_waiting_on_an_approval_answers_after_a_kill_9(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "workspace").mkdir(parents=True)
    (home / "workspace" / "old.log").write_text("old\n")
    async with FAKES["openai"]() as fake:
        fake.reply(intent("EXEC_REQUEST"), tool("delete_file", path="/workspace/old.log"))
        first = await start(home, fake)
        try:
            await first.say("delete old.log, it is not needed any more")
            await first.until(r"\[\d+\] Approve")  # the card is out: the agent waits
        finally:
            await reap(first.process)  # SIGKILL to it and all it started: nothing runs after it
        assert (home / "workspace" / "old.log").exists()

        fake.reply(answer("Deleted old.log.", [("delete_file", "/workspace/old.log")]))
        second = await start(home, fake)
        try:
            await second.say("/approvals")
            approve = await second.until(r"\[(\d+)\] Approve")
            await second.say(approve.group(1))
            await second.until("Deleted old.log.")
            assert second.process.stdin is not None
            second.process.stdin.close()
            async with asyncio.timeout(WAIT):
                await second.process.wait()
        finally:
            await reap(second.process)
    assert not (home / "workspace" / "old.log").exists()
    # The answer is the one to the request made before the kill, and the file went once.
    last = fake.requests[-1].body
    assert "delete old.log, it is not needed any more" in str(last)
    settings = load_settings(environ={"LANCELOT_HOME": str(home)})
    async with SqliteLedger(settings.home / "ledger.db") as ledger:
        page = await ledger.page(ReceiptQuery(action_type="tool_run", limit=50))
    deletions = [r for r in page.receipts if "old.log" in r.inputs]
    assert len(deletions) == 1
