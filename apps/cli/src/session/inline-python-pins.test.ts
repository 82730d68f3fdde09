// A hook that parses its input with inline Python — `python3 -c "import json, sys; …"`, the usual
// way when jq is missing — runs in the project root, and `-c` puts the folder it runs in first on
// sys.path: a `json.py` a sandboxed command wrote there came before the standard library's, and
// the trusted hook ran it as the user, outside the sandbox. The code of `-c` named no file, so
// nothing was pinned. Real CLI, real bubblewrap, real python3.
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

const cleanups = hookSessionSuite('bwrap', 'python3');

const command = 'python3 -c "import json, sys; json.load(sys.stdin)" && sh scripts/hooks/mark.sh';

function runWithInlinePython(turns: (outside: string) => Turn[], uid: number | undefined) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: { command, files: { 'scripts/hooks/mark.sh': 'echo ran >> "OUTSIDE/hook-ran"\n' } },
  });
}

describe.each(testUsers)('a trusted hook running python3 -c ($label)', ({ uid }) => {
  it('a json.py a sandboxed command wrote at the root does not run', async () => {
    expectStoppedAfterChange(
      await runWithInlinePython(
        (outside) =>
          plantTurns([
            {
              tool: {
                name: 'write_file',
                input: {
                  path: 'json.py',
                  content: `open(${JSON.stringify(`${outside}/escaped`)}, 'w')\ndef load(f):\n    return {}\n`,
                },
              },
            },
          ]),
        uid,
      ),
      { command, ranBefore: 1, changed: 'json.py' },
    );
  });

  it('untouched, it runs after every call', async () => {
    expectRanAfterEachCall(await runWithInlinePython(untouchedTurns, uid));
  });
});
