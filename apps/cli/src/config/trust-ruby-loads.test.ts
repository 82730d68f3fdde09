// A trusted project's hook runs its Ruby script, which loads a file of its own by a name that is
// no path (`require_relative 'helper'`, `require 'helper'` with the settings' RUBYLIB=lib), or
// runs under Bundler, which evaluates the Gemfile. Trust pinned the script, not what it loads: a
// `git pull` that changed the helper (or the Gemfile) ran the new code in the next session,
// unasked. Real CLI (`agent trust`, then `-p`), real ruby and bundler, as root and as nobody.
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, it } from 'vitest';
import { assertBuilt, testUsers } from '../testing/test-support.js';
import { expectPullAsksAgain, trustedRepository } from '../testing/trusted-pull.js';

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

describe.each(testUsers)('a pull changing what a trusted Ruby hook loads ($label)', ({ uid }) => {
  it.each(Object.entries(cases))(
    '%s: the hook is left out, named, its new code not run',
    async (_what, setup) => {
      const repository = await trustedRepository({
        settings: {
          ...(setup.env === undefined ? {} : { env: setup.env }),
          hooks: { Stop: [{ hooks: [{ type: 'command', command: setup.command }] }] },
        },
        files: (dir) => setup.files(dir, 'first'),
        uid,
        cleanups,
      });
      await expectPullAsksAgain(
        repository,
        setup.command,
        setup.changed,
        setup.files(repository.dir, 'second')[setup.changed] ?? '',
      );
    },
  );
});
