"""A corpus of cross-site scripting payloads (OWASP cheat-sheet style) for the hostile-input
browser test, each of which reports itself if it ever runs in the page.

A template names what a payload does when it runs with markers, filled in per payload:
`@JS@` pushes its id onto the test's sink (`top.__xss.push('x001')`), `@QJS@` does the
same without quotes (for unquoted attributes), `@PM@` posts it to the top window (from
frames of another origin), `@URL@` is a path the test watches for (`/xss-x001`: any
request to it means markup the page should not have made was live), and `@B64@`,
`@ENTJS@`, `@HEXJS@`, `@PCTJS@` are `@PM@`/`@JS@` base64-, entity- and
percent-encoded. `@ID@` is the id itself. A "maths" payload is TeX between dollars, which
the page typesets with KaTeX: it would run (a link to click, a request) were KaTeX
trusted with links, URLs and HTML.
"""

# ruff: noqa: E501 (a payload is kept whole on its line)

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

# fmt: off
TEMPLATES: tuple[tuple[str, str], ...] = (
    # --- script elements, and the contexts they are meant to break out of ---------------
    ("script", "<script>@JS@</script>"),
    ("script", "<SCRIPT>@JS@</SCRIPT>"),
    ("script", "<ScRiPt >@JS@</sCrIpT >"),
    ("script", "<script type=module>@JS@</script>"),
    ("script", '<script src="data:text/javascript,@JS@"></script>'),
    ("script", "<scr<script>ipt>@JS@</scr</script>ipt>"),
    ("script", "<<script>@JS@//<</script>"),
    ("script", "<script\n>@JS@</script\n>"),
    ("script", "<script>@JS@</script"),
    ("script", "\\x3cscript\\x3e@JS@\\x3c/script\\x3e"),
    ("script", "\\u003cscript\\u003e@JS@\\u003c/script\\u003e"),
    ("script", "%3Cscript%3E@JS@%3C%2Fscript%3E"),
    ("script", "&lt;script&gt;@JS@&lt;/script&gt;"),
    ("script", "&#60;script&#62;@JS@&#60;/script&#62;"),
    ("script", "\uff1cscript\uff1e@JS@\uff1c/script\uff1e"),
    ("script", "+ADw-script+AD4-@JS@+ADw-/script+AD4-"),
    ("breaker", '"><script>@JS@</script>'),
    ("breaker", "'><script>@JS@</script>"),
    ("breaker", "</textarea><script>@JS@</script>"),
    ("breaker", "</title><script>@JS@</script>"),
    ("breaker", "</script><script>@JS@</script>"),
    ("breaker", "</style><script>@JS@</script>"),
    ("breaker", "</noscript><script>@JS@</script>"),
    ("breaker", "</xmp><script>@JS@</script>"),
    ("breaker", "</iframe><script>@JS@</script>"),
    ("breaker", "</template><script>@JS@</script>"),
    ("breaker", "</option></select><img src=x onerror=@QJS@>"),
    ("breaker", "--><script>@JS@</script><!--"),
    ("breaker", "<!-- --!><img src=x onerror=@QJS@> -->"),
    ("breaker", "]]><script>@JS@</script>"),
    ("breaker", "</pre></code></div></details><img src=x onerror=@QJS@>"),
    ("breaker", '" autofocus onfocus="@JS@" x="'),
    ("breaker", "' autofocus onfocus='@QJS@' x='"),
    ("breaker", '" onmouseover="@JS@" x="'),
    ("breaker", "` onmouseover=@QJS@ x=`"),
    ("breaker", '"><img src=x onerror=@QJS@>'),
    ("breaker", "'><img src=x onerror=@QJS@>"),
    ("breaker", "';@JS@;//"),
    ("breaker", '";@JS@;//'),
    ("breaker", "\\';@JS@;//"),
    ("breaker", "'-@JS@-'"),
    ("breaker", "${@JS@}"),
    ("breaker", "</script><svg onload=@QJS@>"),
    # --- server- and client-side template syntax ------------------------------------------
    ("template", "{{ 7|add:7 }}<img src=x onerror=@QJS@>{{ request.user }}"),
    ("template", "{% autoescape off %}<img src=x onerror=@QJS@>{% endautoescape %}"),
    ("template", "{% if 1 %}<script>@JS@</script>{% endif %}{% debug %}"),
    ("template", "{{constructor.constructor('@QJS@')()}}"),
    ("template", "{{_c.constructor('@QJS@')()}}"),
    ("template", "{% raw %}<script>@JS@</script>{% endraw %}"),
    ("template", "<%= @JS@ %>"),
    ("template", "#{@JS@}"),
    # --- event handlers on many elements -------------------------------------------------
    ("handler", "<img src=x onerror=@QJS@>"),
    ("handler", '<img src="x" onerror="@JS@">'),
    ("handler", "<IMG SRC=x OnErRoR=@QJS@>"),
    ("handler", '<img/src="x"/onerror=@QJS@>'),
    ("handler", "<img src=x onerror=@ENTJS@>"),
    ("handler", '<img src=x onerror="@HEXJS@">'),
    ("handler", "<img src=x\nonerror=@QJS@>"),
    ("handler", "<img src=x\tonerror\t=\t@QJS@>"),
    ("handler", '<img """><script>@JS@</script>">'),
    ("handler", "<img src=x onerror=@QJS@//"),
    ("handler", "<image src=x onerror=@QJS@>"),
    ("handler", "<svg onload=@QJS@>"),
    ("handler", "<svg/onload=@QJS@//"),
    ("handler", "<svg><animate onbegin=@QJS@ attributeName=x dur=1s>"),
    ("handler", "<svg><image href=x onerror=@QJS@ /></svg>"),
    ("handler", "<svg><foreignObject><img src=x onerror=@QJS@></foreignObject></svg>"),
    ("handler", "<body onload=@QJS@>"),
    ("handler", "<body onpageshow=@QJS@>"),
    ("handler", "<details open ontoggle=@QJS@>"),
    ("handler", "<details ontoggle=@QJS@><summary>open me</summary>x</details>"),
    ("handler", "<video><source onerror=@QJS@></video>"),
    ("handler", "<video src=x onerror=@QJS@></video>"),
    ("handler", "<audio src=x onerror=@QJS@></audio>"),
    ("handler", "<iframe onload=@QJS@></iframe>"),
    ("handler", '<iframe srcdoc="<script>@JS@</script>"></iframe>'),
    ("handler", '<iframe srcdoc="&lt;img src=x onerror=@QJS@&gt;"></iframe>'),
    ("handler", "<input autofocus onfocus=@QJS@>"),
    ("handler", "<select autofocus onfocus=@QJS@></select>"),
    ("handler", "<textarea autofocus onfocus=@QJS@></textarea>"),
    ("handler", "<keygen autofocus onfocus=@QJS@>"),
    ("handler", "<x contenteditable autofocus onfocus=@QJS@>x</x>"),
    ("handler", "<xss tabindex=1 onfocusin=@QJS@>x</xss>"),
    ("handler", "<marquee onstart=@QJS@>x</marquee>"),
    ("handler", "<div onmouseover=@QJS@>hover me</div>"),
    ("handler", "<a onmouseover=@QJS@>hover me</a>"),
    ("handler", "<span onpointerover=@QJS@>hover me</span>"),
    ("handler", "<style onload=@QJS@></style>"),
    ("handler", "<link rel=stylesheet href=x onerror=@QJS@>"),
    ("handler", "<object data=x onerror=@QJS@></object>"),
    ("handler", "<style>@keyframes xss{}</style><div style=animation-name:xss onanimationstart=@QJS@></div>"),
    ("handler", "<isindex type=image src=x onerror=@QJS@>"),
    ("handler", "<table background=x onerror=@QJS@><tr><td>x</td></tr></table>"),
    ("handler", "<form><button formaction=javascript:@QJS@>send</button></form>"),
    # --- URLs: javascript:, data:, vbscript:, in HTML -----------------------------------
    ("url", '<a href="javascript:@JS@">click</a>'),
    ("url", '<a href="JaVaScRiPt:@JS@">click</a>'),
    ("url", '<a href=" &#14; javascript:@JS@">click</a>'),
    ("url", '<a href="&#106;avascript:@JS@">click</a>'),
    ("url", '<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058@JS@">click</a>'),
    ("url", '<a href="jav&#x09;ascript:@JS@">click</a>'),
    ("url", '<a href="java&NewLine;script&colon;@JS@">click</a>'),
    ("url", '<a href="javascript:@PCTJS@">click</a>'),
    ("url", '<a href="javascript://%0a@JS@">click</a>'),
    ("url", '<a href="data:text/html;base64,@B64@">click</a>'),
    ("url", '<a href="vbscript:msgbox(&quot;@ID@&quot;)">click</a>'),
    ("url", '<iframe src="javascript:@JS@"></iframe>'),
    ("url", '<iframe src="data:text/html;base64,@B64@"></iframe>'),
    ("url", '<object data="data:text/html;base64,@B64@"></object>'),
    ("url", '<embed src="data:text/html;base64,@B64@">'),
    ("url", '<object data="javascript:@JS@"></object>'),
    ("url", '<form action="javascript:@JS@"><input type=submit></form>'),
    ("url", '<math><maction actiontype=statusline xlink:href="javascript:@JS@">click</maction></math>'),
    ("url", '<math href="javascript:@JS@">click</math>'),
    ("url", '<svg><a href="javascript:@JS@"><text y=20>click</text></a></svg>'),
    ("url", '<svg><a xlink:href="javascript:@JS@"><text y=20>click</text></a></svg>'),
    ("url", '<svg><script href="data:text/javascript,@JS@"></script></svg>'),
    # --- markup that loads something: any request to @URL@ means it was live -------------
    ("load", '<img src="@URL@">'),
    ("load", '<meta http-equiv="refresh" content="0;url=@URL@">'),
    ("load", '<meta http-equiv="refresh" content="0;url=javascript:@JS@">'),
    ("load", '<base href="@URL@/"><img src=x>'),
    ("load", '<link rel=stylesheet href="@URL@">'),
    ("load", '<link rel=prefetch href="@URL@">'),
    ("load", '<iframe src="@URL@"></iframe>'),
    ("load", '<video poster="@URL@"></video>'),
    ("load", '<input type=image src="@URL@">'),
    ("load", '<div style="background:url(@URL@)">styled</div>'),
    ("load", '<div style="width:expression(@JS@);behavior:url(@URL@)">styled</div>'),
    ("load", '<style>@import "@URL@";</style>'),
    ("load", "<style>*{background:url('@URL@')}</style>"),
    ("load", '<svg><use href="@URL@#x"></use></svg>'),
    ("load", '<script src="@URL@"></script>'),
    # --- htmx attributes: a request to @URL@ or a push means htmx took them up -------------
    ("htmx", '<div hx-get="@URL@" hx-trigger="load">htmx</div>'),
    ("htmx", '<div data-hx-get="@URL@" data-hx-trigger="load">htmx</div>'),
    ("htmx", '<form hx-post="@URL@" hx-trigger="load"></form>'),
    ("htmx", '<div hx-on::load="@JS@">htmx</div>'),
    ("htmx", '<div hx-on:htmx:load="@JS@">htmx</div>'),
    ("htmx", '<div hx-on--load="@JS@">htmx</div>'),
    ("htmx", '<div hx-on::after-process-node="@JS@">htmx</div>'),
    ("htmx", '<div hx-on:mouseover="@JS@">hover me</div>'),
    ("htmx", '<img src=x hx-on:error="@JS@">'),
    ("htmx", '<div hx-get="@URL@" hx-trigger="load" hx-vals=\'js:{a:@QJS@}\'>htmx</div>'),
    ("htmx", '<div hx-get="@URL@" hx-trigger="load" hx-headers=\'js:{a:@QJS@}\'>htmx</div>'),
    ("htmx", '<div hx-get="@URL@" hx-trigger="load[@JS@]">htmx</div>'),
    ("htmx", '<div hx-get="@URL@" hx-trigger="mouseover">hover me</div>'),
    ("htmx", '<div hx-get="@URL@" hx-trigger="revealed">htmx</div>'),
    ("htmx", '<a hx-boost="true" href="@URL@">htmx</a>'),
    ("htmx", '<div hx-swap-oob="beforeend:body"><img src=x onerror=@QJS@></div>'),
    ("htmx", '<div hx-ext="ws" ws-connect="@URL@">htmx</div>'),
    # --- Markdown: links, images, autolinks, references, blocks, code ----------------------
    ("markdown", "[click](javascript:@JS@)"),
    ("markdown", "[click](JaVaScRiPt:@JS@)"),
    ("markdown", "[click](&#106;avascript:@JS@)"),
    ("markdown", "[click](javascript&#58;@JS@)"),
    ("markdown", "[click](<javascript:@JS@>)"),
    ("markdown", "[click](jav\tascript:@JS@)"),
    ("markdown", "[click](<jav\tascript:@JS@>)"),
    ("markdown", "[click](javascript:@PCTJS@)"),
    ("markdown", "[click](data:text/html;base64,@B64@)"),
    ("markdown", "[click](vbscript:msgbox)"),
    ("markdown", "[click](javascript:@JS@ \"title\")"),
    ("markdown", "[click](https://example.com \"a\\\" onmouseover=\\\"@JS@\")"),
    ("markdown", "[click](https://example.com/\"onmouseover=\"@JS@\")"),
    ("markdown", "[<img src=x onerror=@QJS@>](https://example.com)"),
    ("markdown", "![x](javascript:@JS@)"),
    ("markdown", "![x](x\"onerror=\"@JS@)"),
    ("markdown", "![x](@URL@)"),
    ("markdown", "![x](data:image/svg+xml;base64,@B64@)"),
    ("markdown", "<javascript:@JS@>"),
    ("markdown", "<JAVASCRIPT:@JS@>"),
    ("markdown", "<https://example.com/\"onmouseover=\"@JS@\">"),
    ("markdown", "[click][ref-@ID@]\n\n[ref-@ID@]: javascript:@JS@"),
    ("markdown", "[click][]\n\n[click]: <javascript:@JS@> 'x'"),
    ("markdown", "`<script>@JS@</script>`"),
    ("markdown", "```html\n<script>@JS@</script>\n```"),
    ("markdown", "```\"><img src=x onerror=@QJS@>\n<img src=x onerror=@QJS@>\n```"),
    ("markdown", "~~~ js onload=@QJS@\n</code></pre><img src=x onerror=@QJS@>\n~~~"),
    ("markdown", "    <img src=x onerror=@QJS@>"),
    ("markdown", "<div>\n\n*md* <img src=x onerror=@QJS@>\n\n</div>"),
    ("markdown", "| a | b |\n|---|---|\n| <img src=x onerror=@QJS@> | [click](javascript:@JS@) |"),
    ("markdown", "> <svg onload=@QJS@>\n> [click](javascript:@JS@)"),
    ("markdown", "* <details open ontoggle=@QJS@>\n* [click](javascript:@JS@)"),
    ("markdown", "# <img src=x onerror=@QJS@>"),
    ("markdown", "***<img src=x onerror=@QJS@>***"),
    ("markdown", "\\<script>@JS@\\</script>"),
    ("markdown", "https://example.com/<img src=x onerror=@QJS@>"),
    # --- namespace confusion (SVG, MathML) and mutation XSS ---------------------------------
    ("namespace", "<svg><style><img src=x onerror=@QJS@></style></svg>"),
    ("namespace", "<svg><script>@JS@</script></svg>"),
    ("namespace", "<svg><desc><img src=x onerror=@QJS@></desc></svg>"),
    ("namespace", "<svg></p><style><a id=\"</style><img src=x onerror=@QJS@>\">"),
    ("namespace", "<math><mtext><table><mglyph><style><img src=x onerror=@QJS@>"),
    ("namespace", "<form><math><mtext></form><form><mglyph><style></math><img src=x onerror=@QJS@>"),
    ("namespace", "<math><annotation-xml encoding=\"text/html\"><img src=x onerror=@QJS@></annotation-xml></math>"),
    ("namespace", "<noscript><p title=\"</noscript><img src=x onerror=@QJS@>\">"),
    ("namespace", "<svg><p><style><img src=x onerror=@QJS@>"),
    ("namespace", "<xmp></xmp><img src=x onerror=@QJS@>"),
    ("namespace", "<a id=htmx name=htmx></a><form id=__xss name=__xss></form>"),
    # --- polyglots --------------------------------------------------------------------------
    ("polyglot", "javascript:/*--></title></style></textarea></script></xmp><svg/onload='+/\"/+/onmouseover=1/+/[*/[]/+@JS@//'>"),
    ("polyglot", "jaVasCript:/*-/*`/*\\`/*'/*\"/**/(/* */oNcliCk=@QJS@ )//%0D%0A%0d%0a//</stYle/</titLe/</teXtarEa/</scRipt/--!>\\x3csVg/<sVg/oNloAd=@QJS@//>\\x3e"),
    ("polyglot", "'\"--></style></script><script>@JS@</script>"),
    ("polyglot", "\"'><img src=x onerror=@QJS@ \u2028\u2029>"),
    # --- maths: TeX that KaTeX typesets in the page, never trusted with links, HTML or URLs --
    ("maths", "$\\href{javascript:@JS@}{click}$"),
    ("maths", "$$\n\\href{javascript:@JS@}{click}\n$$"),
    ("maths", "So $$\\url{javascript:@JS@}$$ inline"),
    ("maths", "$\\includegraphics[height=1em]{@URL@}$"),
    ("maths", "$\\htmlStyle{background:url(@URL@)}{styled}\\htmlData{hx-get=@URL@, hx-trigger=load}{htmx}$"),
    ("maths", "$\\def\\x{\\href{javascript:@JS@}{click}}\\x$"),
    ("maths", "$<img src=x onerror=@QJS@>$ and $\\text{<img src=x onerror=@QJS@>}$"),
    ("maths", "$x$<img src=x onerror=@QJS@>$y$"),
    ("maths", "$$\n</div><img src=x onerror=@QJS@>\n$$"),
    ("maths", "`$`<img src=x onerror=@QJS@>`$` $\\href{javascript:@JS@}{click}$"),
)
# fmt: on


