// The shells that start bwrap run outside the sandbox with the command's environment. Started as
// Node starts a child (stdin a socket pair, no SHLVL), bash took itself for an ssh session and ran
// the user's ~/.bashrc; it also honoured $BASH_ENV and functions exported in the environment — all
// outside the sandbox, before every command. None of them may run.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox } from './sandbox.js';

beforeEach(skipWithout('bwrap'));
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A directory under /var/tmp (outside the private /tmp the sandbox makes). */
function directory(): string {
  const root = fs.realpathSync(fs.mkdtempSync('/var/tmp/outside-shells-'));
  made.push(root);
  return root;
}

/** An environment whose every start-up hook would leave a file in `markers` (outside any root). */
function hostileEnvironment(markers: string): Record<string, string> {
  const home = directory();
  const mark = (name: string) => `: > ${JSON.stringify(path.join(markers, name))}`;
  fs.writeFileSync(path.join(home, '.bashrc'), `${mark('bashrc')}\n`);
  fs.writeFileSync(path.join(home, '.bash_profile'), `${mark('profile')}\n`);
  fs.writeFileSync(path.join(home, 'bash-env'), `${mark('bash-env')}\n`);
  const environment: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    BASH_ENV: path.join(home, 'bash-env'),
    ENV: path.join(home, 'bash-env'),
  };
  for (const name of ['exec', 'echo', 'cd', 'shift', '[']) {
    environment[`BASH_FUNC_${name}%%`] =
      `() { ${mark(`function-${name === '[' ? 'test' : name}`)}; }`;
  }
  return environment;
}

/** Runs the wrapped command as Node runs a tool's: stdio pipes (socket pairs), no terminal. */
function run(file: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, [...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', () => resolve(output));
    child.stdin.end();
  });
}

describe('the shells that start a sandbox', () => {
  it.each([
    ['/bin/sh (nothing to pin)', false],
    ['bash (a nested repository pinned)', true],
  ])(
    '%s run no start-up file, BASH_ENV or exported function of the environment',
    async (_name, nested) => {
      const workspace = directory();
      const markers = directory();
      // A repository inside the workspace has its directories pinned: bwrap then starts through
      // bash (dash cannot open descriptors above 9).
      if (nested) execFileSync('git', ['init', '-q', path.join(workspace, 'vendor/lib')]);
      const sandbox = createSandbox({
        mode: 'required',
        onWarning: () => undefined,
        writableRoots: [workspace],
      });
      try {
        const env = hostileEnvironment(markers);
        const wrapped = await sandbox.wrap({
          file: '/bin/echo',
          args: ['ran'],
          cwd: workspace,
          env,
        });
        if (nested) {
          const words = [wrapped.file, ...wrapped.args].map((word) => path.basename(word));
          expect(words).toContain('bash');
        }
        const output = await run(wrapped.file, wrapped.args, wrapped.env);
        expect(output).toBe('ran\n');
        expect(fs.readdirSync(markers)).toEqual([]);
      } finally {
        await sandbox.close();
      }
    },
  );
});
