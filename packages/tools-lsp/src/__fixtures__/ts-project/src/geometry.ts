/** Something with an area. */
export interface Shape {
  area(): number;
}

/** A circle of a given radius. */
export class Circle implements Shape {
  constructor(readonly radius: number) {}

  area(): number {
    return Math.PI * this.radius * this.radius;
  }
}

/** Adds two numbers. */
export function add(a: number, b: number): number {
  return a + b;
}
