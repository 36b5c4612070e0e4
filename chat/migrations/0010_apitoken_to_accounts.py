"""ApiToken now belongs to accounts (its 0002): chat forgets the model, and the table
(chat_apitoken, which accounts keeps using) is left as it is."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0009_conversation_allowed_tools"),
        ("accounts", "0002_apitoken"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ApiToken")],
            database_operations=[],
        ),
    ]
