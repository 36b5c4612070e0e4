"""`manage.py create_api_token USER [--name NAME]`: print a new bearer token for USER."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.services import api_token_create
from chat.models import UNSTORABLE


class Command(BaseCommand):
    help = "Create an API token for a user and print it (it is shown only once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="a label to recognise the token by")

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        username, name = options["username"], options["name"]
        if UNSTORABLE.search(name):
            raise CommandError(f"--name {name!r}: text cannot hold NUL or a byte not UTF-8.")
        # No username holds such a character (and the database refuses to look one up).
        storable = not UNSTORABLE.search(username)
        user = user_model.objects.filter(username=username).first() if storable else None
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        _, raw = api_token_create(user=user, name=name or "command line")
        self.stdout.write(raw)
