import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readRetryRecords, summarizeRetries } from './retry-once.mjs';
import { readSkipRecords } from './system-tools.mjs';

const fixture = fileURLToPath(new URL('./__fixtures__/flaky', import.meta.url));
const vitestBin = path.join(
  path.dirname(createRequire(import.meta.url).resolve('vitest/package.json')),
  'vitest.mjs',
);
const work = mkdtempSync(path.join(tmpdir(), 'agent-retry-once-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function runFixture(records: string, ci: boolean) {
  const result = spawnSync(process.execPath, [vitestBin, 'run', '--root', fixture], {
    cwd: fixture,
    env: { ...process.env, CI: ci ? 'true' : '', AGENT_SKIP_RECORDS: records, NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('a failed test under CI', () => {
  it('runs once more: a pass then is named and recorded, a second failure still fails', () => {
    const records = path.join(work, 'ci');
    const { status, output } = runFixture(records, true);
    expect(status, output).toBe(1);
    expect(output).toMatch(/Tests\s+1 failed \| 2 passed \(3\)/);
    expect(output).toContain(
      'passed only on retry 1: tooling/system-tools/src/__fixtures__/flaky/flaky.test.ts > fails the first time only',
    );
    const retried = readRetryRecords([records]);
    expect(retried).toEqual([
      {
        file: 'tooling/system-tools/src/__fixtures__/flaky/flaky.test.ts',
        test: 'fails the first time only',
        retries: 1,
      },
    ]);
    // Not a skip record: the skip summary does not count it.
    expect(readSkipRecords([records])).toEqual([]);
    expect(summarizeRetries(retried)).toEqual([
      '1 test failed once and passed on the retry CI allows (flaky: fix them):',
      '  tooling/system-tools/src/__fixtures__/flaky/flaky.test.ts > fails the first time only',
    ]);
  });

  it('outside CI nothing is retried', () => {
    const records = path.join(work, 'local');
    const { status, output } = runFixture(records, false);
    expect(status, output).toBe(1);
    expect(output).toMatch(/Tests\s+2 failed \| 1 passed \(3\)/);
    expect(readRetryRecords([records])).toEqual([]);
    expect(summarizeRetries([])).toEqual([]);
  });
});
