"""Writes for accounts: sign-up under the site's sign-up rule, invites, and API tokens."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from accounts.models import ApiToken, Invite

OPEN, INVITE, CLOSED = "open", "invite", "closed"
SIGNUP_MODES = (OPEN, INVITE, CLOSED)


class SignUpRefused(Exception):
    """Sign-up is not open to this request; the message says why, for the page."""


def signup_mode() -> str:
    return str(settings.ORACLE_SIGNUP)


def invite_usable(code: str | None) -> Invite | None:
    """The open invite with this code, if there is one."""
    if not code:
        return None
    return Invite.objects.filter(code=code, used_at__isnull=True).first()


def signup_refusal(code: str | None) -> str | None:
    """Why a visitor with this invite code (or none) may not sign up; None: they may."""
    return _refusal(code, invite_usable(code))


def _refusal(code: str | None, invite: Invite | None) -> str | None:
    """`open` lets anyone in; `invite` needs an open invite; `closed` only a staff
    invite (the site's first administrator, or staff adding staff)."""
    if code and invite is None:
        return "This invitation has been used already, or it is not one of ours."
    if invite is not None and (invite.staff or signup_mode() != CLOSED):
        return None
    if signup_mode() == OPEN:
        return None
    if signup_mode() == INVITE:
        return "Sign-up on this site is by invitation: ask its administrator for a link."
    return "Sign-up on this site is closed: its administrator creates the accounts."


@transaction.atomic
def user_sign_up(*, username: str, password: str, invite_code: str | None = None) -> User:
    """Create an account, using the invite (once) if one is given; a staff invite makes
    it staff and superuser. Raises `SignUpRefused` when the site's rule says no."""
    invite = None
    if invite_code:  # locked: two sign-ups with one invite cannot both use it
        invite = (
            Invite.objects.select_for_update()
            .filter(code=invite_code, used_at__isnull=True)
            .first()
        )
    refusal = _refusal(invite_code, invite)
    if refusal is not None:
        raise SignUpRefused(refusal)
    user = get_user_model().objects.create_user(username=username, password=password)
    if invite is not None:
        if invite.staff:
            user.is_staff = user.is_superuser = True
            user.save(update_fields=["is_staff", "is_superuser"])
        invite.used_at, invite.used_by = timezone.now(), user
        invite.save(update_fields=["used_at", "used_by"])
    return user


def setup_invite() -> Invite | None:
    """While the site has no staff account, an open staff invite (made once, kept until
    used) for its administrator; None once there is one."""
    if get_user_model().objects.filter(is_staff=True).exists():
        return None
    invite = Invite.objects.filter(staff=True, used_at__isnull=True).order_by("created_at").first()
    return invite or Invite.objects.create(staff=True, note="The site's first administrator")


def api_token_create(*, user: User, name: str = "") -> tuple[ApiToken, str]:
    """Create a token; returns it with the raw secret, which is never stored nor shown again."""
    raw = ApiToken.generate()
    token = ApiToken.objects.create(
        user=user,
        name=name[:100],
        key_hash=ApiToken.hash(raw),
        hint=raw[: len(ApiToken.PREFIX) + 4],
    )
    return token, raw


def api_token_revoke(*, token: ApiToken) -> None:
    token.delete()
