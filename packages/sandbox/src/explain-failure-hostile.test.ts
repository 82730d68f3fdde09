/**
 * explainFailure reads a failed command's output, which the command (or a file it prints) writes:
 * output that repeats the start of a pattern without its end made `A.*B` rescan the rest of the
 * line from every `A` (quadratic: 1.5 s for 100 kB). A test here that hangs is the failure.
 */
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
