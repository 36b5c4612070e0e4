"""ApiToken moves here from chat: its table (chat_apitoken) stays as it is, only Django's
record of which app owns the model changes (chat's 0010 forgets it there)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _content_type_to(app_label: str, other: str):
    """Keep the admin's history and any granted permissions on the moved model."""

    def move(apps, schema_editor):
        content_types = apps.get_model("contenttypes", "ContentType")
        content_types.objects.using(schema_editor.connection.alias).filter(
            app_label=other, model="apitoken"
        ).update(app_label=app_label)

    return move


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_invites"),
        ("chat", "0009_conversation_allowed_tools"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ApiToken",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("name", models.CharField(blank=True, max_length=100)),
                        ("key_hash", models.CharField(max_length=64, unique=True)),
                        ("hint", models.CharField(max_length=16)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("last_used_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="api_tokens",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "chat_apitoken",
                        "ordering": ["-created_at"],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(
            _content_type_to("accounts", "chat"), _content_type_to("chat", "accounts")
        ),
    ]
