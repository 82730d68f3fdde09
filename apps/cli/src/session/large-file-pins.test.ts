import { join } from 'node:path';
import { describe, it } from 'vitest';
import type { Turn } from '../testing/messages-server.js';
import { testUsers } from '../testing/test-support.js';
import {
  expectRanAfterEachCall,
  expectStoppedAfterChange,
  hookSessionSuite,
  plantTurns,
  runHookSession,
  untouchedTurns,
} from '../testing/trusted-hook-session.js';

const cleanups = hookSessionSuite('bwrap');

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
    expectStoppedAfterChange(
      await runWithLargeTool(
        (outside) =>
          plantTurns([
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
          ]),
        uid,
      ),
      { command: './tools/large-tool --check', ranBefore: 2, changed: 'tools/large-tool' },
    );
  });

  it('untouched, it runs after every call', async () => {
    expectRanAfterEachCall(await runWithLargeTool(untouchedTurns, uid));
  });
});
