"""Shapes and arithmetic."""

import math


class Circle:
    """A circle of a given radius."""

    def __init__(self, radius: float) -> None:
        self.radius = radius

    def area(self) -> float:
        return math.pi * self.radius * self.radius


def add(a: float, b: float) -> float:
    """Adds two numbers."""
    return a + b
