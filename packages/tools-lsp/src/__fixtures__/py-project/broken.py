count: int = "three"
