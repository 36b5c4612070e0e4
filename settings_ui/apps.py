from django.apps import AppConfig


class SettingsUiConfig(AppConfig):
    name = "settings_ui"
    verbose_name = "Settings"
