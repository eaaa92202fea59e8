"""A URL's userinfo (`scheme://user:password@host`) found in text ksched prints, so that no part of
a password reaches the output: one scanner for a URL on its own (an extender's urlPrefix, a
kubeconfig's server) and for URLs inside longer messages (kubectl's stderr lines).

The userinfo is found conservatively, not as Go's url.Parse finds it: a password may hold `/`,
`?`, `#`, `@`, `:`, spaces and quotes, which end Go's authority early (`https://bob:pa/ss@host` is
to Go the host `bob` with the port `pa`, and the password is then printed whole in its errors). A
URL's text runs from its `scheme://` to the end of its quoted string when a quote opens it (Go's
`%q` quotes a URL in its errors and escapes a quote inside it: the string closes at the first
unescaped quote followed by the end of the text, a space or punctuation), else to the end of the
text (a space or a line break may be a password's). Its userinfo is everything from `scheme://` to
the last `@` in that text, when that holds a `:` (a password follows the first one) or could be an
authority's user alone (no `/`, `?`, `#`, space or quote in it: `https://host/a@b` keeps its path).
Masking too much of a URL followed by an `@` is the price of never showing a part of a password.

Two ways to show it: `strip_userinfo` drops it (`https://host`, as the live cluster's server is
named) and `mask_password` keeps the user and masks the rest (`http://user:xxxxx@host`, as Go's
url.URL.Redacted writes a password). This module has no dependency: every layer may import it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

MASK = "xxxxx"  # what a password reads, as url.URL.Redacted writes it

_SCHEME = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://")
_QUOTES = "\"'"
# what may follow a closing quote: an unescaped quote followed by anything else is taken to be part
# of the URL (a password's quote in text that did not escape it), so the URL's text runs on past it
_AFTER_CLOSING = frozenset(" \t\r\n:,;.)]}>")
# a user alone (no password) is an authority's userinfo only without these (Go ends the authority at
# the first of /?#); with one of them the `@` is the path's, the query's or the next word's
_NOT_A_USER = re.compile(r"[/?#\s\"']")


def _url_end(text: str, begin: int, quote: str | None) -> int:
    """Where the URL whose `scheme://` ends at `begin` ends: its closing quote, else the text's end."""
    end = len(text)
    if quote is None:
        return end
    i = begin
    while i < end:
        ch = text[i]
        if ch == "\\":  # an escaped character (\" \\ in Go's %q), never the closing quote
            i += 2
            continue
        if ch == quote and (i + 1 >= end or text[i + 1] in _AFTER_CLOSING):
            return i
        i += 1
    return end


def userinfo_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, at) of each URL's userinfo in `text`: `text[start:at]` is the userinfo, `text[at]`
    the `@` that ends it, in order and not overlapping."""
    pos = 0
    while True:
        m = _SCHEME.search(text, pos)
        if m is None:
            return
        begin = m.end()
        before = text[m.start() - 1] if m.start() > 0 else ""
        end = _url_end(text, begin, before if before and before in _QUOTES else None)
        at = text.rfind("@", begin, end)
        if at >= 0:
            userinfo = text[begin:at]
            if ":" in userinfo or not _NOT_A_USER.search(userinfo):
                yield begin, at
                pos = at + 1
                continue
        pos = begin  # no userinfo: a URL inside this one's text is looked at on its own


def _replace(text: str, shown: Callable[[str], str]) -> str:
    out: list[str] = []
    last = 0
    for start, at in userinfo_spans(text):
        out.append(text[last:start])
        out.append(shown(text[start:at]))
        last = at + 1
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def strip_userinfo(text: str) -> str:
    """`text` with every URL's userinfo and its `@` left out: `https://user:pass@host` reads
    `https://host`."""
    return _replace(text, lambda userinfo: "")


def mask_password(text: str) -> str:
    """`text` with every URL's password masked: `http://user:pass@host` reads
    `http://user:xxxxx@host` (an empty password too); a user alone is shown, as Go shows it."""

    def shown(userinfo: str) -> str:
        user, colon, _ = userinfo.partition(":")
        return f"{user}:{MASK}@" if colon else f"{userinfo}@"

    return _replace(text, shown)
