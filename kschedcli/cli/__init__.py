"""The `ksched` command line: a thin Typer layer over the public API (kschedcli.session)."""
