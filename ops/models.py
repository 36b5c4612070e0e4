"""Operations' own rows: the alerts raised on the last hour, and the staff's spending caps."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.contrib.auth.models import User
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone


class AlertKind(models.TextChoices):
    SPEND = "spend", "Spend per hour"
    TERMINATIONS = "terminations", "Limit terminations per hour"
    NEAR_LIMIT = "near_limit", "Runs near their limits"


class AlertQuerySet(models.QuerySet["Alert"]):
    def open(self) -> AlertQuerySet:
        """The alerts no one has acknowledged yet, newest first."""
        return self.filter(acknowledged_at__isnull=True).order_by("-created_at", "-pk")


class Alert(models.Model):
    """A threshold an hour of runs passed (ops.alerts). One per kind and window: workers
    that evaluate the same hour at once insert one row, and only that one mails it."""

    kind = models.CharField(max_length=32, choices=AlertKind.choices)
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    title = models.CharField(max_length=200)
    detail = models.TextField(blank=True)
    value = models.FloatField()
    threshold = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    objects = AlertQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "window_start"], name="alert_once_per_kind_and_window"
            )
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def is_open(self) -> bool:
        return self.acknowledged_at is None

    def acknowledge(self, *, by: User | None) -> None:
        """Mark the alert seen by `by` (a staff user); the first acknowledgement stays."""
        if self.acknowledged_at is not None:
            return
        now = timezone.now()
        updated = Alert.objects.filter(pk=self.pk, acknowledged_at__isnull=True).update(
            acknowledged_at=now, acknowledged_by=by
        )
        if updated:
            self.acknowledged_at, self.acknowledged_by = now, by
        else:
            self.refresh_from_db(fields=["acknowledged_at", "acknowledged_by"])


_MONEY = {
    "max_digits": 9,
    "decimal_places": 2,
    "null": True,
    "blank": True,
    "validators": [MinValueValidator(Decimal("0"))],
}


class SpendCaps(models.Model):
    """The daily spending caps staff set in the admin (one row). A value set here wins
    over its environment variable (ORACLE_USER_DAILY_COST_USD, ORACLE_SITE_DAILY_COST_USD);
    empty here and there means no cap."""

    SINGLETON_ID = 1

    id = models.PositiveSmallIntegerField(primary_key=True, default=SINGLETON_ID, editable=False)
    user_daily_cost_usd = models.DecimalField(
        "daily cap per user (USD)",
        help_text="What one user's runs may cost in a UTC day. Empty: the "
        "ORACLE_USER_DAILY_COST_USD setting (unset: no cap).",
        **_MONEY,  # type: ignore[arg-type]
    )
    site_daily_cost_usd = models.DecimalField(
        "daily cap for the site (USD)",
        help_text="What all runs together may cost in a UTC day. Empty: the "
        "ORACLE_SITE_DAILY_COST_USD setting (unset: no cap).",
        **_MONEY,  # type: ignore[arg-type]
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = verbose_name_plural = "spending caps"
        constraints = [
            models.CheckConstraint(condition=models.Q(id=1), name="spend_caps_singleton")
        ]

    def __str__(self) -> str:
        return "Spending caps"

    @classmethod
    def load(cls) -> SpendCaps:
        """The one row, made (empty) the first time."""
        caps, _ = cls.objects.get_or_create(pk=cls.SINGLETON_ID)
        return caps

    @classmethod
    def current(cls) -> SpendCaps:
        """The caps in force, read without a write (a refused request changes nothing):
        the row, or an empty one until staff first save it."""
        return cls.objects.filter(pk=cls.SINGLETON_ID).first() or cls()

    def user_cap(self) -> float | None:
        """The daily cap per user in force: this row's, else the environment's."""
        return _cap(self.user_daily_cost_usd, settings.ORACLE_USER_DAILY_COST_USD)

    def site_cap(self) -> float | None:
        """The site's daily cap in force: this row's, else the environment's."""
        return _cap(self.site_daily_cost_usd, settings.ORACLE_SITE_DAILY_COST_USD)


def _cap(staff: Decimal | None, environment: float | None) -> float | None:
    if staff is not None:
        return float(staff)
    return None if environment is None else float(environment)
