// A trusted project sets `"env": { "PYTHONPATH": "lib" }` and its hook runs
// `python3 scripts/hooks/check.py`, which imports its helper module from `lib/`. The script was
// pinned, and the modules it imports beside it and at the root, but not where PYTHONPATH puts
// them: a sandboxed command rewrote `lib/helpers.py` and the next hook ran it as the user,
// outside the sandbox. Real CLI, real bubblewrap, real python3.
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

const command = 'python3 scripts/hooks/check.py';

/** With `pythonPath` in the project's env, or (`inCommand`) set by the hook's own command. */
function runWithPythonPath(
  pythonPath: (repo: string) => string,
  turns: (outside: string) => Turn[],
  uid: number | undefined,
  inCommand = false,
) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: {
      command: inCommand ? `PYTHONPATH=${pythonPath('REPO')} ${command}` : command,
      files: {
        'scripts/hooks/check.py': 'import helpers\nhelpers.run()\n',
        'lib/helpers.py': "def run():\n    open('OUTSIDE/hook-ran', 'a').write('ran\\n')\n",
      },
      ...(inCommand ? {} : { env: { PYTHONPATH: pythonPath('REPO') } }),
    },
  });
}

const rewrite = (outside: string): Turn => ({
  tool: {
    name: 'write_file',
    input: {
      path: 'lib/helpers.py',
      content: `def run():\n    open(${JSON.stringify(`${outside}/escaped`)}, 'w')\n`,
    },
  },
});

describe.each(testUsers)('a module a trusted hook imports from PYTHONPATH ($label)', ({ uid }) => {
  it.each([
    ['lib', () => 'lib'],
    ['./lib:/usr/lib/nothing', () => './lib:/usr/lib/nothing'],
  ])('PYTHONPATH=%s: rewritten by a sandboxed command, it does not run', async (_what, path) => {
    expectStoppedAfterChange(
      await runWithPythonPath(path, (outside) => plantTurns([rewrite(outside)]), uid),
      { command, ranBefore: 1, changed: 'lib/helpers.py' },
    );
  });

  it("PYTHONPATH=lib set by the hook's own command: rewritten, it does not run", async () => {
    expectStoppedAfterChange(
      await runWithPythonPath(
        () => 'lib',
        (outside) => plantTurns([rewrite(outside)]),
        uid,
        true,
      ),
      { command: `PYTHONPATH=lib ${command}`, ranBefore: 1, changed: 'lib/helpers.py' },
    );
  });

  it.each([
    [
      'a shell script',
      'sh scripts/hooks/check.sh',
      { 'scripts/hooks/check.sh': `export PYTHONPATH=lib\n${command}\n` },
    ],
    [
      "a package.json's script",
      'npm run -s check',
      { 'package.json': JSON.stringify({ scripts: { check: `PYTHONPATH=lib ${command}` } }) },
    ],
  ])(
    'PYTHONPATH=lib set by %s the hook runs: rewritten, it does not run',
    async (_what, hook, files) => {
      expectStoppedAfterChange(
        await runHookSession({
          turns: (outside) => plantTurns([rewrite(outside)]),
          cleanups,
          uid,
          setup: {
            command: hook,
            files: {
              ...files,
              'scripts/hooks/check.py': 'import helpers\nhelpers.run()\n',
              'lib/helpers.py': "def run():\n    open('OUTSIDE/hook-ran', 'a').write('ran\\n')\n",
            },
          },
        }),
        { command: hook, ranBefore: 1, changed: 'lib/helpers.py' },
      );
    },
  );

  it('untouched, it runs after every call', async () => {
    expectRanAfterEachCall(await runWithPythonPath(() => 'lib', untouchedTurns, uid));
  });
});
