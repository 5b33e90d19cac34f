"""`lancelot doctor` on Google Chat: the service account file reads and parses as a key; the
endpoint has its audience; with no owner in the settings, who paired."""

from __future__ import annotations

import json

from bot.channels.gchat import NAME
from bot.doctor.owners import check_paired
from bot.doctor.report import Finding, Status, failed, ok, skipped
from core.config import Settings

CHAT_SCOPE = "https://www.googleapis.com/auth/chat.bot"


def check_gchat(settings: Settings) -> list[Finding]:
    """The service account file reads and parses as a key; the endpoint has its audience."""
    gc = settings.gchat
    name = "google chat"
    if not (gc.audience or gc.owner_email or gc.service_account_file or gc.webhook_url):
        return [skipped(name, "not configured (GCHAT_AUDIENCE is not set)")]
    if gc.owner_email and not gc.audience:
        fix = "set GCHAT_AUDIENCE to the project number (or the endpoint URL)"
        return [failed(name, "GCHAT_AUDIENCE is not set, so the endpoint is off", fix)]
    if gc.audience and not gc.owner_email:
        owner = check_paired(settings, NAME, "google chat owner")
        if owner.status is not Status.OK:
            return [owner]
    if gc.service_account_file is None:
        return [ok(name, f"audience {gc.audience}" if gc.audience else "incoming webhook only")]
    path = gc.service_account_file.expanduser()
    fix = "set GCHAT_SERVICE_ACCOUNT_FILE to the JSON key downloaded for the Chat app"
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return [failed(name, f"{path}: cannot read ({exc.strerror or exc})", fix)]
    except (json.JSONDecodeError, UnicodeDecodeError):
        return [failed(name, f"{path}: not JSON", fix)]
    from google.oauth2 import service_account

    try:
        credentials = service_account.Credentials.from_service_account_info(  # type: ignore[no-untyped-call]
            info, scopes=[CHAT_SCOPE]
        )
    except (ValueError, TypeError, KeyError) as exc:
        return [failed(name, f"{path}: not a service account key ({exc})", fix)]
    audience = f"; audience {gc.audience}" if gc.audience else ""
    return [ok(name, f"service account {credentials.service_account_email}{audience}")]
