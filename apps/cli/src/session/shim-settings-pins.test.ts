// The user runs the CLI with mise's shims on PATH (`mise activate --shims`), and a trusted hook
// runs `node scripts/hooks/check.mjs`: its `node` is mise's shim, which reads the project's
// `.tool-versions` (and mise.toml) for which node to run. `node path:./x` there runs `./x/bin/node`,
// and needs no `mise trust`: a sandboxed command wrote one, and the next hook ran that program
// as the user, outside the sandbox — the hook's own files unchanged. Real CLI, real bubblewrap,
// real mise (where it is installed: no Debian package has it), as root and as nobody.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
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

/** A node every user may run (the tests' own may be under root's home), for mise to link. */
const systemNode = ['/usr/bin/node', '/usr/local/bin/node'].find(
  (path) => spawnSync(path, ['--version'], { stdio: 'ignore' }).status === 0,
);

const command = 'node scripts/hooks/check.mjs';

/** mise's folders in the test's folder (beside the repository), not the user's home. */
const miseEnv = (dir: string) => ({
  MISE_DATA_DIR: join(dir, 'mise', 'data'),
  MISE_STATE_DIR: join(dir, 'mise', 'state'),
  MISE_CACHE_DIR: join(dir, 'mise', 'cache'),
  MISE_CONFIG_DIR: join(dir, 'mise', 'config'),
});

function runWithShims(turns: (outside: string) => Turn[], uid: number | undefined) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: {
      command,
      files: {
        'scripts/hooks/check.mjs':
          "import { appendFileSync } from 'node:fs';\nappendFileSync('OUTSIDE/hook-ran', 'ran\\n');\n",
      },
    },
    // The system's node as mise's only node, used everywhere; its shim made.
    prepare: async (repo) => {
      const env = { ...process.env, ...miseEnv(dirname(repo)) };
      await mkdir(env.MISE_CONFIG_DIR, { recursive: true });
      const mise = (...args: string[]) => execFileSync('mise', args, { env, cwd: dirname(repo) });
      mise('link', 'node@99.0.0', dirname(dirname(systemNode ?? '')));
      mise('use', '-g', 'node@99.0.0');
      mise('reshim');
    },
    path: (repo) =>
      `${join(dirname(repo), 'mise', 'data', 'shims')}${delimiter}${process.env.PATH}`,
    env: miseEnv,
  });
}

describe.each(testUsers)("mise's shims on PATH, a trusted node hook ($label)", ({ uid }) => {
  it.skipIf(systemNode === undefined)(
    'a .tool-versions a sandboxed command wrote (node path:./evil) is not run',
    async (context) => {
      skipWithout('mise')(context);
      expectStoppedAfterChange(
        await runWithShims(
          (outside) =>
            plantTurns([
              {
                tool: {
                  name: 'write_file',
                  input: {
                    path: 'evil/bin/node',
                    content: `#!/bin/sh\ntouch ${outside}/escaped\n`,
                  },
                },
              },
              {
                tool: {
                  name: 'write_file',
                  input: {
                    path: '.tool-versions',
                    content: `node path:${join(dirname(outside), 'repo', 'evil')}\n`,
                  },
                },
              },
              { tool: { name: 'bash', input: { command: 'chmod +x evil/bin/node' } } },
            ]),
          uid,
        ),
        // After list_files and the first write_file (a file no pin names).
        { command, ranBefore: 2, changed: '.tool-versions' },
      );
    },
  );

  it.skipIf(systemNode === undefined)(
    'untouched, the hook runs (through the shim) after every call',
    async (context) => {
      skipWithout('mise')(context);
      expectRanAfterEachCall(await runWithShims(untouchedTurns, uid));
    },
  );
});
