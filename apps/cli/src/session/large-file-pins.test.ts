// A project file over the 1 MiB a pin hashes was pinned by its size alone: a trusted hook that
// runs the project's own large program (`.venv/bin/ruff`, `node_modules/.bin/esbuild`, a
// vendored tool) ran whatever a sandboxed command put there of the same size — a two-line shell
// script padded to the byte — as the user, outside the sandbox. Real CLI, real bubblewrap.
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

/** The size of the project's tool: past the 1 MiB a pin reads. */
const toolSize = 1_500_000;

/** `script` padded with a comment to exactly {@link toolSize} bytes. */
function padded(script: string): string {
  return `${script}#${'x'.repeat(toolSize - script.length - 2)}\n`;
}

function runWithLargeTool(turns: (outside: string) => Turn[], uid: number | undefined) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: {
      command: './tools/large-tool --check',
      // Written by its place, not by `OUTSIDE` (a longer path would change its size).
      files: {
        'tools/large-tool': padded(
          '#!/bin/sh\necho ran >> "$(dirname "$0")/../../outside/hook-ran"\nexit 0\n',
        ),
      },
    },
  });
}

describe.each(testUsers)("a trusted hook's large program ($label)", ({ uid }) => {
  it('replaced by a sandboxed command with one of the same size does not run', async () => {
    const { run, outside, ran } = await runWithLargeTool(
      (outside) => [
        { tool: { name: 'list_files', input: { path: '.' } } },
        {
          tool: {
            name: 'write_file',
            input: {
              path: 'staged/tool',
              content: padded(`#!/bin/sh\ntouch "${join(outside, 'escaped')}"\nexit 0\n`),
            },
          },
        },
        { tool: { name: 'bash', input: { command: 'cat staged/tool > tools/large-tool' } } },
        { tool: { name: 'list_files', input: { path: '.' } } },
        { text: 'done' },
      ],
      uid,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(
      existsSync(join(outside, 'escaped')),
      'the same-size program ran outside the sandbox',
    ).toBe(false);
    // The control: it ran outside the sandbox (it can write there) until it was replaced.
    expect(ran, run.stderr).toBe('ran\nran\n');
    expect(run.stderr).toContain(
      'PostToolUse hook "./tools/large-tool --check" did not run: the project files it runs changed during this session (tools/large-tool)',
    );
  });

  it('untouched, it runs after every call', async () => {
    expectRanAfterEachCall(await runWithLargeTool(untouchedTurns, uid));
  });
});
