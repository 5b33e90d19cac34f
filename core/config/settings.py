"""The settings schema. Unknown keys are errors; secrets are SecretStr and never printed."""

from __future__ import annotations

import shlex
import zoneinfo
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from core.clock import machine_zone


def _web_address(value: str) -> str:
    """An http(s) address with a host, kept exactly as written (a path may follow, as the Bot
    API's /bot does); anything else stops startup instead of failing at the first call."""
    try:
        parts = urlsplit(value)
        _ = parts.port  # a port that is not a number raises here
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("an http:// or https:// address with a host, like https://example.org")
    return value


def known_zone(value: str) -> str:
    """A time zone the IANA database knows (the settings, the jobs file, a job), unchanged;
    refused at startup, not when the first job runs."""
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown time zone {value!r}: an IANA time zone name, like Europe/Paris or UTC"
        ) from None
    return value


WebAddress = Annotated[str, AfterValidator(_web_address)]
TimeZone = Annotated[str, AfterValidator(known_zone)]
LogLevel = Annotated[
    Literal["DEBUG", "INFO", "WARNING", "ERROR"],
    BeforeValidator(lambda value: value.upper() if isinstance(value, str) else value),
]


class Section(BaseModel):
    """Base for every settings section: unknown keys are rejected."""

    # Each setting's docstring is its description, which docs/settings.md shows
    # (core/config/reference.py reads them from this file: pydantic's own reading costs the
    # start a tokenization of every class).
    model_config = ConfigDict(extra="forbid", frozen=True)


class WebSettings(Section):
    """The aiohttp app: receipt page, webhooks, health."""

    host: str = "127.0.0.1"
    """The address the web app binds to (`0.0.0.0` for every interface)."""
    port: int = Field(default=8080, ge=0, le=65535)
    """The web app's port; one already in use stops startup saying to set `LANCELOT_WEB_PORT`."""
    public_url: WebAddress | None = None
    """The base URL put in links the owner opens; with https the session cookie is `Secure`."""
    link_ttl_seconds: int = Field(default=600, gt=0)
    """How long a one-time receipt page link works."""
    session_ttl_seconds: int = Field(default=12 * 3600, gt=0)
    """How long a browser session opened by such a link lasts."""
    page_size: int = Field(default=50, ge=1, le=500)
    """Receipts listed on one page."""


