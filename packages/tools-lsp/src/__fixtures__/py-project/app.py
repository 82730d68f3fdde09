from geometry import Circle, add

circle = Circle(2)
total = add(circle.area(), 1)
print(total, add(1, 2))
