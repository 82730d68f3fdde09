// Lists the CLI prints outside a session, of text it did not write: `--resume`'s list of saved
// sessions (each one's first message, which may be text piped in from an issue or a file) and
// `agent trust` / `trust list` / `trust revoke` (folder names, a repository's). Both printed
// escape sequences as they were: a title set, the clipboard written, a line erased.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Sequences that act on a terminal, and how each must appear instead. */
const sequences: [label: string, raw: string][] = [
  ['a title (OSC 2)', '\u001b]2;PWNED-TITLE\u0007'],
  ['the clipboard (OSC 52)', '\u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007'],
  ['erase the line (CSI 2K) and back to its start', '\u001b[2K\u001b[1G'],
  ['a carriage return', '\rrewritten'],
  ['a right-to-left override', '\u202egnp.exe'],
  ['an 8-bit CSI (C1)', '\u009b2J'],
];
const everything = sequences.map(([, raw]) => raw).join(' ');

/** Whether `text` holds any character that acts on a terminal (C0 but newline, DEL, C1, bidi). */
function acting(text: string): string[] {
  return [...text]
    .map((char) => char.codePointAt(0) ?? 0)
    .filter(
      (code) =>
        (code < 0x20 && code !== 0x0a) ||
        (code >= 0x7f && code <= 0x9f) ||
        (code >= 0x202a && code <= 0x202e) ||
        (code >= 0x2066 && code <= 0x2069),
    )
    .map((code) => `U+${code.toString(16).padStart(4, '0')}`);
}

describe('lists printed outside a session act on nothing', () => {
  it("--resume's list: a session whose first message was piped in", async () => {
    const dir = await tempDir('agent-cli-list-sessions-');
    cleanups.push(dir.dispose);
    const workspace = join(dir.path, 'ws');
    await mkdir(workspace);
    const env = cleanEnv({ AGENT_HOME: join(dir.path, 'home') });
    const script = await writeScript(dir.path, [{ text: 'ok' }]);
    const run = await runCli(['-p', '--scripted', script], {
      cwd: workspace,
      env,
      input: `fix ${everything} now`,
    });
    expect(run.code, run.stderr).toBe(0);
    const listed = await runCli(['--resume'], { cwd: workspace, env });
    expect(listed.stderr).toContain('Saved sessions of');
    // One line per session: each control character a space.
    expect(listed.stderr).toContain('fix ]2;PWNED-TITLE');
    expect(acting(listed.stderr)).toEqual([]);
  });

  it('agent trust, trust list and trust revoke: a folder named with escapes', async () => {
    const dir = await tempDir('agent-cli-list-trust-');
    cleanups.push(dir.dispose);
    const repo = join(dir.path, `repo ${sequences.map(([, raw]) => raw).join('')}`);
    await mkdir(join(repo, '.git'), { recursive: true });
    const env = cleanEnv({ AGENT_HOME: join(dir.path, 'home') });
    const outputs: string[] = [];
    for (const args of [['trust'], ['trust', 'list'], ['trust', 'revoke']]) {
      const run = await runCli(args, { cwd: repo, env });
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      outputs.push(run.stdout + run.stderr);
    }
    for (const output of outputs) {
      expect(output).toContain('repo \\x1b]2;PWNED-TITLE');
      expect(acting(output)).toEqual([]);
    }
  });
});
