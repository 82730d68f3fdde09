// TIOCSTI pushes characters into a terminal's input as if typed: a sandboxed command holding the
// user's terminal could type into the agent's own prompt (answer a permission question, send a
// message) or, once the CLI exits, into the user's shell. This kernel still allows it
// (`dev.tty.legacy_tiocsti` = 1) to a process whose controlling terminal it is. A sandboxed
// command gets no terminal (its stdin is /dev/null, its output pipes, bubblewrap's `--new-session`
// leaves it without a controlling one, and its /dev/pts is a new instance), so every way to one
// fails. Real terminal (tmux), built CLI, real bubblewrap, scripted model.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt } from '../testing/test-support.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
beforeEach(skipWithout('tmux'));
beforeEach(skipWithout('bwrap'));
afterEach(() => harness.dispose());

/** Types the marker, one character at a time, into every terminal it can open; says how each went in report.txt. */
const injector = String.raw`
use strict;
open(STDOUT, '>', 'report.txt') or die;
my @targets = ('/dev/tty', '/proc/self/fd/0', '/proc/self/fd/1', '/proc/self/fd/2', '/dev/console', '/dev/ptmx', glob('/dev/pts/*'));
for my $target (@targets) {
  my $fh;
  if (!open($fh, '+<', $target)) { print "$target: cannot open ($!)\n"; next }
  my $typed = 0;
  for my $char (split //, "XINJECT" . "EDX\r") { $typed++ if ioctl($fh, 0x5412, $char) }
  print $typed > 0 ? "$target: TYPED\n" : "$target: refused ($!)\n";
}
print "tried\n";
`;

async function startInjecting(args: string[]) {
  const folder = await harness.folder('agent-cli-sandbox-tiocsti-');
  await writeFile(join(folder.workspace, 'inject.pl'), injector);
  const repl = await harness.start({
    ...folder,
    script: {
      steps: [
        { toolCalls: [{ name: 'bash', arguments: { command: 'perl inject.pl' } }] },
        { toolCalls: [{ name: 'write_file', arguments: { path: 'made.txt', content: 'x\n' } }] },
        { text: 'Done here.' },
      ],
    },
    args: ['--allow', 'bash(perl inject.pl)', ...args],
  });
  await repl.waitForPrompt();
  repl.submit('go');
  // The write's question waits for the user: nothing typed by the command answered it.
  await repl.waitForText('Allow write_file');
  await repl.waitForText('[y] once');
  const report = await readFile(join(folder.workspace, 'report.txt'), 'utf8');
  return { repl, report };
}

describe('a sandboxed command and the terminal the CLI runs in (tmux)', () => {
  // Root has CAP_SYS_ADMIN, which TIOCSTI accepts for any terminal it can open (the pane's
  // /dev/pts/N): outside the sandbox the same script types into the agent's prompt.
  it.runIf(process.getuid?.() === 0)(
    'the control: outside the sandbox, root types into the prompt',
    async () => {
      const { repl, report } = await startInjecting(['--sandbox', 'off']);
      expect(report).toContain('TYPED');
      expect(repl.screen()).toContain('steering: XINJECTEDX');
      repl.tmux.press('n');
      await repl.waitForText('Done here.');
    },
  );

  it('cannot type into it: not into the prompt, not into a question', async () => {
    const { repl, report } = await startInjecting([]);
    expect(report).toMatch(/^\/dev\/tty: cannot open \(No such device or address\)$/m);
    expect(report).toContain('tried');
    expect(report).not.toContain('TYPED');
    const screen = repl.screen();
    expect(screen).not.toContain('XINJECTEDX');
    expect(screen).not.toMatch(/→ (always|once|deny|never)/);
    repl.tmux.press('n');
    await repl.waitForText('→ deny');
    await repl.waitForText('Done here.');
    expect(repl.screen()).not.toContain('XINJECTEDX');
  });
});
