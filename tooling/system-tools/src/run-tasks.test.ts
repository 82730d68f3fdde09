// `npm run build` and `npm run typecheck` on a machine with only Node and npm (the root README's
// first day). They were `turbo run …`, and turbo runs each package's script with pnpm: with no
// pnpm on the PATH every one failed with "Unable to find package manager binary". They now go
// through scripts/run.mjs, which puts the toolchain's pnpm first (as `npm run demo` does).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repositoryRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** This Node's folder and the system's, without any folder that holds a pnpm. */
function pathWithoutPnpm(): string {
  return [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin']
    .filter((folder) => !existsSync(path.join(folder, 'pnpm')))
    .join(path.delimiter);
}

describe('npm run build / typecheck with no pnpm on the PATH', () => {
  it('the root scripts go through scripts/run.mjs', () => {
    const { scripts } = JSON.parse(readFileSync(path.join(repositoryRoot, 'package.json'), 'utf8'));
    expect(scripts.build).toBe('node scripts/run.mjs build');
    expect(scripts.typecheck).toBe('node scripts/run.mjs typecheck');
  });

  it('typecheck of one package runs, its arguments passed to turbo', () => {
    const result = spawnSync(
      process.execPath,
      [
        'scripts/run.mjs',
        'typecheck',
        // This package only (no outputs, nothing another suite reads), run even if cached.
        '--filter=@agent/tooling-system-tools',
        '--force',
        '--output-logs=errors-only',
      ],
      {
        cwd: repositoryRoot,
        env: { ...process.env, PATH: pathWithoutPnpm(), AGENT_SKIP_INSTALL: '1' },
        encoding: 'utf8',
        timeout: 300_000,
      },
    );
    const output = `${result.stdout}${result.stderr}`;
    expect(output).not.toContain('Unable to find package manager binary');
    expect(result.status, output).toBe(0);
    expect(output).toMatch(/Tasks:\s+1 successful, 1 total/);
  });
});
