// `agent -p "Erkläre das"` typed in a Latin-1 terminal: the shell passes the byte 0xE4, Node reads
// argv as UTF-8, and the model was sent `Erkl�re das`. The CLI reads the bytes back in the
// locale's set (/proc/self/cmdline), before the credential handover re-executes it. Through the
// real CLI, its arguments made by the shell from raw bytes.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  shellQuoted,
  slowAnswerCommand,
  tempDir,
} from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** `agent -p <bytes>` (octal escapes for printf) under `locale`; the prompt the model was sent. */
async function promptSent(bytes: string, env: Record<string, string>): Promise<string> {
  const dir = await tempDir('agent-locale-args-');
  cleanups.push(dir.dispose);
  const saved = join(dir.path, 'conversation.json');
  const agent = [...(await slowAnswerCommand(dir.path, 'ok', 0)), '--save', saved]
    .map(shellQuoted)
    .join(' ');
  const run = spawnSync('sh', ['-c', `${agent} -p "$(printf '${bytes}')" < /dev/null`], {
    env: cleanEnv({ LANG: '', LC_ALL: '', LC_CTYPE: '', ...env }),
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(run.status, run.stderr).toBe(0);
  const { messages } = JSON.parse(readFileSync(saved, 'utf8')) as {
    messages: { role: string; content: unknown }[];
  };
  const content = messages.find((message) => message.role === 'user')?.content;
  return typeof content === 'string' ? content : JSON.stringify(content);
}

describe.runIf(process.platform === 'linux')('a prompt typed in a Latin-1 terminal', () => {
  it.each([
    ['ISO-8859-1', { LANG: 'de_DE.ISO-8859-1' }],
    // A key in the environment: the CLI re-executes itself (the credential handover) with it.
    [
      'ISO-8859-1, with a key (re-executed)',
      { LANG: 'de_DE.ISO-8859-1', ANTHROPIC_API_KEY: 'sk-ant-test-locale-args' },
    ],
    ['ISO-8859-15 (@euro)', { LC_ALL: 'de_DE@euro' }],
  ] as [string, Record<string, string>][])(
    '%s: the model gets the words typed',
    async (_name, env) => {
      expect(await promptSent('Erkl\\344re das f\\374r 5 \\244', env)).toBe(
        env.LC_ALL === undefined ? 'Erkläre das für 5 ¤' : 'Erkläre das für 5 €',
      );
    },
  );

  it('a UTF-8 locale: UTF-8 as before, and bytes that are not UTF-8 stay U+FFFD', async () => {
    expect(await promptSent('Erkl\\303\\244re', { LANG: 'C.UTF-8' })).toBe('Erkläre');
    expect(await promptSent('Erkl\\344re', { LANG: 'C.UTF-8' })).toBe('Erkl\ufffdre');
  });
});
