from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_save


class SettingsUiConfig(AppConfig):
    name = "settings_ui"
    verbose_name = "Settings"

    def ready(self) -> None:
        # Every new account gets its settings row as it is made (sign-up, the admin,
        # createsuperuser), so that reading them never writes.
        post_save.connect(
            _account_saved, sender=settings.AUTH_USER_MODEL, dispatch_uid="oracle-user-settings"
        )


def _account_saved(instance: Any, created: bool, raw: bool = False, **_: Any) -> None:
    from settings_ui.services import agent_settings_create

    if created and not raw:  # not while loading fixtures
        agent_settings_create(user=instance)
