"""How the dashboard writes its figures: "1,234", "$0.0123", "12.4 s", "7.5%"."""

from __future__ import annotations

from django import template

register = template.Library()
DASH = "\u2013"  # an en dash: no figure (no runs)


@register.filter
def count(value: int | None) -> str:
    return DASH if value is None else f"{value:,}"


@register.filter
def decimal(value: float | None) -> str:
    """A figure with one decimal ("2.5"), whole numbers without ("15")."""
    if value is None:
        return DASH
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


@register.filter
def money(value: float | None) -> str:
    """Dollars: cents from a dollar up, four digits below ("$0.0123")."""
    if value is None:
        return DASH
    return f"${value:,.2f}" if abs(value) >= 1 or value == 0 else f"${value:,.4f}"


@register.filter
def seconds(value: float | None) -> str:
    return DASH if value is None else f"{value:,.1f} s"


@register.filter
def percent(value: float | None) -> str:
    return DASH if value is None else f"{value * 100:.1f}%"
