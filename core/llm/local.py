"""The local model: llama-cpp-python on a GGUF file, loaded once, generating in a thread."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.errors import LancelotError, ProviderUnavailable
from core.llm.types import Completion, CompletionRequest, Message, Role, Usage

log = logging.getLogger(__name__)


class LocalProvider:
    """A GGUF model behind llama-cpp-python.

    Nothing loads until the first call (or `load()`), so startup stays fast. Loading and
    generation run in threads; one generation at a time (a llama context is not thread-safe),
    so the event loop is never blocked. A json_schema becomes a grammar the sampler obeys.
    """

    name = "local"

    def __init__(
        self, model_path: Callable[[], Path], *, threads: int = 2, context: int = 2048
    ) -> None:
        self._model_path = model_path
        self._threads = threads
        self._context = context
        self._llama: Any = None
        self._load_lock = asyncio.Lock()
        self._turn = asyncio.Lock()  # callers queue here instead of holding threads
        self._generating = threading.Lock()  # and a cancelled caller's thread still excludes
        self._grammars: dict[str, Any] = {}
        self.model_name = ""
        self.load_error: str | None = None
        self.load_seconds: float | None = None

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory."""
        return self._llama is not None

    async def load(self) -> None:
        """Load the model once (in a thread); ProviderUnavailable if it cannot be loaded."""
        async with self._load_lock:
            if self._llama is not None:
                return
            started = time.perf_counter()
            try:
                self._llama = await asyncio.to_thread(self._open)
            except Exception as exc:
                self.load_error = _short(exc)
                log.warning("local model could not be loaded: %s", exc)
                raise ProviderUnavailable(
                    f"local: {exc}",
                    user_message=f"The local model could not be loaded: {self.load_error}",
                ) from None
            self.load_error = None
            self.load_seconds = time.perf_counter() - started
            log.info("local model %s loaded in %.1f s", self.model_name, self.load_seconds)

    def _open(self) -> Any:
        from llama_cpp import Llama  # imported here: the binding is optional and slow to import

        path = self._model_path()
        self.model_name = path.name
        return Llama(
            model_path=str(path),
            n_ctx=self._context,
            n_threads=self._threads,
            n_threads_batch=self._threads,
            verbose=False,
        )

    async def complete(self, request: CompletionRequest) -> Completion:
        """Answer one request on the local model; tools are not offered to it."""
        await self.load()
        async with self._turn:
            try:
                return await asyncio.to_thread(self._generate, request)
            except LancelotError:
                raise
            except Exception as exc:  # llama-cpp raises plain errors (context overflow, ...)
                log.warning("local generation failed: %s", exc)
                raise ProviderUnavailable(f"local: {exc}") from None

    def _generate(self, request: CompletionRequest) -> Completion:
        with self._generating:
            response = self._llama.create_chat_completion(
                messages=_turns(request.messages),
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                grammar=self._grammar(request.json_schema),
            )
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return Completion(
            text=(choice["message"].get("content") or "").strip(),
            usage=Usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)),
            model=self.model_name,
            provider=self.name,
            finish_reason=choice.get("finish_reason") or "",
        )

    def _grammar(self, schema: dict[str, Any] | None) -> Any:
        """A cached grammar for a JSON schema (building one parses the schema each time)."""
        if schema is None:
            return None
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp import LlamaGrammar

            self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]


def _turns(messages: tuple[Message, ...]) -> list[dict[str, str]]:
    """Chat-template turns. Tool results become user text (the local lanes use no tools), and
    neighbours with the same role merge: strict templates (Gemma's) insist roles alternate."""
    turns: list[dict[str, str]] = []
    for m in messages:
        role, content = m.role.value, m.content
        if m.role is Role.TOOL:
            role, content = "user", f"[{m.name or 'tool'} result]\n{m.content}"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + content
        else:
            turns.append({"role": role, "content": content})
    return turns


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:160]
