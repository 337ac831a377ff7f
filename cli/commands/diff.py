def diff() -> None:  # placeholder while writing
    pass
