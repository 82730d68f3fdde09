import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyFixture, processesInGroup, testWorkspace } from './test-helpers.js';

// What a language server (and what it starts: tsserver) sees of the environment, read from
// /proc/<pid>/environ of every process in the server's group: no credential unless passEnv names it.

const key = `sk-proj-${'Ab3'.repeat(16)}`;
const secrets = {
  OPENAI_API_KEY: key,
  MY_SECRET: 'hunter2-but-longer',
  NPM_TOKEN: 'npm-token-value-1234',
  INNOCENT_LOOKING: `ghp_${'A1b2'.repeat(9)}`,
};

async function environments(pid: number): Promise<string[]> {
  const found: string[] = [];
  for (const member of await processesInGroup(pid)) {
    const text = await readFile(`/proc/${member}/environ`, 'utf8').catch(() => undefined);
    if (text !== undefined) found.push(text.split('\0').join('\n'));
  }
  return found;
}

describe('language server environment', () => {
  it.each([
    ['without passEnv', [] as string[]],
    ['with passEnv NPM_TOKEN', ['NPM_TOKEN']],
  ])('servers start without the credentials of their environment (%s)', async (_label, pass) => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir, {
      env: {
        ...process.env,
        PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
        ...secrets,
        ORDINARY_SETTING: 'kept-value',
      },
      passEnv: pass,
    });
    await workspace.hover(path.join(fixture.dir, 'src', 'main.ts'), { line: 3, character: 14 });
    const [server] = await workspace.runningServers();
    if (server === undefined) throw new Error('no server running');
    const seen = await environments(server.pid);
    // The server and tsserver.
    expect(seen.length).toBeGreaterThan(1);
    for (const environment of seen) {
      expect(environment).toContain('ORDINARY_SETTING=kept-value');
      for (const [name, value] of Object.entries(secrets)) {
        if (pass.includes(name)) expect(environment).toContain(`${name}=${value}`);
        else {
          expect(environment).not.toContain(`${name}=`);
          expect(environment).not.toContain(value);
        }
      }
    }
  });
});
