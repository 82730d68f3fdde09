// What tests hand to another user must never share an inode with the toolchain: a hard link of the
// running node, chowned with its folder to `nobody`, chowned the toolchain's own node binary — the
// one root runs next (`npm test`, `npm run demo`) — to a user who could then replace it.
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeForAnyUser } from './any-user.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('nodeForAnyUser', () => {
  it('is a separate file every user can run, so chowning it leaves the toolchain node alone', () => {
    const dir = fs.mkdtempSync(path.join(tmpdir(), 'node-for-any-user-'));
    made.push(dir);
    const before = fs.statSync(process.execPath);
    const node = nodeForAnyUser(path.join(dir, 'node'));
    const copy = fs.statSync(node);
    expect(copy.ino).not.toBe(before.ino);
    expect(copy.mode & 0o777).toBe(0o755);
    expect(copy.size).toBe(before.size);
    // As root, what the tests do next: the folder goes to the test user.
    if (process.getuid?.() === 0) {
      fs.chownSync(node, 65534, 65534);
      expect(fs.statSync(node).uid).toBe(65534);
    }
    const after = fs.statSync(process.execPath);
    expect([after.uid, after.gid, after.nlink]).toEqual([before.uid, before.gid, before.nlink]);
  });
});
