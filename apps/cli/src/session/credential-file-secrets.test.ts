// A credential variable may hold where the credential is rather than the credential:
// GOOGLE_APPLICATION_CREDENTIALS names a service account's key file, AWS_WEB_IDENTITY_TOKEN_FILE a
// token. The variable was withheld from the tools, but the file was not: a sandboxed `cat` (or
// read_file) of it gave the key to the model wherever it lay outside the known credential stores.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const privateKey = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7';
const webToken = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlLXZhbHVl';

async function workspaceWithKeyFiles() {
  const dir = await tempDir('agent-cli-credential-files-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  await mkdir(join(workspace, 'keys'), { recursive: true });
  await writeFile(
    join(workspace, 'keys', 'service-account.json'),
    JSON.stringify({ type: 'service_account', private_key: privateKey }),
  );
  await writeFile(join(workspace, 'keys', 'token'), webToken);
  const env = cleanEnv({
    AGENT_HOME: join(dir.path, 'home'),
    GOOGLE_APPLICATION_CREDENTIALS: join(workspace, 'keys', 'service-account.json'),
    // Relative: resolved against the folder the CLI starts in.
    AWS_WEB_IDENTITY_TOKEN_FILE: './keys/token',
  });
  return { dir: dir.path, workspace, env };
}

const reads = [
  { toolCalls: [{ name: 'bash', arguments: { command: 'cat keys/service-account.json' } }] },
  { toolCalls: [{ name: 'bash', arguments: { command: 'cat keys/token' } }] },
  { toolCalls: [{ name: 'read_file', arguments: { path: 'keys/service-account.json' } }] },
  { text: 'done' },
];

describe('files the credential variables name', () => {
  it('are hidden from the tools like the credential stores (sandboxed bash, read_file)', async () => {
    const { dir, workspace, env } = await workspaceWithKeyFiles();
    const script = await writeScript(dir, reads);
    const run = await runCli(
      ['-p', 'go', '--scripted', script, '--allow', 'bash', '--output-format', 'stream-json'],
      { cwd: workspace, env },
    );
    expect(run.code, run.stderr).toBe(0);
    const results = run.stdout
      .split('\n')
      .filter((line) => line.includes('"tool-result"'))
      .join('\n');
    expect(results).toContain('"toolName":"read_file"');
    expect(results).not.toContain(privateKey);
    expect(results).not.toContain(webToken);
  });

  it('stay readable where --pass-env hands the variable to the tools', async () => {
    const { dir, workspace, env } = await workspaceWithKeyFiles();
    const script = await writeScript(dir, reads.slice(0, 1).concat([{ text: 'done' }]));
    const run = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--allow',
        'bash',
        '--pass-env',
        'GOOGLE_APPLICATION_CREDENTIALS',
        '--output-format',
        'stream-json',
      ],
      { cwd: workspace, env },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(privateKey);
  });
});
