"""The one error type for bad input: it names the file and the field."""

from __future__ import annotations

# Names to show for inputs that are not files the user named (a live cluster's temporary snapshot
# file -> `kubectl (context prod)`); set by the source that made the file.
SOURCE_LABELS: dict[str, str] = {}


class InputChanged(BaseException):
    """An input changed under the running command (a snapshot cache entry damaged after the command
    started reading it): one line, exit status 2. Not an Exception: no `except Exception` of a
    command may take it for a result."""


class InputError(Exception):
    """Bad user input. Rendered as one line `file: where: field: message`, exit status 2."""

    def __init__(self, message: str, *, source: str = "", where: str = "", field: str = ""):
        self.message = message
        self.source = source
        self.where = where
        self.field = field
        super().__init__(str(self))

    def located(self, *, source: str | None = None, where: str | None = None, field_prefix: str = "") -> InputError:
        """A copy with the location filled in where it is still missing."""
        field = self.field
        if field_prefix:
            field = f"{field_prefix}.{field}" if field else field_prefix
        return InputError(
            self.message, source=self.source or (source or ""), where=self.where or (where or ""), field=field
        )

    def __str__(self) -> str:
        parts = [p for p in (SOURCE_LABELS.get(self.source, self.source), self.where, self.field) if p]
        parts.append(self.message)
        return ": ".join(parts)


class FieldError(InputError):
    """An InputError raised deep in parsing, located later by the caller."""

    def __init__(self, field: str, message: str):
        super().__init__(message, field=field)


# characters of a value an error line quotes; a longer one is cut there and its length given
QUOTED_CHARS = 80


def cut(value: object, limit: int = QUOTED_CHARS, *, quote: bool = True) -> str:
    """`value` for an error line (quoted as repr unless quote=False), only its first `limit`
    characters when longer, followed by how long it was: `'aaaa'… (12,345 characters)`."""
    text = value if isinstance(value, str) else str(value)
    shown = text if len(text) <= limit else text[:limit]
    shown = repr(shown) if quote else shown
    if len(text) <= limit:
        return shown
    return f"{shown}… ({len(text):,} characters)"