@dataclass(frozen=True)
class Payload:
    """One payload of the corpus: `text` reports `id` to the test's sink if it runs."""

    id: str
    kind: str
    text: str

    def one_line(self) -> str:
        """The payload with its whitespace collapsed, as titles and names keep it."""
        return " ".join(self.text.split())


def _entities(text: str, pattern: str) -> str:
    return "".join(pattern % ord(character) for character in text)


def _fill(template: str, payload_id: str) -> str:
    js = f"top.__xss.push('{payload_id}')"
    post = f"top.postMessage('xss:{payload_id}','*')"
    b64 = base64.b64encode(f"<script>{post}</script>".encode()).decode()
    return (
        template.replace("@JS@", js)
        .replace("@QJS@", f"top.__xss.push(/{payload_id}/.source)")
        .replace("@PM@", post)
        .replace("@URL@", f"/xss-{payload_id}")
        .replace("@B64@", b64)
        .replace("@ENTJS@", _entities(js, "&#%d;"))
        .replace("@HEXJS@", _entities(js, "&#x%x;"))
        .replace("@PCTJS@", quote(js, safe=""))
        .replace("@ID@", payload_id)
    )


PAYLOADS: tuple[Payload, ...] = tuple(
    Payload(f"x{number:03d}", kind, _fill(template, f"x{number:03d}"))
    for number, (kind, template) in enumerate(TEMPLATES, start=1)
)
BY_ID = {payload.id: payload for payload in PAYLOADS}


def payload_with(fragment: str) -> Payload:
    """The first payload whose text holds `fragment`."""
    return next(payload for payload in PAYLOADS if fragment in payload.text)


def joined(payloads: Iterable[Payload], separator: str = "\n\n") -> str:
    """The payloads as one text, each its own Markdown block."""
    return separator.join(payload.text for payload in payloads)


def one_line(payloads: Iterable[Payload]) -> str:
    """The payloads, whitespace collapsed, joined by spaces (as a title keeps them)."""
    return " ".join(payload.one_line() for payload in payloads)


def packed(payloads: Iterable[Payload], limit: int) -> list[list[Payload]]:
    """The payloads in groups whose `one_line` fits in `limit` characters, each put in
    the first group with room; a payload longer than `limit` is left out."""
    groups: list[list[Payload]] = []
    sizes: list[int] = []
    for payload in payloads:
        length = len(payload.one_line())
        if length > limit:
            continue
        room = next((n for n, size in enumerate(sizes) if size + 1 + length <= limit), None)
        if room is None:
            groups.append([payload])
            sizes.append(length)
        else:
            groups[room].append(payload)
            sizes[room] += 1 + length
    return groups
