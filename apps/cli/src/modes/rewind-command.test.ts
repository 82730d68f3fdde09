// /rewind in a real terminal (tmux): files only, conversation only, both; and after --resume.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt, cleanEnv } from '../testing/test-support.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
beforeEach(skipWithout('tmux'));
afterEach(() => harness.dispose());

const write = (path: string, content: string) => ({
  name: 'write_file',
  arguments: { path, content },
});

/** Prompt 1 creates notes.txt; prompt 2 changes it and creates new.txt; bash makes bash.txt. */
const steps = [
  { toolCalls: [write('notes.txt', 'version one\n')] },
  { text: 'Created the notes.' },
  {
    toolCalls: [
      { name: 'edit_file', arguments: { path: 'notes.txt', old_string: 'one', new_string: 'two' } },
      write('new.txt', 'brand new\n'),
      { name: 'bash', arguments: { command: 'echo by bash > bash.txt' } },
    ],
  },
  { text: 'Changed the notes.' },
  { text: 'Answer after the rewind.' },
];

async function twoPrompts(prefix: string, extraSteps: unknown[] = []) {
  const folder = await harness.folder(prefix);
  const save = join(folder.dir, 'conversation.json');
  const env = cleanEnv({ AGENT_HOME: join(folder.dir, 'home') });
  const repl = await harness.start({
    ...folder,
    env,
    script: { steps: [...steps, ...extraSteps] },
    args: ['--mode', 'full-access', '--sandbox', 'off', '--save', save],
  });
  await repl.waitForPrompt();
  repl.submit('create the notes');
  await repl.waitForText('Created the notes.');
  await repl.waitForPrompt(2);
  repl.submit('change the notes');
  await repl.waitForText('Changed the notes.');
  await repl.waitForPrompt(3);
  const file = (name: string) => join(folder.workspace, name);
  expect(await readFile(file('notes.txt'), 'utf8')).toBe('version two\n');
  expect(existsSync(file('new.txt'))).toBe(true);
  const saved = async () =>
    JSON.parse(await readFile(save, 'utf8')) as { messages: { role: string; content: unknown }[] };
  return { ...folder, repl, save, env, file, saved };
}

describe('/rewind (tmux)', () => {
  it('lists the prompts, and "code" puts the files back (after --resume too) while the conversation stays', async () => {
    const session = await twoPrompts('agent-cli-rewind-code-');
    session.repl.submit('/exit');
    expect(await session.repl.waitForExit()).toBe(0);

    // A resumed session keeps its checkpoints.
    const repl = await harness.start({
      ...session,
      name: 'resumed',
      script: { steps: [{ text: 'Answer after the rewind.' }] },
      args: [
        '--resume',
        session.save,
        '--save',
        session.save,
        '--mode',
        'full-access',
        '--sandbox',
        'off',
      ],
    });
    await repl.waitForPrompt();
    repl.submit('/rewind');
    await repl.waitForText('Files changed by bash');
    const screen = repl.screen();
    expect(screen).toMatch(/ 1\. \d\d:\d\d {2}create the notes — 2 files changed since/);
    expect(screen).toMatch(/ 2\. \d\d:\d\d {2}change the notes — 2 files changed since/);

    repl.submit('/rewind 2 code');
    await repl.waitForText('put back as they were before prompt 2');
    expect(repl.screen()).toContain('restored notes.txt');
    expect(repl.screen()).toContain('removed new.txt (it did not exist then)');
    expect(await readFile(session.file('notes.txt'), 'utf8')).toBe('version one\n');
    expect(existsSync(session.file('new.txt'))).toBe(false);
    // bash's file is not tracked: it stays.
    expect(await readFile(session.file('bash.txt'), 'utf8')).toBe('by bash\n');
    // The conversation is untouched: both prompts and their answers.
    repl.submit('what now?');
    await repl.waitForText('Answer after the rewind.');
    await repl.waitForPrompt(3);
    const messages = (await session.saved()).messages;
    expect(messages.filter((message) => message.role === 'user')).toHaveLength(3);
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('"conversation" drops the prompt and what followed, puts its text in the input line, and leaves the files', async () => {
    const session = await twoPrompts('agent-cli-rewind-conversation-');
    const { repl } = session;
    repl.submit('/rewind 2 conversation');
    await repl.waitForText('conversation: back to just before prompt 2 (4 messages kept)');
    // The dropped prompt waits in the input line: Enter sends it again.
    await repl.waitForText('> change the notes', 2);
    expect(await readFile(session.file('notes.txt'), 'utf8')).toBe('version two\n');
    expect(existsSync(session.file('new.txt'))).toBe(true);
    const saved = (await session.saved()).messages;
    expect(saved.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'toolResult',
      'assistant',
    ]);
    repl.tmux.press('Enter');
    await repl.waitForText('Answer after the rewind.');
    // The file is written when the run ends, a moment after its answer shows.
    await vi.waitFor(async () => {
      const after = (await session.saved()).messages;
      expect(
        after.filter((message) => message.role === 'user').map((message) => message.content),
      ).toEqual(['create the notes', 'change the notes']);
    });
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('a file changed outside the agent since: nothing is rewound until "force"', async () => {
    const session = await twoPrompts('agent-cli-rewind-outside-');
    const { repl } = session;
    // The user's editor changes the file the agent edited at prompt 2.
    await writeFile(session.file('notes.txt'), 'version two, and my own line\n');
    repl.submit('/rewind 2');
    await repl.waitForText('nothing rewound');
    const screen = repl.screen();
    expect(screen).toContain('notes.txt was changed since the agent last wrote it');
    expect(screen).toContain('/rewind 2 both force overwrites it.');
    expect(screen).not.toContain('conversation: back to');
    // Nothing at all was put back: not the edited file, not the other one, not the conversation.
    expect(await readFile(session.file('notes.txt'), 'utf8')).toBe(
      'version two, and my own line\n',
    );
    expect(existsSync(session.file('new.txt'))).toBe(true);
    const messages = (await session.saved()).messages;
    expect(messages.filter((message) => message.role === 'user')).toHaveLength(2);

    repl.submit('/rewind 2 code force');
    await repl.waitForText('put back as they were before prompt 2');
    expect(await readFile(session.file('notes.txt'), 'utf8')).toBe('version one\n');
    expect(existsSync(session.file('new.txt'))).toBe(false);
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('"both" (the default) goes back to before the first prompt: files and conversation', async () => {
    const session = await twoPrompts('agent-cli-rewind-both-');
    const { repl } = session;
    repl.submit('/rewind 1');
    await repl.waitForText('conversation: back to just before prompt 1 (0 messages kept)');
    const screen = repl.screen();
    expect(screen).toContain('removed notes.txt (it did not exist then)');
    expect(screen).toContain('removed new.txt (it did not exist then)');
    expect(existsSync(session.file('notes.txt'))).toBe(false);
    expect(existsSync(session.file('new.txt'))).toBe(false);
    expect((await session.saved()).messages).toEqual([]);
    repl.tmux.press('C-u');
    repl.submit('/rewind');
    await repl.waitForText('nothing to rewind: no prompt yet');
    repl.submit('/rewind 7');
    await repl.waitForText('no prompt 7; /rewind lists them');
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });
});
