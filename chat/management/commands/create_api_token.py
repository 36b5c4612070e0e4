"""`manage.py create_api_token USER [--name NAME]`: print a new bearer token for USER."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from chat.services import api_token_create


class Command(BaseCommand):
    help = "Create an API token for a user and print it (it is shown only once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="a label to recognise the token by")

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        try:
            user = user_model.objects.get(username=options["username"])
        except user_model.DoesNotExist:
            raise CommandError(f"No user named {options['username']!r}.") from None
        _, raw = api_token_create(user=user, name=options["name"] or "command line")
        self.stdout.write(raw)
