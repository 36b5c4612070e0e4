"""The stuck pattern as a field of the System notices written before notices carried it.

A run stopped for no progress now says which steps it repeated in its notice's
`pattern` (the `system.notice` event and the System message's metadata), and the
dashboard reads that field. The notices written before have it only in their words,
read here once, with the words of the time: "Stopped making progress: <pattern>
(limit 3). Press Continue to give the Oracle another round."
"""

import re

from django.db import migrations

START = "Stopped making progress: "
REST = re.compile(
    r"(?P<pattern>.*) \(limit [\d,]+\)\. Press Continue to give the Oracle another round\.\Z",
    re.DOTALL,
)
NO_PROGRESS = "no_progress"
BATCH = 1_000


def _pattern(text):
    rest = text.removeprefix(START)
    found = REST.match(rest)
    return found["pattern"] if found else rest


def fill_patterns(apps, schema_editor):
    Message = apps.get_model("chat", "Message")
    RunEvent = apps.get_model("chat", "RunEvent")
    notices = Message.objects.filter(
        role="system", run__reason=NO_PROGRESS, content__startswith=START
    ).only("metadata", "content")
    _fill(Message, notices, "metadata", lambda row: row.content)
    events = RunEvent.objects.filter(
        type="system.notice", run__reason=NO_PROGRESS, data__reason=NO_PROGRESS
    ).only("data")
    _fill(RunEvent, events, "data", lambda row: str(row.data.get("text") or ""))


def _fill(model, rows, column, text_of):
    changed = []
    for row in rows.iterator(chunk_size=BATCH):
        data, text = getattr(row, column) or {}, text_of(row)
        if data.get("pattern") or not text.startswith(START):
            continue
        setattr(row, column, {**data, "pattern": _pattern(text)})
        changed.append(row)
        if len(changed) >= BATCH:
            model.objects.bulk_update(changed, [column])
            changed.clear()
    model.objects.bulk_update(changed, [column])


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0001_day_tally"),
        ("chat", "0009_conversation_allowed_tools"),
    ]

    operations = [migrations.RunPython(fill_patterns, migrations.RunPython.noop)]
