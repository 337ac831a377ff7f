def prune() -> None:  # placeholder while writing
    pass
