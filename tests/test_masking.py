"""kschedcli.masking: a URL's userinfo found wherever a password may end it, on a URL alone and
inside a longer message, and shown stripped (the live cluster's style) or with the password masked
(the extenders' style). The secrets are distinct words, so that no piece of one can hide in the output."""

from __future__ import annotations

import pytest

from kschedcli.masking import mask_password, strip_userinfo, userinfo_spans

# (text, stripped, masked): the password pieces are the words starting with S (SUPER, SECRET, S3...)
CASES = [
    # a URL alone
    ("https://bob:SUPER@10.0.0.1:6443/api", "https://10.0.0.1:6443/api", "https://bob:xxxxx@10.0.0.1:6443/api"),
    ("https://bob:SUPER/SECRET@h:1/x", "https://h:1/x", "https://bob:xxxxx@h:1/x"),  # Go: host bob, port SUPER
    ("https://bob:SUPER SECRET@h:1", "https://h:1", "https://bob:xxxxx@h:1"),
    ('https://bob:SUPER"SECRET@h:1', "https://h:1", "https://bob:xxxxx@h:1"),
    ("https://bob:SUPER'SECRET@h:1", "https://h:1", "https://bob:xxxxx@h:1"),
    ("https://bob:SUPER@SECRET@h:1", "https://h:1", "https://bob:xxxxx@h:1"),  # Go: the last @
    ("https://bob:SUPER:SECRET@h:1", "https://h:1", "https://bob:xxxxx@h:1"),
    ("https://bob:SUPER?SECRET#S3@h", "https://h", "https://bob:xxxxx@h"),
    ("https://bob:SUPER://SECRET@h", "https://h", "https://bob:xxxxx@h"),  # a scheme-like password
    ("https://bob:SUPER\nSECRET@h", "https://h", "https://bob:xxxxx@h"),  # a line break in it
    ("https://bob:@h", "https://h", "https://bob:xxxxx@h"),  # an empty password is still one
    ("https://bob@h/x", "https://h/x", "https://bob@h/x"),  # a user alone: Go shows it
    ("https://h/a@b:c", "https://h/a@b:c", "https://h/a@b:c"),  # the path's @, no userinfo
    ("https://h/x?to=a@b", "https://h/x?to=a@b", "https://h/x?to=a@b"),
    ("https://h:6443/api", "https://h:6443/api", "https://h:6443/api"),
    # inside a message: Go's %q quotes the URL and escapes a quote in it
    (
        'host must be a URL or a host:port pair: "https://bob:SUPER/SECRET@127.0.0.1:1"',
        'host must be a URL or a host:port pair: "https://127.0.0.1:1"',
        'host must be a URL or a host:port pair: "https://bob:xxxxx@127.0.0.1:1"',
    ),
    (
        'pair: "https://bob:SUPER\\"SECRET@127.0.0.1:1"',
        'pair: "https://127.0.0.1:1"',
        'pair: "https://bob:xxxxx@127.0.0.1:1"',
    ),
    (
        'Get "https://bob:SUPER SECRET@h:6443/api?timeout=32s": EOF',
        'Get "https://h:6443/api?timeout=32s": EOF',
        'Get "https://bob:xxxxx@h:6443/api?timeout=32s": EOF',
    ),
    # a quote in the password that nothing escaped: the string does not close there
    ('Get "https://bob:SUPER"SECRET@h": EOF', 'Get "https://h": EOF', 'Get "https://bob:xxxxx@h": EOF'),
    # the URL's string closes before a later @ (a CA named k3s-server-ca@...): nothing masked
    (
        'Get "https://h:6443/api": x509: certificate signed by unknown authority "k3s-server-ca@1690000000"',
        'Get "https://h:6443/api": x509: certificate signed by unknown authority "k3s-server-ca@1690000000"',
        'Get "https://h:6443/api": x509: certificate signed by unknown authority "k3s-server-ca@1690000000"',
    ),
    # JSON's escaped quotes: the URL's string ends at none of them, the text's end bounds it
    ('{"message":"Get \\"https://bob:SUPER@h\\": EOF"}', '{"message":"Get \\"https://h\\": EOF"}', None),
    # single quotes, a doubled one inside (YAML's escape)
    ("server 'https://bob:SUPER''SECRET@h'", "server 'https://h'", "server 'https://bob:xxxxx@h'"),
    # unquoted, a space in the password: the rest of the text bounds it (more is masked than needed)
    ("dial https://bob:SUPER SECRET@h", "dial https://h", "dial https://bob:xxxxx@h"),
    # two URLs
    (
        'Get "https://bob:SUPER@a/x": proxyconnect "http://eve:SECRET@proxy:3128"',
        'Get "https://a/x": proxyconnect "http://proxy:3128"',
        'Get "https://bob:xxxxx@a/x": proxyconnect "http://eve:xxxxx@proxy:3128"',
    ),
]


@pytest.mark.parametrize("text, stripped, masked", CASES)
def test_the_userinfo_is_found_wherever_the_password_ends_it(text, stripped, masked):
    assert strip_userinfo(text) == stripped
    if masked is not None:
        assert mask_password(text) == masked
    for shown in (strip_userinfo(text), mask_password(text)):
        for secret in ("SUPER", "SECRET", "S3"):
            assert secret not in shown, shown


def test_spans_are_the_userinfo_and_its_at():
    text = 'a "https://u:p/q@h" b https://v@k'
    assert [text[s:a] + text[a] for s, a in userinfo_spans(text)] == ["u:p/q@", "v@"]
    assert list(userinfo_spans("no URL at all, only mail@example.com")) == []


def test_text_without_userinfo_is_returned_as_it_is():
    text = "https://h:6443/api?x=1"
    assert strip_userinfo(text) is text and mask_password(text) is text