class TelegramSettings(Section):
    """Telegram Bot API channel."""

    bot_token: SecretStr | None = None
    """The bot's token from @BotFather; enables Telegram."""
    owner_ids: tuple[int, ...] = ()
    """The owner's numeric Telegram user id (comma list allowed); without it, the first to send the
    pairing code becomes the owner."""
    api_base_url: WebAddress = "https://api.telegram.org/bot"
    """The Bot API base (a self-hosted Bot API server, or a test fake)."""
    webhook_url: WebAddress | None = None
    """Webhook mode instead of long polling: the public URL Telegram posts updates to."""
    webhook_secret: SecretStr | None = None
    """The secret Telegram sends with each webhook update."""
    watchdog_seconds: float = Field(default=120.0, gt=0)
    """How long polling may be silent before it is restarted."""

    @field_validator("owner_ids", mode="before")
    @classmethod
    def _split_ids(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(int(part) for part in value.replace(" ", "").split(",") if part)
        if isinstance(value, int):
            return (value,)
        return value


class GChatSettings(Section):
    """Google Chat app endpoint and push."""

    audience: str | None = None
    """Enables the Google Chat endpoint `POST /gchat/events`: the project number, or the endpoint
    URL."""
    owner_email: str | None = None
    """The owner's Google account; without it, the first verified sender of the pairing code
    becomes the owner."""
    service_account_file: Path | None = None
    """Push through the Chat API as the app (scope chat.bot); also fetches attachments."""
    space: str | None = None
    """The space that gets alerts and approvals."""
    webhook_url: SecretStr | None = None
    """An incoming webhook, for push-only setups."""
    api_base_url: WebAddress = "https://chat.googleapis.com/v1"
    """Where the Chat API lives (tests point it at a local fake)."""
    chat_certs_url: WebAddress = (
        "https://www.googleapis.com/service_accounts/v1/metadata/x509/"
        "chat@system.gserviceaccount.com"
    )
    """Where Google Chat's signing keys are published."""
    id_token_certs_url: WebAddress = "https://www.googleapis.com/oauth2/v1/certs"  # noqa: S105 (a URL)
    """Where Google's ID token keys are published."""
    id_token_emails: tuple[str, ...] = ("chat@system.gserviceaccount.com",)
    """Who may sign ID tokens (endpoint-URL audience); add-on deployments add their own service
    agent."""
    reply_wait_seconds: float = Field(default=8.0, ge=0, le=25)
    """How long an event waits for a synchronous answer before later cards are pushed."""
    click_wait_seconds: float = Field(default=10.0, ge=0, le=25)
    """The same for a button click."""
    push_failing_seconds: float = Field(default=60.0, ge=0)
    """How long pushes must keep failing (3 in a row at least) before health degrades."""

    @field_validator("id_token_emails", mode="before")
    @classmethod
    def _split_emails(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value


class LLMSettings(Section):
    """Model providers and the local model."""

    provider: Literal["gemini", "openai", "anthropic"] | None = None
    """The flagship model provider: gemini, openai or anthropic."""
    local_model: Path | None = None
    """A GGUF file for the local model lanes; default: the Gemma 3 270M from the `local` extra,
    assembled into `LANCELOT_HOME/models` on first use."""
    openai_api_key: SecretStr | None = None
    """OpenAI's key."""
    openai_base_url: WebAddress | None = None
    """An OpenAI-compatible server instead of OpenAI's."""
    anthropic_api_key: SecretStr | None = None
    """Anthropic's key."""
    anthropic_base_url: WebAddress | None = None
    """Another address for Anthropic's API."""
    gemini_api_key: SecretStr | None = None
    """Gemini's key."""
    gemini_base_url: WebAddress | None = None
    """Another address for Gemini's API."""
    # Models per flagship lane (fast, deep); any name the provider (or compatible server) knows.
    openai_fast_model: str = "gpt-4o-mini"
    """The model behind OpenAI's fast lane (any name the server knows)."""
    openai_deep_model: str = "gpt-4o"
    """The model behind OpenAI's deep lane."""
    anthropic_fast_model: str = "claude-haiku-4-5"
    """The model behind Anthropic's fast lane."""
    anthropic_deep_model: str = "claude-sonnet-4-6"
    """The model behind Anthropic's deep lane."""
    gemini_fast_model: str = "gemini-2.5-flash"
    """The model behind Gemini's fast lane."""
    gemini_deep_model: str = "gemini-2.5-pro"
    """The model behind Gemini's deep lane."""
    timeout_seconds: float = Field(default=60.0, gt=0)
    """How long one model call may take."""
    max_attempts: int = Field(default=3, ge=1, le=10)
    """Tries per model call, transient errors retried."""
    retry_base_seconds: float = Field(default=0.5, ge=0)
    """The first wait between tries (it doubles)."""
    local_threads: int = Field(default=2, ge=1)
    """CPU threads the local model uses."""
    local_context: int = Field(default=2048, ge=256)
    """The local model's context, in tokens."""
    deep_over_chars: int = Field(default=4000, ge=1)
    """Longer requests go to the deep lane."""
    prices: dict[str, tuple[float, float]] = {}
    """USD per million tokens, (input, output), keyed `provider/model`; merged over the built-in
    prices."""


class BudgetSettings(Section):
    """Spending caps (USD) on the paid flagship providers; unset means no cap. Days and months
    are the owner's (chosen in onboarding, else `timezone`, else scheduler.timezone, else this
    machine's zone)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    daily_usd: float | None = Field(default=None, gt=0)
    """A daily spending cap on the paid models, in USD; unset: no cap."""
    monthly_usd: float | None = Field(default=None, gt=0)
    """A monthly spending cap, in USD."""
    allow_step_usd: float | None = Field(default=None, gt=0)
    """What one "Allow $N more today" adds; default 20 % of the daily budget ($1 without one)."""
    warn_at: float = Field(default=0.8, gt=0, lt=1)
    """The share of a budget that warns once."""


class SandboxSettings(Section):
    """The Docker sandbox for shell commands."""

    image: str = "lancelot-sandbox:latest"
    """The shell sandbox image, built by `lancelot sandbox build`."""
    pool_size: int = Field(default=2, ge=1, le=16)
    """Warm containers kept ready for commands."""
    warm_at_start: bool = True
    """Start the warm pool when Lancelot starts."""
    timeout_seconds: float = Field(default=30.0, gt=0)
    """A command is killed after this (exit 124)."""
    memory_mb: int = Field(default=512, ge=16)
    """Memory limit of a sandbox container."""
    cpus: float = Field(default=1.0, gt=0)
    """CPU limit of a sandbox container."""
    pids: int = Field(default=128, ge=16)
    """Process limit of a sandbox container."""
    tmpfs_mb: int = Field(default=64, ge=1)
    """Size of the container's private `/tmp`."""
    mirror: str | None = None
    """Debian mirror for `lancelot sandbox build`; default: apt's own."""
    dry_run_pool: int = Field(default=2, ge=1, le=16)
    """Overlay containers kept ready for dry runs."""
    undo_hours: float = Field(default=24.0, gt=0)
    """How long a change can be undone."""
    undo_max_mb: int = Field(default=1024, ge=1)
    """Space for backups of overwritten or deleted files."""
    undo_max_days: float = Field(default=7.0, gt=0)
    """The oldest backup kept."""


class ToolsSettings(Section):
    """The tool fabric: safe mode, network allowlist, deploy command, git identity."""

    safe_mode: bool = False
    """Only local, workspace-bound tool providers (also `FEATURE_SAFE_MODE`)."""
    network_allowlist: tuple[str, ...] = ()
    """Hosts `net.request` may reach (comma list; `*.example.org` for subdomains)."""
    network_timeout_seconds: float = Field(default=20.0, gt=0)
    """How long one `net.request` may take."""
    max_response_bytes: int = Field(default=1 << 20, ge=1024)
    """The most `net.request` reads of an answer."""
    deploy_command: tuple[str, ...] = ()
    """The deploy command, split like a shell line but never run by one."""
    deploy_timeout_seconds: float = Field(default=600.0, gt=0)
    """How long the deploy command may take."""
    git_author: tuple[str, str] = ("Lancelot", "lancelot@localhost")
    """Name and email of commits the tools make."""

    @field_validator("network_allowlist", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        return tuple(value.replace(",", " ").split()) if isinstance(value, str) else value

    @field_validator("deploy_command", mode="before")
    @classmethod
    def _split_command(cls, value: object) -> object:
        return tuple(shlex.split(value)) if isinstance(value, str) else value


class LookupSettings(Section):
    """The agent's web lookups, each off until configured: web_fetch opens pages of the hosts
    in `fetch_allowlist` ("*" for any public host) as readable text; web_search asks a search
    API (Brave, Tavily or a SearXNG instance)."""

    fetch_allowlist: tuple[str, ...] = ()
    """Hosts `web_fetch` may open (comma list; `*.example.org` for subdomains, `*` for any public
    host)."""
    fetch_private_hosts: tuple[str, ...] = ()
    """Hosts, exactly as written in a URL, that may be on a private or local address (a LAN
    wiki)."""
    fetch_max_bytes: int = Field(default=2 << 20, ge=1024)
    """The most `web_fetch` reads from the wire."""
    fetch_max_chars: int = Field(default=12_000, ge=500)
    """The most readable text the model gets from a page."""
    fetch_timeout_seconds: float = Field(default=15.0, gt=0)
    """How long one fetch may take."""
    search_provider: Literal["brave", "tavily", "searxng"] | None = None
    """`web_search`: `brave` or `tavily` (a key needed) or `searxng` (its URL needed, with `json`
    among its formats)."""
    search_url: WebAddress | None = None
    """The search API's base URL; Brave's and Tavily's own by default."""
    search_api_key: SecretStr | None = None
    """The search API's key, sent only in a header."""
    search_results: int = Field(default=5, ge=1, le=20)
    """Results a search returns."""
    search_timeout_seconds: float = Field(default=10.0, gt=0)
    """How long one search may take."""

    @field_validator("fetch_allowlist", "fetch_private_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        return tuple(value.replace(",", " ").split()) if isinstance(value, str) else value

    @property
    def fetch_enabled(self) -> bool:
        """web_fetch is offered once some host is allowed."""
        return bool(self.fetch_allowlist)

    @property
    def search_enabled(self) -> bool:
        """web_search is offered once a search API is chosen."""
        return self.search_provider is not None

    @model_validator(mode="after")
    def _search_complete(self) -> LookupSettings:
        if self.search_provider == "searxng" and not self.search_url:
            raise ValueError("search_provider searxng needs search_url (the instance's URL)")
        if self.search_provider in ("brave", "tavily") and self.search_api_key is None:
            raise ValueError(f"search_provider {self.search_provider} needs search_api_key")
        return self


class LimitSettings(Section):
    """Input limits applied to every inbound message."""

    max_message_chars: int = Field(default=8000, ge=16)
    """The longest message taken."""
    rate_per_minute: int = Field(default=60, ge=1)
    """Messages a sender may send a minute."""


class LedgerSettings(Section):
    """Receipt ledger write batching, and how often its head is signed (a checkpoint)."""

    batch_size: int = Field(default=512, ge=1)
    """Receipts written in one batch at most."""
    flush_interval_ms: float = Field(default=50.0, gt=0)
    """How long a batch waits for more receipts."""
    checkpoint_every_receipts: int = Field(default=1000, ge=1)
    """Sign the ledger's head every this many receipts (at most once a second); also at every
    shutdown."""
    checkpoint_every_minutes: float = Field(default=5.0, gt=0)
    """Sign it every this many minutes if receipts came."""


class SchedulerSettings(Section):
    """Scheduled jobs (their file), the daily digest and the health monitor."""

    jobs_file: Path = Path("config/scheduler.yaml")
    """The scheduled jobs file."""
    timezone: TimeZone | None = None
    """The jobs' timezone, over the jobs file's."""
    digest_time: str | None = Field(default=None, pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
    """When the daily digest comes (`HH:MM`)."""
    health_interval_seconds: float = Field(default=30.0, gt=0)
    """The health monitor's period."""
    disk_min_free_mb: int = Field(default=500, ge=0)
    """The free-space floor for `LANCELOT_HOME`."""


class WatchdogSettings(Section):
    """How often the serving process beats (LANCELOT_HOME/heartbeat.json), and how long
    `lancelot watchdog` lets it be silent before telling the owner."""

    after_seconds: float = Field(default=60.0, gt=0)
    """How long `lancelot watchdog` waits without a heartbeat before telling you."""
    heartbeat_seconds: float = Field(default=5.0, gt=0)
    """How often `lancelot run` writes one (at most half of the above)."""

    @model_validator(mode="after")
    def _beats_within_limit(self) -> WatchdogSettings:
        if self.heartbeat_seconds * 2 > self.after_seconds:
            raise ValueError(
                "heartbeat_seconds must be at most half of after_seconds (else a live "
                "Lancelot looks dead between two beats)"
            )
        return self


class MemorySettings(Section):
    """What the agent sees of memory before each request (FEATURE_MEMORY turns it off)."""

    context_tokens: int = Field(default=2000, ge=200, le=100_000)
    """How much conversation and memory the agent sees before a request."""


class DeliverySettings(Section):
    """How fast cards go out, per channel (python-telegram-bot's AIORateLimiter model): all
    chats together, and each group chat; a private chat is not paced ahead of time (a 429's
    retry_after is honoured). 0 switches a limit off."""

    global_per_second: float = Field(default=30.0, ge=0)
    """Cards a second on one channel, all chats together (0: no limit)."""
    group_per_minute: float = Field(default=20.0, ge=0)
    """Cards a minute to one group chat (0: no limit)."""


class ProgressSettings(Section):
    """The progress message of a running request (edited as it goes, with Stop)."""

    after_seconds: float = Field(default=2.0, ge=0)
    """When a running request shows its progress message."""
    edit_interval_seconds: float = Field(default=1.0, ge=1.0)
    """The least time between two of its edits (Telegram's limit: 1 s)."""


class FilesSettings(Section):
    """Files from and to the owner's phone: size limits (the announced size is checked
    before anything is downloaded). Telegram's own Bot API serves bots files up to 20 MB
    and takes uploads up to 50 MB; a self-hosted Bot API server allows more."""

    max_in_mb: float = Field(default=20.0, gt=0)
    """The largest file taken from the phone."""
    max_out_mb: float = Field(default=50.0, gt=0)
    """The largest file sent to it."""
    max_image_mb: float = Field(default=5.0, gt=0, le=20)
    """The largest picture shown to the model (a photo, or an image sent as a file); a larger
    one is refused with a note, not sent. 5 MB is Anthropic's cap per image."""
    transcribe_model: str | None = None
    """OpenAI's transcription model; default `whisper-1`."""


class McpSettings(Section):
    """MCP servers (declared in their own file, the ecosystem's `mcp.json` format): where that
    file is, and the bounds on every call to them."""

    config: Path | None = None
    """The servers' file; default `LANCELOT_HOME/mcp.json` (no file: no servers)."""
    connect_timeout_seconds: float = Field(default=30.0, gt=0)
    """How long a server may take to start and list its tools."""
    call_timeout_seconds: float = Field(default=60.0, gt=0)
    """How long one tool call may take."""
    max_result_chars: int = Field(default=20_000, ge=100)
    """The most text one tool call returns; a longer result is cut and says so."""
    restart_min_seconds: float = Field(default=1.0, gt=0)
    """The first wait before a server that died is started again (it doubles)."""
    restart_max_seconds: float = Field(default=300.0, gt=0)
    """The longest wait between two restarts."""
    offer_all_up_to: int = Field(default=20, ge=0)
    """With at most this many MCP tools on, the model is offered them all; with more, it is
    offered `find_tools` and sees a tool once a search found it (prompts stay small)."""


class Settings(Section):
    """Everything Lancelot reads at startup."""

    home: Path = Path("lancelot_data")
    """The data directory (SQLite files, workspace, logs), made owner-only (0700), its databases,
    keys and logs 0600; one Lancelot per home: a second one refuses to start, naming the first
    one's pid."""
    secret: SecretStr | None = None
    """The HMAC key for buttons and links; generated into `LANCELOT_HOME/secret.key` if unset."""
    log_level: LogLevel = "INFO"
    """DEBUG, INFO, WARNING or ERROR."""
    timezone: TimeZone | None = None
    """Your timezone (an IANA name): every time a card, `/undo`, `/jobs` or the receipt page
    shows is in it. A zone chosen in onboarding wins; unset: scheduler.timezone, else this
    machine's zone (`TZ` or /etc/localtime)."""
    web: WebSettings = WebSettings()
    telegram: TelegramSettings = TelegramSettings()
    gchat: GChatSettings = GChatSettings()
    llm: LLMSettings = LLMSettings()
    budget: BudgetSettings = BudgetSettings()
    sandbox: SandboxSettings = SandboxSettings()
    tools: ToolsSettings = ToolsSettings()
    lookups: LookupSettings = LookupSettings()
    limits: LimitSettings = LimitSettings()
    ledger: LedgerSettings = LedgerSettings()
    scheduler: SchedulerSettings = SchedulerSettings()
    watchdog: WatchdogSettings = WatchdogSettings()
    memory: MemorySettings = MemorySettings()
    delivery: DeliverySettings = DeliverySettings()
    progress: ProgressSettings = ProgressSettings()
    files: FilesSettings = FilesSettings()
    mcp: McpSettings = McpSettings()
    features: dict[str, bool] = Field(default_factory=dict)
    """`FEATURE_*` switches by name (`crusader: false`); the environment and `features.env` win."""

    @property
    def owner_timezone(self) -> str:
        """The owner's zone until onboarding names one: `timezone`, else scheduler.timezone,
        else this machine's."""
        return self.timezone or self.scheduler.timezone or machine_zone()

    @property
    def telegram_enabled(self) -> bool:
        """Telegram runs when it has a token and at least one owner."""
        return self.telegram.bot_token is not None and bool(self.telegram.owner_ids)

    @property
    def gchat_enabled(self) -> bool:
        """The Google Chat endpoint runs when it has an audience and an owner."""
        return bool(self.gchat.audience and self.gchat.owner_email)

    @property
    def public_url(self) -> str:
        """The base URL put into links the owner opens."""
        if self.web.public_url:
            return self.web.public_url.rstrip("/")
        host = "127.0.0.1" if self.web.host in ("0.0.0.0", "::") else self.web.host  # noqa: S104
        return f"http://{host}:{self.web.port}"
