/**
 * explainFailure reads a failed command's output, which the command (or a file it prints) writes:
 * output that repeats the start of a pattern without its end made `A.*B` rescan the rest of the
 * line from every `A` (quadratic: 1.5 s for 100 kB). A test here that hangs is the failure.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { explainFailure, type FailureContext } from './explain-failure.js';

const context: FailureContext = {
  writableRoots: ['/work'],
  network: 'off',
  hiddenPaths: [],
  unixSockets: 'blocked',
};

describe('explainFailure on output that repeats half a message', () => {
  it.each([
    ['403 Forbidden without a proxy', 'B403 FORBIDDENG'.repeat(40_000)],
    ['AF_UNIX without the refusal', 'AF_UNIX x '.repeat(60_000)],
    ['Operation not permitted without a socket', 'Operation not permitted '.repeat(30_000)],
    ['.sock without the refusal', 'R.SOCK(D'.repeat(80_000)],
  ])('%s: no note', (_name, output) => {
    expect(explainFailure(output, context)).toBeUndefined();
  });

  it.each([
    ['403 Forbidden by the proxy', 'network'],
    ['curl: (56) CONNECT tunnel failed, response 403 Forbidden (proxy)', 'network'],
    ['socket: AF_UNIX: EPERM', 'Unix-domain sockets'],
    ['Error: Operation not permitted: /run/docker.sock', 'Unix-domain sockets'],
    ['/run/x.sock: Operation not permitted', 'Unix-domain sockets'],
  ])('%s: names the %s', (output, named) => {
    expect(explainFailure(`${'x '.repeat(20_000)}\n${output}`, context)).toContain(named);
  });
});

describe('explainFailure on home paths whose first name starts with two dots', () => {
  const home = os.homedir();

  it('a hidden credential under ~/..vault, named as ~/..vault/key: said', () => {
    const note = explainFailure('cat: ~/..vault/key: No such file or directory', {
      ...context,
      hiddenPaths: [path.join(home, '..vault', 'key')],
    });
    expect(note).toContain('credential paths are hidden');
  });

  it('a read-only startup file under ~/..rc, named relative to the home: said', () => {
    const note = explainFailure('sh: 1: cannot create ..rc/profile: Read-only file system', {
      ...context,
      startupFiles: [path.join(home, '..rc', 'profile')],
    });
    expect(note).toContain('startup files');
  });

  it('a hidden path outside the home is not taken for the same name under it', () => {
    const note = explainFailure('cat: ~/..x/key: No such file or directory', {
      ...context,
      hiddenPaths: ['/srv/..x/key'],
    });
    expect(note).toBeUndefined();
  });
});
