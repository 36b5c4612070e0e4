"""Each worker records its own state of each MCP server: the rows are keyed by worker
and server. The old rows (one a server, whichever worker wrote last) are dropped: the
workers write them again as their servers start."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("toolbox", "0001_initial")]

    operations = [
        migrations.DeleteModel(name="McpServerStatus"),
        migrations.CreateModel(
            name="McpServerStatus",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("worker", models.CharField(blank=True, default="", max_length=200)),
                ("name", models.CharField(max_length=32)),
                ("transport", models.CharField(max_length=8)),
                ("state", models.CharField(max_length=16)),
                ("error", models.TextField(blank=True)),
                ("problems", models.JSONField(blank=True, default=list)),
                ("tools", models.JSONField(blank=True, default=list)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "ordering": ["name", "worker"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("worker", "name"), name="one_status_a_worker_a_server"
                    )
                ],
            },
        ),
    ]
