// A trusted project's hook runs its Ruby script, which loads a file of its own by a name that is
// no path (`require_relative 'helper'`, `require 'helper'` with the settings' RUBYLIB=lib), or
// runs under Bundler, which evaluates the Gemfile. Trust pinned the script, not what it loads: a
// `git pull` that changed the helper (or the Gemfile) ran the new code in the next session,
// unasked. Real CLI (`agent trust`, then `-p`), real ruby and bundler, as root and as nobody.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  testUsers,
  writeScript,
} from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
beforeEach(skipWithout('ruby', 'bundle'));
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Ruby that creates `<dir>/<canary>`. */
const touch = (dir: string, canary: string) =>
  `File.write(${JSON.stringify(join(dir, canary))}, "")\n`;

interface Case {
  command: string;
  env?: Record<string, string>;
  /** The files, given the test's folder and a canary name; `changed` is what a pull rewrites. */
  files: (dir: string, canary: string) => Record<string, string>;
  changed: string;
}

const cases: Record<string, Case> = {
  "require_relative 'helper'": {
    command: 'ruby scripts/hooks/check.rb',
    files: (dir, canary) => ({
      'scripts/hooks/check.rb': "require_relative 'helper'\n",
      'scripts/hooks/helper.rb': touch(dir, canary),
    }),
    changed: 'scripts/hooks/helper.rb',
  },
  "the settings' RUBYLIB=lib; require 'helper'": {
    command: 'ruby scripts/hooks/check.rb',
    env: { RUBYLIB: 'lib' },
    files: (dir, canary) => ({
      'scripts/hooks/check.rb': "require 'helper'\n",
      'lib/helper.rb': touch(dir, canary),
    }),
    changed: 'lib/helper.rb',
  },
  'bundle exec: the Gemfile': {
    command: 'bundle exec ruby -e 0',
    files: (dir, canary) => ({ Gemfile: touch(dir, canary) }),
    changed: 'Gemfile',
  },
};

async function put(root: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, name)), { recursive: true });
    await writeFile(join(root, name), text);
  }
}

describe.each(testUsers)('a pull changing what a trusted Ruby hook loads ($label)', ({ uid }) => {
  it.each(Object.entries(cases))(
    '%s: the hook is left out, named, its new code not run',
    async (_what, setup) => {
      const scratch = await tempDir('agent-trust-ruby-');
      cleanups.push(scratch.dispose);
      const dir = scratch.path;
      const home = join(dir, 'home');
      const workspace = join(dir, 'repo');
      await mkdir(join(workspace, '.agent'), { recursive: true });
      await mkdir(home);
      execFileSync('git', ['init', '-q', workspace]);
      await put(workspace, setup.files(dir, 'first'));
      await writeFile(
        join(workspace, '.agent', 'settings.json'),
        JSON.stringify({
          ...(setup.env === undefined ? {} : { env: setup.env }),
          hooks: { Stop: [{ hooks: [{ type: 'command', command: setup.command }] }] },
        }),
      );
      const script = await writeScript(dir, [{ text: 'done' }]);
      if (uid !== undefined) execFileSync('chown', ['-R', `${uid}:${uid}`, dir]);
      // Another user's CLI cannot use this one's home.
      const env = cleanEnv({ AGENT_HOME: home, ...(uid === undefined ? {} : { HOME: home }) });
      const trust = await runCli(['trust', '--cwd', workspace], { env, uid });
      expect(trust.code, trust.stderr).toBe(0);
      const run = () =>
        runCli(['-p', 'go', '--scripted', script, '--cwd', workspace], { env, uid });

      const first = await run();
      expect(first.code, first.stderr).toBe(0);
      // The control: the trusted hook runs, outside the sandbox.
      expect(existsSync(join(dir, 'first')), first.stderr).toBe(true);

      // What a pull does: the loaded file changed, the settings and the script as trusted.
      await writeFile(
        join(workspace, setup.changed),
        setup.files(dir, 'second')[setup.changed] ?? '',
      );
      const changed = await run();
      expect(changed.code, changed.stderr).toBe(0);
      expect(changed.stderr).toContain('changed since it was trusted');
      expect(changed.stderr).toContain(`changed hook Stop runs: ${setup.command}`);
      expect(existsSync(join(dir, 'second')), 'the pulled code ran unasked').toBe(false);
    },
  );
});
