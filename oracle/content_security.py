"""The Content-Security-Policy of every page, which django-csp's middleware sends.

Scripts, styles and fonts come from Oracle only, none inline and no eval (htmx's own
inline style and eval are switched off in base.html); images from Oracle and `data:`
(a tool's pictures); connections go to Oracle only ('self' takes in its WebSocket, ws:
or wss: on the same host, in today's browsers). Words of a tool or a model that got past
the sanitiser could then run nothing and load nothing from elsewhere, and no other site
may frame a page or be the target of its forms. The 500 page's own <style> is allowed by
its hash (ops/errors.py).
"""

from __future__ import annotations

from typing import Any

from csp.constants import NONE, SELF

POLICY: dict[str, Any] = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}
