// A trusted hook runs the project's Perl script, which loads its own module
// (`use lib "$FindBin::Bin/lib"; use Helper;`). The script was pinned, the module it `use`s was
// not (a module name is no path): a sandboxed command rewrote `lib/Helper.pm`, and the next hook
// ran it as the user, outside the sandbox. Real CLI, real bubblewrap, real perl.
import { describe, it } from 'vitest';
import type { Turn } from '../testing/messages-server.js';
import { testUsers } from '../testing/test-support.js';
import {
  expectRanAfterEachCall,
  expectStoppedAfterChange,
  hookSessionSuite,
  runHookSession,
  untouchedTurns,
} from '../testing/trusted-hook-session.js';

const cleanups = hookSessionSuite('bwrap');

const helper = (line: string) => `package Helper;\nsub run { ${line} }\n1;\n`;

/** Perl scripts loading `Helper` (in `Tools/Helper.pm` for the qualified name) from a lib folder. */
const scripts: Record<
  string,
  { files: Record<string, string>; module: string; env?: Record<string, string> }
> = {
  'use lib "$FindBin::Bin/lib"; use Helper;': {
    files: {
      'scripts/hooks/check.pl':
        'use strict;\nuse FindBin;\nuse lib "$FindBin::Bin/lib";\nuse Helper;\nHelper::run();\n',
    },
    module: 'scripts/hooks/lib/Helper.pm',
  },
  "use lib 'perl5'; require Tools::Helper;": {
    files: {
      'scripts/hooks/check.pl': "use lib 'perl5';\nrequire Tools::Helper;\nHelper::run();\n",
    },
    module: 'perl5/Tools/Helper.pm',
  },
  // carton's folder, on PERL5LIB by the trusted project's env.
  'PERL5LIB=local/lib/perl5; use Helper;': {
    files: { 'scripts/hooks/check.pl': 'use strict;\nuse Helper;\nHelper::run();\n' },
    module: 'local/lib/perl5/Helper.pm',
    env: { PERL5LIB: 'local/lib/perl5' },
  },
};

const command = 'perl scripts/hooks/check.pl';

function runWithPerlHook(
  setup: { files: Record<string, string>; module: string; env?: Record<string, string> },
  turns: (outside: string) => Turn[],
  uid: number | undefined,
) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: {
      command,
      files: {
        ...setup.files,
        [setup.module]: helper('open(my $f, ">>", "OUTSIDE/hook-ran"); print $f "ran\\n";'),
      },
      ...(setup.env === undefined ? {} : { env: setup.env }),
    },
  });
}

describe.each(testUsers)("a module a trusted Perl hook's script loads ($label)", ({ uid }) => {
  it.each(Object.entries(scripts))(
    '%s: rewritten by a sandboxed command, it does not run',
    async (_what, setup) => {
      expectStoppedAfterChange(
        await runWithPerlHook(
          setup,
          (outside) => [
            { tool: { name: 'list_files', input: { path: '.' } } },
            {
              tool: {
                name: 'write_file',
                input: {
                  path: setup.module,
                  content: helper(`open(my $f, ">", "${outside}/escaped");`),
                },
              },
            },
            { tool: { name: 'list_files', input: { path: '.' } } },
            { text: 'done' },
          ],
          uid,
        ),
        { command, ranBefore: 1, changed: setup.module },
      );
    },
  );

  it('untouched, it runs after every call', async () => {
    const [setup] = Object.values(scripts);
    if (setup === undefined) throw new Error('no script');
    expectRanAfterEachCall(await runWithPerlHook(setup, untouchedTurns, uid));
  });
});
