from __future__ import annotations

from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "ops"
    verbose_name = "Operations"

    def ready(self) -> None:
        from ops import heartbeat, periodic
        from ops.alerts import alerts_evaluate_if_due

        heartbeat.connect_worker_signals()
        # The last full hour against the alert thresholds, once a minute.
        periodic.register("evaluate the alerts", alerts_evaluate_if_due)
