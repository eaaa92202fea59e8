"""YAML text of a document (`-o yaml`): PyYAML's block style, keys in the document's order, no
anchors or aliases, non-ASCII as is.

A string holding NEL (U+0085), a line or paragraph separator (U+2028, U+2029) or a bidirectional
control is written double-quoted, those characters escaped (`\\N`, `\\L`, `\\P`, `\\u202E`): PyYAML
would write them raw, plain or single-quoted, where a terminal acts on them and where NEL does not
even read back as the same string. Other controls PyYAML escapes itself. Valid text holds none of
them and is written as before (docs/terminal-safety.md).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_QUOTE = re.compile("[\x85\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True  # the document shares equal parts: write each in full, never as &anchor/*alias

    def write_double_quoted(self, text: str, split: bool = True) -> None:
        if self.allow_unicode and _BIDI.search(text):
            self.allow_unicode = False  # only here: PyYAML escapes what is not ASCII
            try:
                super().write_double_quoted(text, split)
            finally:
                self.allow_unicode = True
            return
        super().write_double_quoted(text, split)


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if not data.isascii() and _QUOTE.search(data):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    return dumper.represent_str(data)


_Dumper.add_representer(str, _represent_str)


def yaml_text(doc: Any) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000, allow_unicode=True)
