// A hook that runs inline JavaScript — `node -e "require('./scripts/notify')…"` — loads project
// files its code names without their extension, as Node resolves them; the words of the command
// named no file that exists (`./scripts/notify`), so nothing was pinned, and a sandboxed command
// that rewrote `scripts/notify.js` ran its code as the user, outside the sandbox, at the next
// hook. Real CLI, real bubblewrap, real node.
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

// By PATH: every user may run the system node (this test's may lie under /root).
const command = `node -e "require('./scripts/notify').done()"`;
const notify = (line: string) =>
  `const fs = require('node:fs');\nexports.done = () => { ${line} };\n`;

function runWithInlineNode(turns: (outside: string) => Turn[], uid: number | undefined) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: {
      command,
      files: { 'scripts/notify.js': notify("fs.appendFileSync('OUTSIDE/hook-ran', 'ran\\n');") },
    },
  });
}

describe.each(testUsers)('a trusted hook running node -e ($label)', ({ uid }) => {
  it('a module its code requires, rewritten by a sandboxed command, does not run', async () => {
    expectStoppedAfterChange(
      await runWithInlineNode(
        (outside) =>
          plantTurns([
            {
              tool: {
                name: 'write_file',
                input: {
                  path: 'scripts/notify.js',
                  content: notify(`fs.writeFileSync(${JSON.stringify(`${outside}/escaped`)}, '');`),
                },
              },
            },
          ]),
        uid,
      ),
      { command, ranBefore: 1, changed: 'scripts/notify.js' },
    );
  });

  it('untouched, it runs after every call', async () => {
    expectRanAfterEachCall(await runWithInlineNode(untouchedTurns, uid));
  });
});
