import { describe, expect, it } from 'vitest';
import { isInside, outermostPaths } from './real-paths.js';

// A name that starts with two dots (`..x`, `...`) is a name like any other: a path under it lies
// inside the root. Taken for "outside" (`relative.startsWith('..')`), a read-only path there was
// left writable and a program there counted as trusted.

describe('isInside', () => {
  it.each([
    ['/ws', '/ws'],
    ['/ws', '/ws/a'],
    ['/ws', '/ws/..x'],
    ['/ws', '/ws/..x/ro'],
    ['/ws', '/ws/...'],
    ['/ws', '/ws/.../deep/er'],
    ['/ws', '/ws/..hidden/.git/config'],
    ['/ws', '/ws/a/..'],
    ['/ws', '/ws/a/../b'],
    ['/ws', '/ws/.. '],
    ['/ws/', '/ws/..x'],
    ['/', '/..x'],
    ['/', '/etc'],
  ])('%s holds %s', (root, entry) => {
    expect(isInside(root, entry)).toBe(true);
  });

  it.each([
    ['/ws', '/'],
    ['/ws', '/ws/..'],
    ['/ws', '/ws/../etc'],
    ['/ws', '/ws/a/../../etc'],
    ['/ws', '/wsx'],
    ['/ws', '/w'],
    ['/ws', '/ws..'],
    ['/ws', '/ws..x/a'],
    ['/ws/a', '/ws/b'],
    ['/ws/..x', '/ws'],
  ])('%s does not hold %s', (root, entry) => {
    expect(isInside(root, entry)).toBe(false);
  });
});

describe('outermostPaths', () => {
  it('keeps a path under a two-dot name out when its folder is listed', () => {
    expect(outermostPaths(['/ws/..x/ro', '/ws/..x', '/ws/..y/a', '/ws/..x'])).toEqual([
      '/ws/..x',
      '/ws/..y/a',
    ]);
  });
});
