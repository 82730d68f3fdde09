// A trusted project sets `"env": { "NODE_PATH": "lib" }` (or its hook's command line does) and
// its hook runs `node scripts/hooks/check.cjs`, which requires its helper by a bare name that Node
// finds in `lib/` after every node_modules. The script was pinned, not `lib/helpers.js`: a
// sandboxed command rewrote it and the next hook ran it as the user, outside the sandbox.
// Real CLI, real bubblewrap, real node.
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

const script = 'node scripts/hooks/check.cjs';

/** With NODE_PATH=lib in the project's env, or (`inCommand`) set by the hook's own command. */
function runWithNodePath(
  turns: (outside: string) => Turn[],
  uid: number | undefined,
  inCommand: boolean,
) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: {
      command: inCommand ? `NODE_PATH=lib ${script}` : script,
      files: {
        'scripts/hooks/check.cjs': "require('helpers').run();\n",
        'lib/helpers.js':
          "exports.run = () => require('node:fs').appendFileSync('OUTSIDE/hook-ran', 'ran\\n');\n",
      },
      ...(inCommand ? {} : { env: { NODE_PATH: 'lib' } }),
    },
  });
}

const rewrite = (outside: string): Turn => ({
  tool: {
    name: 'write_file',
    input: {
      path: 'lib/helpers.js',
      content: `exports.run = () => require('node:fs').writeFileSync(${JSON.stringify(`${outside}/escaped`)}, '');\n`,
    },
  },
});

describe.each(testUsers)('a module a trusted hook requires from NODE_PATH ($label)', ({ uid }) => {
  it.each([
    ["the project's env", false],
    ["the hook's own command", true],
  ])(
    'NODE_PATH=lib set by %s: rewritten by a file tool, it does not run',
    async (_what, inCommand) => {
      expectStoppedAfterChange(
        await runWithNodePath((outside) => plantTurns([rewrite(outside)]), uid, inCommand),
        {
          command: inCommand ? `NODE_PATH=lib ${script}` : script,
          ranBefore: 1,
          changed: 'lib/helpers.js',
        },
      );
    },
  );

  it('untouched, it runs after every call', async () => {
    expectRanAfterEachCall(await runWithNodePath(untouchedTurns, uid, false));
  });
});
