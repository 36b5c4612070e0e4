"""Settings come from the environment; mistakes give one clear line, not a traceback."""

from __future__ import annotations

import secrets
from pathlib import Path

from tests import processes

PRINT_SETTING = "from django.conf import settings; print(settings.{})"


def shell(code: str, **env: str | None) -> tuple[int, str, str]:
    result = processes.manage("shell", "--no-imports", "-c", code, env=processes.base_env(**env))
    return result.returncode, result.stdout.strip(), result.stderr.strip()


def test_the_product_hashes_passwords_with_djangos_default() -> None:
    """The suite's processes hash the quick way (tests/settings.py); the product does not."""
    which = "from django.contrib.auth.hashers import get_hasher; print(get_hasher().algorithm)"

    assert shell(which, DJANGO_SETTINGS_MODULE="oracle.settings")[1] == "pbkdf2_sha256"
    assert shell(which)[1] == "md5"


def test_it_rejects_a_bad_database_url_with_a_clear_message() -> None:
    code, _, stderr = shell("pass", DATABASE_URL="mysqlx://what/ever")

    assert code == 2
    assert "DATABASE_URL" in stderr
    assert "postgres://" in stderr  # says what would be right
    assert "Traceback" not in stderr


def test_it_reads_a_postgresql_database_url() -> None:
    code, stdout, _ = shell(
        "from django.conf import settings; d = settings.DATABASES['default'];"
        "print(d['ENGINE'], d['HOST'], d['PORT'], d['NAME'])",
        DATABASE_URL="postgres://oracle:pw@db.example:5433/oracle_prod",
    )

    assert code == 0
    assert stdout == "django.db.backends.postgresql db.example 5433 oracle_prod"


def test_it_uses_sqlite_under_the_var_folder_by_default(tmp_path: Path) -> None:
    code, stdout, _ = shell(
        "from django.conf import settings; print(settings.DATABASES['default']['NAME'])",
        DATABASE_URL=None,
        ORACLE_VAR_DIR=str(tmp_path),
        REDIS_URL="redis://127.0.0.1:1/0",
    )

    assert code == 0
    assert stdout == str(tmp_path / "oracle.sqlite3")


def test_it_rejects_a_redis_url_that_is_not_one() -> None:
    code, _, stderr = shell("pass", REDIS_URL="http://127.0.0.1:6379")

    assert code == 2
    assert "REDIS_URL" in stderr
    assert "Traceback" not in stderr


def test_with_nothing_set_there_are_no_debug_pages_and_only_localhost_is_answered(
    tmp_path: Path,
) -> None:
    code, stdout, _ = shell(
        "from django.conf import settings;"
        "print(settings.DEBUG, settings.ALLOWED_HOSTS, settings.SESSION_COOKIE_SECURE)",
        DEBUG=None, ALLOWED_HOSTS=None, SECRET_KEY=None, ORACLE_HTTPS=None,
        ORACLE_VAR_DIR=str(tmp_path), REDIS_URL="redis://127.0.0.1:1/0",
    )  # fmt: skip

    assert code == 0
    assert stdout == "False ['localhost', '127.0.0.1', '[::1]'] False"


def test_it_requires_a_secret_key_when_served_over_https() -> None:
    code, _, stderr = shell(
        "pass", ORACLE_HTTPS="true", SECRET_KEY=None, ALLOWED_HOSTS="example.com"
    )

    assert code == 2
    assert "SECRET_KEY must be set when ORACLE_HTTPS is on" in stderr


def test_it_generates_a_key_once_and_keeps_it(tmp_path: Path) -> None:
    env = {"SECRET_KEY": None, "ORACLE_HTTPS": None, "ORACLE_VAR_DIR": str(tmp_path),
           "REDIS_URL": "redis://127.0.0.1:1/0"}  # fmt: skip

    first = shell(PRINT_SETTING.format("SECRET_KEY"), **env)[1]
    second = shell(PRINT_SETTING.format("SECRET_KEY"), **env)[1]

    assert len(first) >= 50
    assert first == second
    assert (tmp_path / "dev-secret-key").stat().st_mode & 0o077 == 0  # owner only


def test_production_settings_pass_the_deploy_check() -> None:
    result = processes.manage(
        "check", "--deploy", "--fail-level", "WARNING",
        env=processes.base_env(
            ORACLE_HTTPS="true", SECRET_KEY=secrets.token_urlsafe(50),
            ALLOWED_HOSTS="oracle.example.com",
        ),
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_it_reads_the_model_variables() -> None:
    code, stdout, _ = shell(
        "from django.conf import settings;"
        "print(settings.ORACLE_MODEL, settings.ORACLE_API_BASE, settings.ORACLE_MODELS)",
        ORACLE_MODEL="openai/gpt-4o-mini",
        ORACLE_API_BASE="http://127.0.0.1:11434",
        ORACLE_MODELS="openai/gpt-4o,anthropic/claude-sonnet-4-5",
    )

    assert code == 0
    assert stdout == (
        "openai/gpt-4o-mini http://127.0.0.1:11434 "
        "['openai/gpt-4o-mini', 'openai/gpt-4o', 'anthropic/claude-sonnet-4-5']"
    )


def test_it_reads_the_operators_model_windows_and_refuses_one_that_is_not_a_window() -> None:
    code, stdout, _ = shell(
        PRINT_SETTING.format("ORACLE_MODEL_WINDOWS"),
        ORACLE_MODEL_WINDOWS="openai/smollm2=4096,hosted_vllm/qwen=32768",
    )
    assert (code, stdout) == (0, "{'openai/smollm2': 4096, 'hosted_vllm/qwen': 32768}")

    code, _, stderr = shell("pass", ORACLE_MODEL_WINDOWS="openai/smollm2=4k")

    assert code == 2
    assert "ORACLE_MODEL_WINDOWS: the window of 'openai/smollm2' must be a number" in stderr
    assert "Traceback" not in stderr


def test_extra_tools_are_checked_when_the_product_starts() -> None:
    def check(tools: str) -> tuple[int, str]:
        result = processes.manage("check", env=processes.base_env(ORACLE_TOOLS=tools))
        return result.returncode, result.stderr

    assert check("agents.testing.tools.wait") == (0, "")
    code, stderr = check("agents.testing.tools.nowhere")
    assert code == 1 and "'agents.testing.tools.nowhere' is not a usable tool" in stderr
    code, stderr = check("agents.builtin_tools.calculator")
    assert code == 1 and "a tool named 'calculator' exists already" in stderr
