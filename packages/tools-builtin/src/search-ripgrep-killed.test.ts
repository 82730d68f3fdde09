/**
 * A ripgrep that does not finish — killed by a signal (the OOM killer, a limit, a stray kill) or
 * never started — is a failed search, not "No matches found.": the model would act on a lie.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSearchTool } from './search.js';
import { createRipgrepEngine } from './search-engines.js';
import { makeTempDir, testContext } from './test-helpers.js';

describe('search over a ripgrep that does not finish', () => {
  it.for(['content', 'files_with_matches', 'count'] as const)(
    'a ripgrep SIGKILLed before its output (%s) fails the search, naming the signal',
    async (mode) => {
      const dir = makeTempDir();
      fs.writeFileSync(path.join(dir, 'a.md'), 'needle\n');
      // A real process standing in for rg that is killed the moment it starts.
      const killed = path.join(dir, 'rg-killed.sh');
      fs.writeFileSync(killed, '#!/bin/sh\nkill -9 $$\n', { mode: 0o755 });
      const tool = createSearchTool({ cwd: dir, engine: createRipgrepEngine({ rgPath: killed }) });
      await expect(
        tool.execute({ pattern: 'needle', output_mode: mode }, testContext()),
      ).rejects.toThrow(/Search failed: ripgrep ended by SIGKILL/);
    },
  );

  it('a ripgrep that cannot start fails the search, saying why', async () => {
    const dir = makeTempDir();
    fs.writeFileSync(path.join(dir, 'a.md'), 'needle\n');
    const tool = createSearchTool({
      cwd: dir,
      engine: createRipgrepEngine({ rgPath: path.join(dir, 'no-such-rg') }),
    });
    await expect(tool.execute({ pattern: 'needle' }, testContext())).rejects.toThrow(
      /Search failed: ripgrep failed: .*ENOENT/,
    );
  });
});
