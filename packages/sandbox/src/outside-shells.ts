// The shells that start a sandbox run outside it, with the command's environment: they must run
// their script and nothing else the environment or the user's start-up files name.
import { spawnSync } from 'node:child_process';
import { credentialFreeEnvironment } from '@agent/core/credentials';

/**
 * What the closing shell (bash, which can close descriptors above 9) is started with, before
 * `-c`. Without these, bash ran the user's ~/.bashrc on every sandboxed command (a
 * non-interactive bash whose stdin is a socket, as Node's pipes are, takes itself for an ssh
 * session: pyenv or nvm set-up ran outside the sandbox each time, seconds under load),
 * `$BASH_ENV`, and functions exported in the environment (`BASH_FUNC_exec%%` replaced the
 * script's own `exec`). Privileged mode (`-p`) ignores BASH_ENV, ENV, exported functions,
 * SHELLOPTS, BASHOPTS, CDPATH and GLOBIGNORE.
 */
export const closingShellOptions: readonly string[] = ['--norc', '--noprofile', '-p'];

let systemShell: readonly string[] | undefined;

/**
 * What `/bin/sh` is started with, before `-c`, where it runs outside the sandbox: `-p` where it
 * takes it (dash ignores it; a bash as /bin/sh then imports no functions — `echo` or `exec`
 * from the environment — and reads no ENV), nothing where it does not (checked once).
 */
export function systemShellOptions(): readonly string[] {
  if (systemShell === undefined) {
    const probe = spawnSync('/bin/sh', ['-p', '-c', 'exit 0'], {
      env: credentialFreeEnvironment(process.env),
      stdio: 'ignore',
      timeout: 10_000,
    });
    systemShell = probe.status === 0 ? ['-p'] : [];
  }
  return systemShell;
}
