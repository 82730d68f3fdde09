// The user started the CLI from an activated virtual environment, so PATH names the project's
// `.venv/bin`. A trusted hook runs the project's script (`sh scripts/hooks/lint.sh`, `make lint`),
// and the script runs `ruff` by name: PATH finds `.venv/bin/ruff`, a file of the workspace. The
// hook's own words were looked up there (hook-file-pins.ts), the script's were not: a sandboxed
// command rewrote (or made) `.venv/bin/ruff` and the next hook ran it as the user, outside the
// sandbox. Real CLI, real bubblewrap, real sh and make.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Turn } from '../testing/messages-server.js';
import { assertBuilt, testUsers } from '../testing/test-support.js';
import {
  expectRanAfterEachCall,
  runHookSession,
  untouchedTurns,
} from '../testing/trusted-hook-session.js';

beforeAll(assertBuilt);
beforeEach(skipWithout('bwrap'));
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const ruff = '#!/bin/sh\necho ran >> "OUTSIDE/hook-ran"\n';

const shellHook = {
  command: 'sh scripts/hooks/lint.sh',
  files: { 'scripts/hooks/lint.sh': 'set -e\nruff check .\n' },
};

/** Hooks whose script runs `ruff` by name, and the files of each. */
const hooks: Record<string, { command: string; files: Record<string, string> }> = {
  'a shell script': shellHook,
  "a Makefile's recipe": {
    command: 'make -s lint',
    files: { Makefile: 'lint:\n\truff check .\n' },
  },
};

function runWithVenvOnPath(
  hook: { command: string; files: Record<string, string> },
  turns: (outside: string) => Turn[],
  uid: number | undefined,
) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: { command: hook.command, files: { ...hook.files, '.venv/bin/ruff': ruff } },
    // As `source .venv/bin/activate` leaves it.
    path: (repo) => `${join(repo, '.venv', 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
  });
}

describe.each(testUsers)(
  "a program a trusted hook's script runs by name from the workspace PATH ($label)",
  ({ uid }) => {
    it.each(Object.entries(hooks))(
      'by %s: rewritten by a sandboxed command, it does not run outside the sandbox',
      async (_what, hook) => {
        const { run, outside, ran } = await runWithVenvOnPath(
          hook,
          (outside) => [
            { tool: { name: 'list_files', input: { path: '.' } } },
            {
              tool: {
                name: 'bash',
                input: {
                  command: `printf '#!/bin/sh\\ntouch ${join(outside, 'escaped')}\\n' > .venv/bin/ruff`,
                },
              },
            },
            { tool: { name: 'list_files', input: { path: '.' } } },
            { text: 'done' },
          ],
          uid,
        );
        expect(run.code, run.stderr).toBe(0);
        expect(
          existsSync(join(outside, 'escaped')),
          'the rewritten ruff ran outside the sandbox',
        ).toBe(false);
        // The control: the hook ran the project's ruff outside the sandbox until the rewrite.
        expect(ran, run.stderr).toBe('ran\n');
        expect(run.stderr).toContain(
          `PostToolUse hook "${hook.command}" did not run: the project files it runs changed during this session (.venv/bin/ruff)`,
        );
      },
    );

    it('untouched, it runs after every call', async () => {
      expectRanAfterEachCall(await runWithVenvOnPath(shellHook, untouchedTurns, uid));
    });
  },
);
