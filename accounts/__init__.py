"""Accounts: sign-up, log-in, log-out (Django auth)."""
