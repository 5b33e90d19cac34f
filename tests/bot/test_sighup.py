"""`kill -HUP` on a real `lancelot chat`: the settings file and LANCELOT_HOME/features.env are
read again and the FEATURE_* switches change in the running process; a typo in either is
logged and changes nothing."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class Chat:
    """`lancelot chat` as a process, its output read line by line in a thread."""

    def __init__(self, home: Path, config: Path) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        env = {
            "PATH": os.environ.get("PATH", ""),
            "LANCELOT_HOME": str(home),
            "LANCELOT_WEB_PORT": str(port),
            "FEATURE_LOCAL_MODEL": "false",
            "LANCELOT_SANDBOX_WARM_AT_START": "false",
        }
        self.log = home / "logs" / "lancelot.log"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "--config", str(config), "chat"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=REPO,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def say(self, text: str, until: str, wait: float = 60.0) -> str:
        """Type a line; the output up to the first line containing `until`."""
        assert self.process.stdin is not None
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()
        seen: list[str] = []
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                seen.append(self.lines.get(timeout=deadline - time.monotonic()))
            except queue.Empty:
                break
            if until in seen[-1]:
                return "".join(seen)
        raise AssertionError(f"no {until!r} after {text!r}; saw:\n{''.join(seen)}")

    def hup(self, expect: str, wait: float = 30.0) -> None:
        """Send SIGHUP and wait until the log says what became of it."""
        before = self.log.read_text() if self.log.exists() else ""
        self.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            after = self.log.read_text() if self.log.exists() else ""
            if expect in after[len(before) :]:
                return
            time.sleep(0.05)
        raise AssertionError(f"the log never said {expect!r}")

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=60)

    def release(self) -> None:
        """Kill it if it still runs; close its pipes."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.reader.join(timeout=10)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()


def test_sighup_applies_the_settings_file_and_features_env(tmp_path: Path) -> None:
    home, config = tmp_path / "home", tmp_path / "lancelot.yaml"
    config.write_text("log_level: INFO\n")
    chat = Chat(home, config)
    try:
        assert "Now: off." in chat.say("/crusader", until="Now:")
        (home / "features.env").write_text("FEATURE_CRUSADER=false\n")
        chat.hup("switches reloaded: crusader=off")
        assert "switched off on this install (FEATURE_CRUSADER)" in chat.say(
            "Crusader", until="FEATURE_CRUSADER"
        )
        config.write_text("log_level: INFO\nfeatures:\n  agent: false\n  memory: false\n")
        chat.hup("switches reloaded: memory=off, agent=off (memory: at the next start)")
        assert "(FEATURE_AGENT)" in chat.say("hello", until="FEATURE_AGENT")
        shown = chat.say("/features", until="unified_classification")
        assert f"agent: off ({config})" in shown
        assert f"crusader: off ({home / 'features.env'})" in shown
        (home / "features.env").write_text("FEATURE_CRUSADER=perhaps\nFEATURE_AGENT=true\n")
        chat.hup("switches not reloaded, the old ones stay")
        assert "(FEATURE_AGENT)" in chat.say("hello again", until="FEATURE_AGENT")
        assert chat.close() == 0
    finally:
        chat.release()


def test_a_switch_that_is_neither_on_nor_off_stops_startup_in_one_line(tmp_path: Path) -> None:
    home, config = tmp_path / "home", tmp_path / "lancelot.yaml"
    config.write_text("log_level: INFO\n")
    home.mkdir()
    (home / "features.env").write_text("FEATURE_CRUSADER=perhaps\n")
    chat = Chat(home, config)
    try:
        code = chat.close()
        chat.reader.join(timeout=10)
        said = "".join(chat.lines.queue)
        assert code == 2
        assert said.strip().count("\n") == 0, said
        assert "FEATURE_CRUSADER='perhaps' is neither" in said
        assert str(home / "features.env") in said
    finally:
        chat.release()
