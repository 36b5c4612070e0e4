from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0004_conversation_deleted_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="conversation",
            name="model",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddField(
            model_name="message",
            name="superseded",
            field=models.BooleanField(default=False),
        ),
        migrations.AlterField(
            model_name="run",
            name="reason",
            field=models.CharField(
                blank=True,
                choices=[
                    ("completed", "Completed"),
                    ("cancelled", "Stopped by you"),
                    ("max_iterations", "Iteration limit"),
                    ("token_budget", "Token budget"),
                    ("timeout", "Time limit"),
                    ("cost_budget", "Cost limit"),
                    ("no_progress", "No progress"),
                    ("tool_errors", "Tool errors"),
                    ("tool_budget", "Tool-call budget"),
                    ("tool_budget_violation", "Tool-call budget"),
                    ("turn_budget_exhausted", "Extensions used up"),
                    ("provider_error", "Model error"),
                    ("interrupted", "Interrupted"),
                ],
                max_length=32,
            ),
        ),
    ]
