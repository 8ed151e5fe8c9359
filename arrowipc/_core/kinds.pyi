KINDS: dict[str, int]
