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

    model_config = ConfigDict(extra="forbid", frozen=True)


class WebSettings(Section):
    """The aiohttp app: receipt page, webhooks, health."""

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    public_url: WebAddress | None = None
    link_ttl_seconds: int = Field(default=600, gt=0)
    session_ttl_seconds: int = Field(default=12 * 3600, gt=0)
    page_size: int = Field(default=50, ge=1, le=500)


class TelegramSettings(Section):
    """Telegram Bot API channel."""

    bot_token: SecretStr | None = None
    owner_ids: tuple[int, ...] = ()
    api_base_url: WebAddress = "https://api.telegram.org/bot"
    webhook_url: WebAddress | None = None
    webhook_secret: SecretStr | None = None
    watchdog_seconds: float = Field(default=120.0, gt=0)

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
    owner_email: str | None = None
    service_account_file: Path | None = None
    space: str | None = None
    webhook_url: SecretStr | None = None
    # Where Google's keys and the Chat API live (tests point these at local fakes).
    api_base_url: WebAddress = "https://chat.googleapis.com/v1"
    chat_certs_url: WebAddress = (
        "https://www.googleapis.com/service_accounts/v1/metadata/x509/"
        "chat@system.gserviceaccount.com"
    )
    id_token_certs_url: WebAddress = "https://www.googleapis.com/oauth2/v1/certs"  # noqa: S105 (a URL)
    # Who may sign an ID token (endpoint-URL audience); add-on deployments add their own.
    id_token_emails: tuple[str, ...] = ("chat@system.gserviceaccount.com",)
    # How long an event waits for a synchronous answer before later cards are pushed.
    reply_wait_seconds: float = Field(default=8.0, ge=0, le=25)
    click_wait_seconds: float = Field(default=10.0, ge=0, le=25)
    # How long pushes must keep failing (3 in a row at least) before health says so.
    push_failing_seconds: float = Field(default=60.0, ge=0)

    @field_validator("id_token_emails", mode="before")
    @classmethod
    def _split_emails(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value


class LLMSettings(Section):
    """Model providers and the local model."""

    provider: Literal["gemini", "openai", "anthropic"] | None = None
    local_model: Path | None = None
    openai_api_key: SecretStr | None = None
    openai_base_url: WebAddress | None = None
    anthropic_api_key: SecretStr | None = None
    anthropic_base_url: WebAddress | None = None
    gemini_api_key: SecretStr | None = None
    gemini_base_url: WebAddress | None = None
    # Models per flagship lane (fast, deep); any name the provider (or compatible server) knows.
    openai_fast_model: str = "gpt-4o-mini"
    openai_deep_model: str = "gpt-4o"
    anthropic_fast_model: str = "claude-haiku-4-5"
    anthropic_deep_model: str = "claude-sonnet-4-6"
    gemini_fast_model: str = "gemini-2.5-flash"
    gemini_deep_model: str = "gemini-2.5-pro"
    timeout_seconds: float = Field(default=60.0, gt=0)
    max_attempts: int = Field(default=3, ge=1, le=10)
    retry_base_seconds: float = Field(default=0.5, ge=0)
    local_threads: int = Field(default=2, ge=1)
    local_context: int = Field(default=2048, ge=256)
    deep_over_chars: int = Field(default=4000, ge=1)  # longer requests go to the deep lane
    # USD per million tokens, (input, output), keyed "provider/model"; merged over the defaults.
    prices: dict[str, tuple[float, float]] = {}


class BudgetSettings(Section):
    """Spending caps (USD) on the paid flagship providers; unset means no cap. Days and months
    are the owner's (chosen in onboarding, else scheduler.timezone, else the jobs file's zone,
    UTC by default)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    daily_usd: float | None = Field(default=None, gt=0)
    monthly_usd: float | None = Field(default=None, gt=0)
    # What "Allow $N more today" adds; default 20 % of the daily budget ($1 without one).
    allow_step_usd: float | None = Field(default=None, gt=0)
    warn_at: float = Field(default=0.8, gt=0, lt=1)  # the share of a budget that warns once


class SandboxSettings(Section):
    """The Docker sandbox for shell commands."""

    image: str = "lancelot-sandbox:latest"
    pool_size: int = Field(default=2, ge=1, le=16)
    warm_at_start: bool = True
    timeout_seconds: float = Field(default=30.0, gt=0)
    memory_mb: int = Field(default=512, ge=16)
    cpus: float = Field(default=1.0, gt=0)
    pids: int = Field(default=128, ge=16)
    tmpfs_mb: int = Field(default=64, ge=1)
    mirror: str | None = None  # Debian mirror for `lancelot sandbox build`; default: apt's own
    dry_run_pool: int = Field(default=2, ge=1, le=16)  # overlay containers kept ready
    undo_hours: float = Field(default=24.0, gt=0)  # how long a change can be undone
    undo_max_mb: int = Field(default=1024, ge=1)  # backups of overwritten/deleted files
    undo_max_days: float = Field(default=7.0, gt=0)


class ToolsSettings(Section):
    """The tool fabric: safe mode, network allowlist, deploy command, git identity."""

    safe_mode: bool = False  # only local sandbox tools (also FEATURE_SAFE_MODE)
    network_allowlist: tuple[str, ...] = ()  # hosts; "*.example.org" for subdomains
    network_timeout_seconds: float = Field(default=20.0, gt=0)
    max_response_bytes: int = Field(default=1 << 20, ge=1024)
    deploy_command: tuple[str, ...] = ()  # an argument list, run in the workspace
    deploy_timeout_seconds: float = Field(default=600.0, gt=0)
    git_author: tuple[str, str] = ("Lancelot", "lancelot@localhost")

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

    fetch_allowlist: tuple[str, ...] = ()  # hosts; "*.example.org" for subdomains, "*" any
    # Hosts (exactly as written in the URL) that may be on a private or local address: a LAN
    # wiki, or the test site on 127.0.0.1. Every other host must resolve to public addresses.
    fetch_private_hosts: tuple[str, ...] = ()
    fetch_max_bytes: int = Field(default=2 << 20, ge=1024)  # read from the wire, at most
    fetch_max_chars: int = Field(default=12_000, ge=500)  # readable text the model gets
    fetch_timeout_seconds: float = Field(default=15.0, gt=0)
    search_provider: Literal["brave", "tavily", "searxng"] | None = None
    search_url: WebAddress | None = None  # the API's base URL; Brave's and Tavily's by default
    search_api_key: SecretStr | None = None  # Brave and Tavily need one
    search_results: int = Field(default=5, ge=1, le=20)
    search_timeout_seconds: float = Field(default=10.0, gt=0)

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
    rate_per_minute: int = Field(default=60, ge=1)


class LedgerSettings(Section):
    """Receipt ledger write batching, and how often its head is signed (a checkpoint)."""

    batch_size: int = Field(default=512, ge=1)
    flush_interval_ms: float = Field(default=50.0, gt=0)
    checkpoint_every_receipts: int = Field(default=1000, ge=1)
    checkpoint_every_minutes: float = Field(default=5.0, gt=0)


class SchedulerSettings(Section):
    """Scheduled jobs (their file), the daily digest and the health monitor."""

    jobs_file: Path = Path("config/scheduler.yaml")
    timezone: TimeZone | None = None  # overrides the jobs file's timezone
    digest_time: str | None = Field(default=None, pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
    health_interval_seconds: float = Field(default=30.0, gt=0)
    disk_min_free_mb: int = Field(default=500, ge=0)


class WatchdogSettings(Section):
    """How often the serving process beats (LANCELOT_HOME/heartbeat.json), and how long
    `lancelot watchdog` lets it be silent before telling the owner."""

    after_seconds: float = Field(default=60.0, gt=0)
    heartbeat_seconds: float = Field(default=5.0, gt=0)

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

    context_tokens: int = Field(default=2000, ge=200, le=100_000)  # conversation + facts


class DeliverySettings(Section):
    """How fast cards go out, per channel (python-telegram-bot's AIORateLimiter model): all
    chats together, and each group chat; a private chat is not paced ahead of time (a 429's
    retry_after is honoured). 0 switches a limit off."""

    global_per_second: float = Field(default=30.0, ge=0)  # Telegram: about 30 a second
    group_per_minute: float = Field(default=20.0, ge=0)  # Telegram: 20 a minute to one group


class ProgressSettings(Section):
    """The progress message of a running request (edited as it goes, with Stop)."""

    after_seconds: float = Field(default=2.0, ge=0)  # a quicker request shows none
    edit_interval_seconds: float = Field(default=1.0, ge=1.0)  # Telegram: ~1 edit a second


class FilesSettings(Section):
    """Files from and to the owner's phone: size limits (the announced size is checked
    before anything is downloaded). Telegram's own Bot API serves bots files up to 20 MB
    and takes uploads up to 50 MB; a self-hosted Bot API server allows more."""

    max_in_mb: float = Field(default=20.0, gt=0)
    max_out_mb: float = Field(default=50.0, gt=0)
    transcribe_model: str | None = None  # OpenAI's transcription model; default whisper-1


class Settings(Section):
    """Everything Lancelot reads at startup."""

    home: Path = Path("lancelot_data")
    secret: SecretStr | None = None
    log_level: LogLevel = "INFO"
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
    # FEATURE_* switches by name (crusader: false); the environment and features.env win.
    features: dict[str, bool] = Field(default_factory=dict)

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
