"""The `ksched` command line: a thin Typer layer over the public API (kschedcli.session).

Every module of this package imports the library and the views inside its commands, not at module
level: `ksched --help` and shell completion load neither (start-up time, benchmarks/startup.py).
Those are the only imports made inside functions here."""
