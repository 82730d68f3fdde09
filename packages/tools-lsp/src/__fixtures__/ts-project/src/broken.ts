export const count: number = 'three';
