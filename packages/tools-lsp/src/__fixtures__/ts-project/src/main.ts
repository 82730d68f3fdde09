import { add, Circle } from './geometry';

const circle = new Circle(2);
const total = add(circle.area(), 1);
console.log(total, add(1, 2));
