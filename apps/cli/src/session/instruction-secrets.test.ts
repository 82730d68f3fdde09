// A project's AGENTS.md goes into the system prompt of every request, read by the CLI itself with
// no tool call and no question — and was the one text of the project the model reads that was not
// redacted. A repository whose AGENTS.md is a link to the `.env` its README has you fill in (inside
// the project: the link is followed) sent the user's keys with every request, where `read_file
// .env` gives the model `[redacted:NAME]`.
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { messagesServer } from '../testing/messages-server.js';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const providerKey = `sk-ant-api03-${'Zq4_'.repeat(20)}`;
// Short and letters only: a credential by its name alone.
const serviceToken = 'mailerletters';

describe('a project’s instructions (AGENTS.md)', () => {
  it('reach the model with the credentials the CLI holds redacted, in every form', async () => {
    const dir = await tempDir('agent-cli-instruction-secrets-');
    cleanups.push(dir.dispose);
    const workspace = join(dir.path, 'ws');
    const home = join(dir.path, 'home');
    await mkdir(join(workspace, 'app'), { recursive: true });
    await mkdir(home);
    execFileSync('git', ['init', '-q', workspace]);
    await writeFile(
      join(workspace, '.env'),
      `ANTHROPIC_API_KEY=${providerKey}\nMAILER_TOKEN=${serviceToken}\n`,
    );
    await symlink('.env', join(workspace, 'AGENTS.md'));
    // A folder's own AGENTS.md holding the key in base64, as a tool result's is caught.
    await writeFile(
      join(workspace, 'app', 'AGENTS.md'),
      `Use ${Buffer.from(providerKey).toString('base64')} for the staging calls.\n`,
    );
    const server = await messagesServer([{ text: 'done' }], cleanups);
    const saved = join(home, 'saved.json');
    const run = await runCli(
      ['-p', 'go', '--provider', 'anthropic', '--cwd', join(workspace, 'app'), '--save', saved],
      {
        env: cleanEnv({
          AGENT_HOME: home,
          ANTHROPIC_API_KEY: providerKey,
          ANTHROPIC_BASE_URL: server.url,
          MAILER_TOKEN: serviceToken,
        }),
      },
    );
    expect(run.code, run.stderr).toBe(0);
    const sent = server.bodies.join('\n');
    // The instructions were sent: the files were read, with the values replaced.
    expect(sent).toContain('Instructions from');
    expect(sent).toContain('[redacted:ANTHROPIC_API_KEY]');
    expect(sent).toContain('[redacted:MAILER_TOKEN]');
    expect(sent).not.toContain(providerKey);
    expect(sent).not.toContain(Buffer.from(providerKey).toString('base64'));
    expect(sent).not.toContain(serviceToken);
    const file = await readFile(saved, 'utf8').catch(() => '');
    expect(file).not.toContain(providerKey);
  });
});
