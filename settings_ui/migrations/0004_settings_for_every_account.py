"""Every account made before accounts came with their settings row gets it now, from the
site's defaults at this moment (what its first read would have stored)."""

from django.db import migrations

SITE_DEFAULT_FIELDS = ("max_iterations", "token_budget")  # as settings_ui.models has them


def store_settings(apps, schema_editor):
    User = apps.get_model("auth", "User")
    AgentSettings = apps.get_model("settings_ui", "AgentSettings")
    SiteDefaults = apps.get_model("settings_ui", "SiteDefaults")
    site = SiteDefaults.objects.filter(pk=1).first()
    defaults = {name: getattr(site, name) for name in SITE_DEFAULT_FIELDS} if site else {}
    missing = User.objects.exclude(pk__in=AgentSettings.objects.values("user_id"))
    AgentSettings.objects.bulk_create(
        AgentSettings(user_id=pk, **defaults) for pk in missing.values_list("pk", flat=True)
    )


class Migration(migrations.Migration):
    dependencies = [
        ("settings_ui", "0003_site_defaults"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(store_settings, migrations.RunPython.noop)]
