"""The local model: llama-cpp-python on a GGUF file, loaded once, generating in a thread."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, cast

from core.errors import LancelotError, PermanentError, ProviderUnavailable
from core.llm.constrained import choose, enum_shape
from core.llm.types import Completion, CompletionRequest, Message, Role, Usage
from core.runtime.tasks import Supervisor

log = logging.getLogger(__name__)

T = TypeVar("T")
WORKER_NICE = 10  # the loop answers /status while the model computes
CANNOT_SEE = (
    "My local model cannot see images: it reads text only. To ask about a picture, set a "
    "model provider key (`lancelot setup`, or OPENAI_API_KEY, ANTHROPIC_API_KEY or "
    "GEMINI_API_KEY) and send it again."
)


class LocalProvider:
    """A GGUF model behind llama-cpp-python.

    Nothing loads until the first call (or `load()`), so startup stays fast. Loading and
    generation run on one dedicated worker thread: one generation at a time (a llama context
    is not thread-safe), at a lower CPU priority than the event loop (on two cores the
    loop must still win the CPU the moment it has work). A json_schema constrains the
    output: an enum of strings (bare, or the one field of an object) by constrained choice
    (core.llm.constrained), any other schema by a grammar.
    """

    name = "local"

    def __init__(
        self,
        model_path: Callable[[], Path],
        *,
        threads: int = 2,
        context: int = 2048,
        tasks: Supervisor | None = None,
    ) -> None:
        self._model_path = model_path
        self._supervisor = tasks or Supervisor()
        self._threads = threads
        self._context = context
        self._llama: Any = None  # labels: its cache keeps the fixed few-shot prefix hot
        self._writer: Any = None  # free text and grammars, so they never evict that prefix
        self._load_lock = asyncio.Lock()
        # One worker: calls queue in order, and a cancelled caller's generation still
        # finishes before the next one starts. llama.cpp's own threads inherit its priority.
        self._worker = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="local-model", initializer=_lower_priority
        )
        self._grammars: dict[str, Any] = {}
        self._warming: asyncio.Task[None] | None = None
        self.model_name = ""
        self.load_error: str | None = None
        self.load_seconds: float | None = None

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory."""
        return self._llama is not None

    def warm(self) -> None:
        """Start loading in the background (once), so a later call does not wait for it; a
        failure shows in `load_error` (health) and again at the next call."""
        if self._llama is None and self._warming is None:
            # Not reported when it dies: load_error and the next call's load() say it all.
            self._warming = self._supervisor.spawn(
                self._warm(), name="local-model-load", report=False
            )

    async def _warm(self) -> None:
        with contextlib.suppress(ProviderUnavailable):
            await self.load()

    async def load(self) -> None:
        """Load the model once (in a thread); ProviderUnavailable if it cannot be loaded."""
        async with self._load_lock:
            if self._llama is not None:
                return
            started = time.perf_counter()
            try:
                self._llama = await self._in_worker(self._open)
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
        """Answer one request on the local model; tools are not offered to it, and it
        cannot see images: a request with one is refused, never answered blind."""
        if any(message.images for message in request.messages):
            raise PermanentError("local: images in the request", user_message=CANNOT_SEE)
        await self.load()
        try:
            return await self._in_worker(partial(self._generate, request))
        except LancelotError:
            raise
        except Exception as exc:  # llama-cpp raises plain errors (context overflow, ...)
            log.warning("local generation failed: %s", exc)
            raise ProviderUnavailable(f"local: {exc}") from None

    async def _in_worker(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._worker, work)

    async def aclose(self) -> None:
        """Stop the worker (a generation under way finishes; queued ones are dropped)."""
        if self._warming is not None and not self._warming.done():
            self._warming.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._warming
        self._worker.shutdown(wait=False, cancel_futures=True)

    def _generate(self, request: CompletionRequest) -> Completion:
        shape = enum_shape(request.json_schema)
        if shape is not None:
            prompt = self._prompt(self._llama, request.messages)
            lead = list(self._llama.tokenize(shape.lead.encode(), add_bos=False))
            choice = choose(self._llama, prompt + lead, shape.options)
            text, reason = shape.wrap(choice.text), "stop"
            used = Usage(len(prompt), len(lead) + choice.tokens)
        else:
            # A second context on the same memory-mapped weights: cheap, and it keeps the
            # label context's prompt cache for the next classification.
            if self._writer is None:
                self._writer = self._open()
            prompt = self._prompt(self._writer, request.messages)
            response = self._writer.create_completion(
                prompt=prompt,
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                grammar=self._grammar(request.json_schema),
            )
            first = response["choices"][0]
            counts = response.get("usage") or {}
            text, reason = first["text"].strip(), first.get("finish_reason") or ""
            used = Usage(counts.get("prompt_tokens", 0), counts.get("completion_tokens", 0))
        return Completion(
            text=text, usage=used, model=self.model_name, provider=self.name, finish_reason=reason
        )

    @staticmethod
    def _prompt(llama: Any, messages: tuple[Message, ...]) -> list[int]:
        """Tokens of the conversation: the model's chat template if it has one (instruction
        models), else the turns as plain paragraphs (a base model continues the text)."""
        turns = _turns(messages)
        template = llama.metadata.get("tokenizer.chat_template")
        if not template:
            text = "\n\n".join(t["content"] for t in turns)
            return list(llama.tokenize(text.encode(), add_bos=True, special=False))
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        bos = llama.detokenize([llama.token_bos()], special=True).decode(errors="replace")
        eos = llama.detokenize([llama.token_eos()], special=True).decode(errors="replace")
        formatter = Jinja2ChatFormatter(template, eos_token=eos, bos_token=bos)
        text = formatter(messages=cast(Any, turns)).prompt
        add_bos = not (bos and text.startswith(bos))  # templates often write the BOS themselves
        return list(llama.tokenize(text.encode(), add_bos=add_bos, special=True))

    def _grammar(self, schema: dict[str, Any] | None) -> Any:
        """A cached grammar for a JSON schema (building one parses the schema each time)."""
        if schema is None:
            return None
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp.llama_grammar import LlamaGrammar

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


def _lower_priority() -> None:
    """Nice the worker thread (Linux: per thread) so the event loop's thread goes first."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICE)


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:160]
