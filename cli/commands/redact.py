def redact() -> None:  # placeholder while writing
    pass
