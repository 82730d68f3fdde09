// `agent -p` while the model thinks, with stderr a real terminal (tmux): a wait indicator on
// stderr says it waits — whatever stdin is (a terminal, /dev/null, a pipe) — and stdout (a file or
// a pipe) gets the answer alone. Before, the indicator needed stdin to be a terminal too: a
// script's `agent -p … < /dev/null` or `… | agent -p` sat silent while the model thought.
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { assertBuilt, cleanEnv, cliPath, TmuxSession, tempDir } from '../testing/test-support.js';

const cleanups: (() => void | Promise<void>)[] = [];
beforeAll(() => assertBuilt());
beforeEach(skipWithout('tmux'));
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/**
 * `agent -p` in a terminal, its stdin and stdout as `shape` puts them around `agent` (a shell
 * line), answering after a wait; what the terminal showed while it waited, what stdout got, and
 * the raw bytes of the terminal (script(1)).
 */
async function printRun(
  shape: (agent: string, out: string) => string,
  term = 'xterm-256color',
  extra: string[] = [],
) {
  const dir = await tempDir('agent-print-wait-');
  cleanups.push(dir.dispose);
  const script = join(dir.path, 'script.json');
  await writeFile(script, JSON.stringify({ steps: [{ text: 'The answer.', delayMs: 2500 }] }));
  const out = join(dir.path, 'out.txt');
  const raw = join(dir.path, 'raw.txt');
  const agent = [
    process.execPath,
    cliPath,
    '--scripted',
    script,
    '--cwd',
    dir.path,
    '-p',
    'hello',
    ...extra,
  ]
    .map(quote)
    .join(' ');
  const line = `env TERM=${term} sh -c ${quote(`${shape(agent, quote(out))}; echo "exit=$?"`)}`;
  const tmux = TmuxSession.start(['script', '-q', '-f', raw, '-c', line], {
    cwd: dir.path,
    env: cleanEnv(),
  });
  cleanups.push(() => tmux.kill());
  let seen = '';
  await vi.waitFor(
    () => {
      const screen = tmux.capture();
      if (screen.includes('waiting for the model')) seen = screen;
      expect(screen).toContain('exit=');
    },
    { timeout: 30_000, interval: 50 },
  );
  return {
    seen,
    screen: tmux.capture(),
    out: readFileSync(out, 'utf8'),
    errors: (() => {
      try {
        return readFileSync(`${out}.err`, 'utf8');
      } catch {
        return undefined;
      }
    })(),
    raw: readFileSync(raw, 'utf8'),
  };
}

describe('agent -p waiting for the model, stderr a terminal', () => {
  it.each<[string, (agent: string, out: string) => string]>([
    ['stdin a terminal, stdout a file', (agent, out) => `${agent} > ${out}`],
    [
      'stdin /dev/null, stdout a file (before: nothing shown)',
      (agent, out) => `${agent} < /dev/null > ${out}`,
    ],
    [
      'stdin a pipe, stdout a pipe (before: nothing shown)',
      (agent, out) => `echo context | ${agent} | cat > ${out}`,
    ],
  ])(
    '%s: the wait is shown on the terminal, stdout gets the answer alone',
    async (_label, shape) => {
      const run = await printRun(shape);
      expect(run.seen).toMatch(/waiting for the model \d+\.\ds/);
      expect(run.out).toBe('The answer.\n');
      expect(run.screen).toContain('exit=0');
      // Cleared once the answer came: no trace left on the screen.
      expect(run.screen).not.toContain('waiting for the model');
    },
  );

  it.each(['json', 'stream-json'])(
    '--output-format %s: the wait on the terminal, stdout only JSON lines',
    async (format) => {
      const run = await printRun(
        (agent, out) => `${agent} < /dev/null > ${out}`,
        'xterm-256color',
        ['--output-format', format],
      );
      expect(run.seen).toMatch(/waiting for the model \d+\.\ds/);
      const lines = run.out.trim().split('\n');
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
      expect(run.out).not.toContain('waiting for the model');
      expect(run.out).not.toContain('\u001b');
      expect(run.screen).not.toContain('waiting for the model');
    },
  );

  it('stderr a file: nothing of the indicator reaches it', async () => {
    const run = await printRun((agent, out) => `${agent} < /dev/null > ${out} 2> ${out}.err`);
    expect(run.out).toBe('The answer.\n');
    expect(run.errors).toBeDefined();
    expect(run.errors).not.toContain('waiting for the model');
    expect(run.errors).not.toContain('\u001b[K');
    expect(run.raw).not.toContain('waiting for the model');
  });

  it('TERM=dumb: no indicator drawn', async () => {
    const run = await printRun((agent, out) => `${agent} < /dev/null > ${out}`, 'dumb');
    expect(run.out).toBe('The answer.\n');
    expect(run.raw).not.toContain('waiting for the model');
    expect(run.raw).not.toContain('\u001b[K');
  });
});
