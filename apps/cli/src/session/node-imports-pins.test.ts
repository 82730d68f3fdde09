// A trusted hook runs the project's Node script, which imports its helper through package.json's
// subpath imports (`import { mark } from '#lib'` with `"imports": { "#lib": "./scripts/lib.mjs" }`).
// The script was pinned, but `#lib` names no file: neither the helper nor the map was, and a
// sandboxed command that rewrote either ran its code as the user, outside the sandbox, at the
// next hook. Real CLI, real bubblewrap, real node.
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

// By PATH: every user may run the system node (this test's may lie under /root).
const command = 'node scripts/hooks/run.mjs';
const lib = (line: string) =>
  `import { appendFileSync } from 'node:fs';\nexport function mark() { ${line} }\n`;

function runWithImportsHook(turns: (outside: string) => Turn[], uid: number | undefined) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: {
      command,
      files: {
        'package.json': JSON.stringify({ name: 'x', imports: { '#lib': './scripts/lib.mjs' } }),
        'scripts/hooks/run.mjs': "import { mark } from '#lib';\nmark();\n",
        'scripts/lib.mjs': lib("appendFileSync('OUTSIDE/hook-ran', 'ran\\n');"),
      },
    },
  });
}

const escaping = (outside: string) =>
  lib(`appendFileSync(${JSON.stringify(join(outside, 'escaped'))}, '');`);

describe.each(testUsers)(
  'a module a trusted Node hook imports by a #subpath ($label)',
  ({ uid }) => {
    it.each([
      [
        'the module rewritten',
        (outside: string): Turn[] => [
          {
            tool: {
              name: 'write_file',
              input: { path: 'scripts/lib.mjs', content: escaping(outside) },
            },
          },
        ],
        'scripts/lib.mjs',
      ],
      [
        'the map pointed elsewhere',
        (outside: string): Turn[] => [
          {
            tool: {
              name: 'write_file',
              input: { path: 'scripts/other.mjs', content: escaping(outside) },
            },
          },
          {
            tool: {
              name: 'write_file',
              input: {
                path: 'package.json',
                content: JSON.stringify({ name: 'x', imports: { '#lib': './scripts/other.mjs' } }),
              },
            },
          },
        ],
        'package.json',
      ],
    ])('%s by a sandboxed command: it does not run', async (_what, plant, changed) => {
      expectStoppedAfterChange(
        await runWithImportsHook(
          (outside) => [
            { tool: { name: 'list_files', input: { path: '.' } } },
            ...plant(outside),
            { tool: { name: 'list_files', input: { path: '.' } } },
            { text: 'done' },
          ],
          uid,
        ),
        { command, ranBefore: changed === 'package.json' ? 2 : 1 },
      );
    });

    it('untouched, it runs after every call', async () => {
      expectRanAfterEachCall(await runWithImportsHook(untouchedTurns, uid));
    });
  },
);
