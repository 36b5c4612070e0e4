from __future__ import annotations

from django.db import models


class DayTally(models.Model):
    """What the runs started on one UTC day add up to on the dashboard (a `Tally` as
    JSON), kept so a period reads one row a day instead of every run. Counted again when
    one of the day's runs finishes or is queued again after `counted_at`."""

    day = models.DateField(primary_key=True)
    counted_at = models.DateTimeField()
    data = models.JSONField()

    class Meta:
        ordering = ["day"]

    def __str__(self) -> str:
        return f"Tally of {self.day}"
