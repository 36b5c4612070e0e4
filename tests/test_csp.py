"""Every page carries a Content-Security-Policy: scripts, styles and fonts from Oracle
only (no inline code, no eval), images from Oracle and `data:`, connections to Oracle,
no plugins, no framing, forms posted to Oracle. What a tool or a model writes into a
page can then run nothing and load nothing from elsewhere, even past the sanitiser."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpResponse
from django.test import Client, RequestFactory

from chat.services import conversation_create
from knowledge.services import document_upload

pytestmark = pytest.mark.django_db

POLICY = {
    "default-src": {"'self'"},
    "script-src": {"'self'"},
    "style-src": {"'self'"},
    "img-src": {"'self'", "data:"},
    "connect-src": {"'self'"},
    "object-src": {"'none'"},
    "base-uri": {"'self'"},
    "frame-ancestors": {"'none'"},
    "form-action": {"'self'"},
}


def policy(response: HttpResponse) -> dict[str, set[str]]:
    header = response.headers.get("Content-Security-Policy")
    assert header, f"no Content-Security-Policy on {response.status_code} {response}"
    directives = (part.split() for part in header.split(";") if part.strip())
    return {name: set(sources) for name, *sources in directives}


@pytest.fixture
def staff(alice: User) -> User:
    alice.is_staff = True
    alice.save()
    return alice


def pages(user: User) -> list[str]:
    conversation = conversation_create(owner=user, title="Maths")
    document = document_upload(
        owner=user,
        file=SimpleUploadedFile("notes.md", b"# Notes\n\n$x^2$", content_type="text/markdown"),
    )
    return [
        "/",
        f"/c/{conversation.id}/",
        "/settings/",
        "/tools/",
        "/documents/",
        f"/documents/{document.id}/",
        "/dashboard/",
        "/no-such-page/",
    ]


def test_every_page_carries_the_policy(client: Client, staff: User) -> None:
    client.force_login(staff)
    for url in pages(staff):
        response = client.get(url)
        assert response.status_code in (200, 404), url
        assert policy(response) == POLICY, url


def test_the_pages_a_visitor_sees_logged_out_carry_it(client: Client) -> None:
    for url in ("/login/", "/signup/", "/no-such-page/"):
        assert policy(client.get(url)) == POLICY, url


def test_a_refused_form_and_the_api_carry_it(alice: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert policy(client.post("/settings/reset/")) == POLICY  # the 403 page
    assert policy(client.get("/api/conversations/")) == POLICY


def test_nothing_in_the_policy_allows_inline_code_or_eval(client: Client) -> None:
    header = client.get("/login/").headers["Content-Security-Policy"]
    for loophole in ("unsafe-inline", "unsafe-eval", "unsafe-hashes", "*", "http:", "https:"):
        assert loophole not in header.split(), loophole


def test_the_500_page_may_use_its_own_style_and_nothing_more() -> None:
    """It stands alone (its CSS inline, as anything may have failed): the policy names
    that one <style> by its hash."""
    from csp.middleware import CSPMiddleware

    from ops.errors import server_error

    request = RequestFactory().get("/anything/")
    response = CSPMiddleware(server_error)(request)

    page = response.content.decode()
    (style,) = re.findall(r"<style>(.*?)</style>", page, re.S)
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert policy(response) == {**POLICY, "style-src": {"'self'", f"'sha256-{digest}'"}}


# Inline code the policy would refuse: a <script> without src, an on*="" handler, a
# style="" attribute or a <style> element, an htmx handler (hx-on evaluates its code).
INLINE = re.compile(
    r"<script(?![^>]*\bsrc=)[^>]*>|\son[a-z]+\s*=\s*[\"']|\sstyle\s*=\s*[\"']|<style[\s>]|hx-on",
    re.I,
)


# The 500 page's <style>, and the code that finds it to allow it by its hash.
ALLOWED = {"templates/500.html", "ops/errors.py"}


def test_no_template_holds_inline_code() -> None:
    """Templates, and the HTML the apps write in Python: each would be refused in the
    browser (the 500 page's own <style> is allowed by its hash)."""
    root = Path(settings.BASE_DIR)
    sources = [*(root / "templates").rglob("*.html")]
    for app in ("chat", "knowledge", "toolbox", "settings_ui", "dashboard", "accounts", "ops"):
        sources += [p for p in (root / app).rglob("*.py") if "migrations" not in p.parts]
    found = [
        f"{path.relative_to(root)}: {match.group(0)!r}"
        for path in sources
        if str(path.relative_to(root)) not in ALLOWED
        for match in INLINE.finditer(path.read_text())
    ]
    assert not found
