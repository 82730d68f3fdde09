// A trusted hook runs the project's Ruby script, which loads a file of its own by a name that is
// no path (`require_relative 'helper'`, `require 'helper'` from a load path it sets), or runs
// under Bundler, which evaluates the project's Gemfile as Ruby. The script was pinned, what it
// loads was not: a sandboxed command rewrote `helper.rb` (or the Gemfile), and the next hook ran it
// as the user, outside the sandbox. Real CLI, real bubblewrap, real ruby and bundler.
import { describe, it } from 'vitest';
import type { Turn } from '../testing/messages-server.js';
import { testUsers } from '../testing/test-support.js';
import {
  expectRanAfterEachCall,
  expectStoppedAfterChange,
  hookSessionSuite,
  runHookSession,
} from '../testing/trusted-hook-session.js';

const cleanups = hookSessionSuite('bwrap', 'ruby', 'bundle');

/** A helper whose `mark` runs `line` (Ruby). */
const helper = (line: string) => `def mark\n  ${line}\nend\n`;
const appendRan = 'File.open("OUTSIDE/hook-ran", "a") { |f| f.puts "ran" }';
const check = (loads: string) => `${loads}\nmark\n`;

interface Case {
  command: string;
  files: Record<string, string>;
  /** The file a sandboxed command rewrites, and what with (`outside`: where it may not write). */
  rewritten: string;
  rewrite: (outside: string) => string;
  env?: Record<string, string>;
}

const touchEscaped = (outside: string) => `File.write("${outside}/escaped", "")`;

const cases: Record<string, Case> = {
  "require_relative 'helper'": {
    command: 'ruby scripts/hooks/check.rb',
    files: {
      'scripts/hooks/check.rb': check("require_relative 'helper'"),
      'scripts/hooks/helper.rb': helper(appendRan),
    },
    rewritten: 'scripts/hooks/helper.rb',
    rewrite: (outside) => helper(touchEscaped(outside)),
  },
  "$LOAD_PATH.unshift File.expand_path('lib', __dir__); require 'helper'": {
    command: 'ruby scripts/hooks/check.rb',
    files: {
      'scripts/hooks/check.rb': check(
        "$LOAD_PATH.unshift File.expand_path('lib', __dir__)\nrequire 'helper'",
      ),
      'scripts/hooks/lib/helper.rb': helper(appendRan),
    },
    rewritten: 'scripts/hooks/lib/helper.rb',
    rewrite: (outside) => helper(touchEscaped(outside)),
  },
  "RUBYLIB=lib (the project's env); require 'helper'": {
    command: 'ruby scripts/hooks/check.rb',
    files: {
      'scripts/hooks/check.rb': check("require 'helper'"),
      'lib/helper.rb': helper(appendRan),
    },
    rewritten: 'lib/helper.rb',
    rewrite: (outside) => helper(touchEscaped(outside)),
    env: { RUBYLIB: 'lib' },
  },
  "ruby -I lib (the hook's own option); require 'helper'": {
    command: 'ruby -I lib scripts/hooks/check.rb',
    files: {
      'scripts/hooks/check.rb': check("require 'helper'"),
      'lib/helper.rb': helper(appendRan),
    },
    rewritten: 'lib/helper.rb',
    rewrite: (outside) => helper(touchEscaped(outside)),
  },
  'bundle exec: the Gemfile': {
    command: 'bundle exec ruby scripts/hooks/check.rb',
    files: {
      'scripts/hooks/check.rb': `${appendRan}\n`,
      Gemfile: '# no gems\n',
    },
    rewritten: 'Gemfile',
    rewrite: (outside) => `${touchEscaped(outside)}\n`,
  },
};

function runWithRubyHook(setup: Case, turns: (outside: string) => Turn[], uid: number | undefined) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: {
      command: setup.command,
      files: setup.files,
      ...(setup.env === undefined ? {} : { env: setup.env }),
    },
  });
}

describe.each(testUsers)('what a trusted Ruby hook loads ($label)', ({ uid }) => {
  it.each(Object.entries(cases))(
    '%s: rewritten by a sandboxed command, it does not run',
    async (_what, setup) => {
      expectStoppedAfterChange(
        await runWithRubyHook(
          setup,
          (outside) => [
            { tool: { name: 'list_files', input: { path: '.' } } },
            {
              tool: {
                name: 'write_file',
                input: { path: 'staged.rb', content: setup.rewrite(outside) },
              },
            },
            { tool: { name: 'bash', input: { command: `cp staged.rb ${setup.rewritten}` } } },
            { tool: { name: 'list_files', input: { path: '.' } } },
            { text: 'done' },
          ],
          uid,
        ),
        // After list_files and write_file (staged.rb is no file the hook runs).
        { command: setup.command, ranBefore: 2, changed: setup.rewritten },
      );
    },
  );

  it.each(['bundle exec: the Gemfile', "RUBYLIB=lib (the project's env); require 'helper'"])(
    '%s: untouched, it runs after every call',
    async (name) => {
      const setup = cases[name];
      if (setup === undefined) throw new Error(`no case ${name}`);
      expectRanAfterEachCall(
        await runWithRubyHook(
          setup,
          () => [
            { tool: { name: 'list_files', input: { path: '.' } } },
            { tool: { name: 'glob', input: { pattern: '*' } } },
            { text: 'done' },
          ],
          uid,
        ),
      );
    },
  );
});
