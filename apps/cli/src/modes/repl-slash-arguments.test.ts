// Slash commands with arguments they cannot use, in a real terminal (tmux): `/save` into a folder
// that is not there (said of that folder, not of a temporary file Node names), and a word after a
// command that reads none (`/clear the tests` cleared the conversation, `/tools bash` listed all),
// and `/save ~/chat.json` (a folder named "~" before).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import { assertBuilt, cleanEnv } from '../testing/test-support.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
beforeEach(skipWithout('tmux'));
afterEach(() => harness.dispose());

describe('/save where it cannot write', () => {
  it('a missing folder, or a file where a folder should be: said of the path asked for', async () => {
    const folder = await harness.folder('agent-slash-save-');
    await writeFile(join(folder.dir, 'plain-file'), 'x');
    const repl = await harness.start({ ...folder, script: { steps: [{ text: 'unused' }] } });
    await repl.waitForPrompt();
    repl.submit('/save missing-folder/chat.json');
    await repl.waitForText(
      `Cannot save the conversation to missing-folder/chat.json: the folder missing-folder does not exist (create it, or save elsewhere)`,
    );
    repl.submit('/save plain-file/chat.json');
    await repl.waitForText(
      'Cannot save the conversation to plain-file/chat.json: a part of the path is not a folder (ENOTDIR)',
    );
    await repl.waitForPrompt(3);
    expect(repl.screen()).not.toContain('.tmp');
    expect(repl.screen()).not.toMatch(/ENOENT: no such file/);
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });
});

describe('/save ~/…', () => {
  it('is under the home, as the shell reads it (was: "the folder ~ does not exist")', async () => {
    const folder = await harness.folder('agent-slash-save-home-');
    const home = join(folder.dir, 'home');
    await mkdir(home);
    const repl = await harness.start({
      ...folder,
      script: { steps: [{ text: 'unused' }] },
      env: cleanEnv({ HOME: home }),
    });
    await repl.waitForPrompt();
    repl.submit('/save ~/chat.json');
    await repl.waitForText(`saved 0 messages to ${join(home, 'chat.json')}`);
    expect(JSON.parse(await readFile(join(home, 'chat.json'), 'utf8'))).toMatchObject({
      messages: [],
    });
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });
});

describe('a word after a command that reads none', () => {
  it.each([
    ['/clear the tests', 'usage: /clear (it takes no arguments; "the tests" was not used)'],
    ['/tools bash', 'usage: /tools (it takes no arguments; "bash" was not used)'],
    ['/cost today', 'usage: /cost (it takes no arguments; "today" was not used)'],
    ['/permissions bash', 'usage: /permissions (it takes no arguments; "bash" was not used)'],
  ])('%s: said, and nothing done', async (line, expected) => {
    const folder = await harness.folder('agent-slash-args-');
    const repl = await harness.start({ ...folder, script: { steps: [{ text: 'First answer.' }] } });
    await repl.waitForPrompt();
    repl.submit('hello');
    await repl.waitForText('First answer.');
    await repl.waitForPrompt(2);
    repl.submit(line);
    await repl.waitForText(expected);
    await repl.waitForPrompt(3);
    expect(repl.screen()).not.toContain('conversation cleared');
    expect(repl.screen()).not.toContain('bash — Runs');
    expect(repl.screen()).not.toContain('input tokens');
    // The conversation is still there: /cost counts its run.
    repl.submit('/cost');
    await repl.waitForText('1 run with scripted');
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });
});
