"""The `brain` command line: thin typer commands over the `brain`, `ingest` and `oci` libraries."""
