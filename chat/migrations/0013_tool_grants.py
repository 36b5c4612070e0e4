"""Grants ("Always allow here") bound to the server and the tool, not the model's name.

The grants kept until now named the tool as the model saw it, a name derived again each
run, so a collision of two servers' names could move a grant to another tool: they are
dropped, not carried over, and each tool asks once more.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0012_context_event_indexes"),
    ]

    operations = [
        migrations.RemoveField(model_name="conversation", name="allowed_tools"),
        migrations.AddField(
            model_name="conversation",
            name="tool_grants",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
