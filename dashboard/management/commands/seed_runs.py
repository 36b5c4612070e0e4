"""`manage.py seed_runs N`: N made-up finished runs, then the dashboard's page time on them."""

from __future__ import annotations

import time
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection
from django.test import RequestFactory

from dashboard.periods import PERIODS
from dashboard.seeding import seed_runs
from dashboard.views import dashboard

TRIES = 5
MAX_DAYS = 36_500  # a century; some 740,000 days back is before the year 1 (an error)


class Command(BaseCommand):
    help = (
        "Add N finished runs spread over users, skills, reasons, limit actions and the last "
        "days (for measuring the staff dashboard), then time the dashboard on them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("count", type=int, help="how many runs to add (0: only measure)")
        parser.add_argument("--days", type=int, default=30, help="spread over this many days")
        parser.add_argument("--seed", type=int, default=1, help="random seed")
        parser.add_argument(
            "--no-measure", action="store_true", help="do not time the dashboard afterwards"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["count"] < 0 or not 1 <= options["days"] <= MAX_DAYS:
            self.stderr.write(f"N must be 0 or more and --days from 1 to {MAX_DAYS}.")
            raise SystemExit(2)
        if options["count"]:
            began = time.perf_counter()
            seeded = seed_runs(options["count"], days=options["days"], seed=options["seed"])
            self.stdout.write(
                f"Added {seeded.runs:,} runs in {seeded.conversations:,} conversations of "
                f"{seeded.users:,} users ({seeded.messages:,} messages, {seeded.events:,} "
                f"events) in {time.perf_counter() - began:.1f} s."
            )
        if not options["no_measure"]:
            self.measure()

    def measure(self) -> None:
        """The dashboard's page time for each period (the best of a few warm tries)."""
        with connection.cursor() as cursor:  # fresh statistics for the planner
            cursor.execute("ANALYZE")
        staff = User(username="seed-measure", is_staff=True, is_active=True)
        factory = RequestFactory()
        self.stdout.write(f"Dashboard page time ({connection.vendor}), best of {TRIES} warm:")
        for period in PERIODS:
            times = []
            for _ in range(TRIES + 1):  # the first one warms the caches
                request = factory.get("/dashboard/", {"period": period.key})
                request.user = staff
                began = time.perf_counter()
                response = dashboard(request)  # type: ignore[arg-type]  # staff, as the view needs
                times.append((time.perf_counter() - began) * 1000)
                assert response.status_code == 200, response.status_code
            self.stdout.write(f"  {period.label:>8}: {min(times[1:]):6.0f} ms")
