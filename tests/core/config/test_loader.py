"""Settings: YAML plus environment, and one clear line when something is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import load_settings, unknown_environment
from core.errors import ConfigError

REPO = Path(__file__).resolve().parents[3]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lancelot.yaml"
    path.write_text(text)
    return path


def test_shipped_config_loads_with_safe_defaults() -> None:
    settings = load_settings(REPO / "config" / "lancelot.yaml", environ={})
    assert settings.web.host == "127.0.0.1"
    assert settings.web.port == 8080
    assert settings.limits.rate_per_minute == 60
    assert not settings.telegram_enabled
    assert not settings.gchat_enabled


def test_documented_environment_names_override_the_file(tmp_path: Path) -> None:
    env = {
        "LANCELOT_HOME": str(tmp_path / "data"),
        "TELEGRAM_BOT_TOKEN": "123:fake",
        "TELEGRAM_OWNER_ID": "42, 43",
        "LANCELOT_WEB_PORT": "9090",
        "LANCELOT_PROVIDER": "anthropic",
        "LANCELOT_PUBLIC_URL": "https://lancelot.example.org/",
    }
    settings = load_settings(write(tmp_path, "web: {port: 8081}\n"), environ=env)
    assert settings.home == tmp_path / "data"
    assert settings.telegram.owner_ids == (42, 43)
    assert settings.telegram_enabled
    assert settings.web.port == 9090
    assert settings.llm.provider == "anthropic"
    assert settings.public_url == "https://lancelot.example.org"


def test_any_key_can_come_from_the_environment(tmp_path: Path) -> None:
    env = {"LANCELOT_LIMITS_RATE_PER_MINUTE": "30", "LANCELOT_LEDGER_BATCH_SIZE": "64"}
    settings = load_settings(write(tmp_path, ""), environ=env)
    assert settings.limits.rate_per_minute == 30
    assert settings.ledger.batch_size == 64


def test_broken_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "web:\n  port: 8080\n   host: [oops\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, environ={})
    message = str(caught.value)
    assert str(path) in message
    assert "line 3" in message
    assert "\n" not in message


def test_unknown_key_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"web\.prot: unknown key"):
        load_settings(write(tmp_path, "web:\n  prot: 80\n"), environ={})


def test_bad_value_is_named_with_what_was_given(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"limits\.rate_per_minute: .*integer.*'lots'"):
        load_settings(write(tmp_path, "limits:\n  rate_per_minute: lots\n"), environ={})


def test_bad_environment_value_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"web\.port"):
        load_settings(write(tmp_path, ""), environ={"LANCELOT_WEB_PORT": "99999"})


@pytest.mark.parametrize("zone", ["Mars/Base", "../../etc/passwd", "utc/"])
def test_an_unknown_time_zone_stops_startup_in_one_line(tmp_path: Path, zone: str) -> None:
    environ = {"LANCELOT_SCHEDULER_TIMEZONE": zone}
    with pytest.raises(ConfigError, match=r"LANCELOT_SCHEDULER_TIMEZONE .*IANA time zone"):
        load_settings(write(tmp_path, ""), environ=environ)
    with pytest.raises(ConfigError, match=r"scheduler\.timezone: .*IANA time zone"):
        load_settings(write(tmp_path, f"scheduler:\n  timezone: '{zone}'\n"), environ={})
    tokyo = {"LANCELOT_SCHEDULER_TIMEZONE": "Asia/Tokyo"}
    settings = load_settings(write(tmp_path, ""), environ=tokyo)
    assert settings.scheduler.timezone == "Asia/Tokyo"


def test_the_owners_timezone_is_a_checked_setting_over_the_scheduler_and_machine(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match=r"LANCELOT_TIMEZONE .*IANA time zone"):
        load_settings(write(tmp_path, ""), environ={"LANCELOT_TIMEZONE": "Europe/Atlantis"})
    both = {"LANCELOT_TIMEZONE": "Asia/Tokyo", "LANCELOT_SCHEDULER_TIMEZONE": "Europe/Berlin"}
    assert load_settings(write(tmp_path, ""), environ=both).owner_timezone == "Asia/Tokyo"
    berlin = {"LANCELOT_SCHEDULER_TIMEZONE": "Europe/Berlin"}
    assert load_settings(write(tmp_path, ""), environ=berlin).owner_timezone == "Europe/Berlin"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("LANCELOT_WEB_PUBLIC_URL", "lancelot.example.org"),
        ("OPENAI_BASE_URL", "localhost:8000/v1"),
        ("ANTHROPIC_BASE_URL", "ftp://example.org"),
        ("TELEGRAM_API_BASE_URL", "http://127.0.0.1:port/bot"),
        ("TELEGRAM_WEBHOOK_URL", "https:///hook"),
    ],
)
def test_an_address_that_is_not_http_stops_startup(tmp_path: Path, name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=rf"{name} .*http:// or https:// address"):
        load_settings(write(tmp_path, ""), environ={name: value})


def test_addresses_are_kept_as_written_and_the_log_level_in_any_case(tmp_path: Path) -> None:
    settings = load_settings(
        write(tmp_path, ""),
        environ={
            "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
            "TELEGRAM_API_BASE_URL": "http://[::1]:8081/bot",
            "LANCELOT_LOG_LEVEL": "debug",
        },
    )
    assert settings.llm.openai_base_url == "http://127.0.0.1:8000/v1"
    assert settings.telegram.api_base_url == "http://[::1]:8081/bot"
    assert settings.log_level == "DEBUG"


def test_secret_values_are_not_echoed(tmp_path: Path) -> None:
    text = "telegram:\n  bot_token: [1, 2]\n"
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, text), environ={})
    assert "telegram.bot_token" in str(caught.value)


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="mapping"):
        load_settings(write(tmp_path, "- a\n- b\n"), environ={})


def test_missing_default_file_means_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no config/lancelot.yaml here
    settings = load_settings(environ={})
    assert settings.web.port == 8080


def test_a_named_file_that_is_missing_is_an_error(tmp_path: Path) -> None:
    absent = tmp_path / "absent.yaml"
    with pytest.raises(ConfigError, match=f"{absent}: no such settings file"):
        load_settings(absent, environ={})
    with pytest.raises(ConfigError, match="no such settings file"):
        load_settings(environ={"LANCELOT_CONFIG": str(absent)})


def test_an_environment_error_names_the_variable_not_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "web: {host: 127.0.0.1}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, environ={"LANCELOT_WEB_PORT": "eighty"})
    message = str(caught.value)
    assert message.startswith("environment variable LANCELOT_WEB_PORT (sets web.port): ")
    assert str(path) not in message
    with pytest.raises(ConfigError, match="environment variable TELEGRAM_OWNER_ID"):
        load_settings(path, environ={"TELEGRAM_OWNER_ID": "@me"})


def test_the_same_key_wrong_in_the_file_still_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "web: {port: eighty}\n")
    with pytest.raises(ConfigError, match=f"^{path}: web.port: "):
        load_settings(path, environ={})


def test_an_unknown_lancelot_variable_is_named_with_the_closest_known_one() -> None:
    env = {"LANCELOT_WEB_PROT": "8081", "LANCELOT_HOME": "/tmp/x", "LANCELOT_ZZZQQQ": "1"}
    assert unknown_environment(env) == [
        "LANCELOT_WEB_PROT is not a setting Lancelot knows (did you mean LANCELOT_WEB_PORT?);"
        " it is ignored",
        "LANCELOT_ZZZQQQ is not a setting Lancelot knows; it is ignored",
    ]
    assert unknown_environment({"LANCELOT_CONFIG": "x.yaml", "OTHER": "1"}) == []
