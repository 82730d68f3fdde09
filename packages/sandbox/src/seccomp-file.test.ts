// Where the seccomp filter files go. With a TMPDIR this user cannot write (inherited from another
// user, or removed), making the filter file failed and every sandbox ran without its seccomp
// filter (Unix sockets, io_uring and the kernel keyring open) — for want of a folder. /tmp serves.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { seccompFilterDirectory, seccompFilterFile } from './seccomp-file.js';
import { seccompArchitecture } from './seccomp-filter.js';

const savedTmpdir = process.env.TMPDIR;
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
});

describe('the seccomp filter file', () => {
  it.each([
    ['does not exist', () => path.join(os.tmpdir(), `no-such-dir-${process.pid}`, 'deeper')],
    [
      'is a file',
      () => {
        const dir = fs.mkdtempSync(path.join('/tmp', 'seccomp-file-test-'));
        made.push(dir);
        const file = path.join(dir, 'a-file');
        fs.writeFileSync(file, '');
        return file;
      },
    ],
  ])('is written under /tmp when TMPDIR %s', (_case, tmpdir) => {
    const architecture = seccompArchitecture();
    if (architecture === undefined) return expect(architecture).toBeUndefined();
    process.env.TMPDIR = tmpdir();
    const file = seccompFilterFile({ architecture, allowUnixSockets: false });
    expect(file.startsWith('/tmp/agent-sandbox-seccomp-')).toBe(true);
    expect(fs.statSync(file).size).toBeGreaterThan(0);
    expect(path.dirname(file)).toBe(seccompFilterDirectory());
    // Closed to everyone else, as in TMPDIR.
    expect(fs.statSync(path.dirname(file)).mode & 0o077).toBe(0);
  });
});
