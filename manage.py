#!/usr/bin/env python
"""Django's command-line utility for Oracle."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oracle.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        # Read the settings first: Django would otherwise hide a settings error
        # from some commands (shell, help) and go on unconfigured.
        settings.INSTALLED_APPS  # noqa: B018
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as error:
        # A configuration mistake deserves one clear line, not a traceback.
        print(f"Configuration error: {error}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
