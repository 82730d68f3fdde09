import { join } from 'node:path';
import { describe, it } from 'vitest';
import type { Turn } from '../testing/messages-server.js';
import { testUsers } from '../testing/test-support.js';
import {
  expectRanAfterEachCall,
  expectStoppedAfterChange,
  hookSessionSuite,
  runHookSession,
  untouchedTurns,
} from '../testing/trusted-hook-session.js';

const cleanups = hookSessionSuite('bwrap');

const ruff = '#!/bin/sh\necho ran >> "OUTSIDE/hook-ran"\n';

const shellHook = {
  command: 'sh scripts/hooks/lint.sh',
  files: { 'scripts/hooks/lint.sh': 'set -e\nruff check .\n' },
};

// npm puts node_modules/.bin first on a script's PATH, then the rest: the venv's `ruff`.
const packageScriptHook = {
  command: 'npm run -s lint',
  files: { 'package.json': JSON.stringify({ scripts: { lint: 'ruff check .' } }) },
};

/** Hooks whose script runs `ruff` by name, and the files of each. */
const hooks: Record<string, { command: string; files: Record<string, string> }> = {
  'a shell script': shellHook,
  "a Makefile's recipe": {
    command: 'make -s lint',
    files: { Makefile: 'lint:\n\truff check .\n' },
  },
  "a package.json's script": packageScriptHook,
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
        expectStoppedAfterChange(
          await runWithVenvOnPath(
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
          ),
          { command: hook.command, ranBefore: 1, changed: '.venv/bin/ruff' },
        );
      },
    );

    it.each([
      ['a shell script', shellHook],
      ["a package.json's script", packageScriptHook],
    ])('by %s, untouched, it runs after every call', async (_what, hook) => {
      expectRanAfterEachCall(await runWithVenvOnPath(hook, untouchedTurns, uid));
    });
  },
);
