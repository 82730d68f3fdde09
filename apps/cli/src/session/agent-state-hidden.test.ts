// The CLI's own state ($AGENT_HOME: user settings with their env, MCP OAuth tokens, every
// workspace's sessions, checkpoints) is hidden from sandboxed commands like any credential store;
// the user's skills still show through. Real CLI processes, a scripted model, bubblewrap.
//
// The state lives under /var/tmp here, not the usual temp directory: the sandbox gives commands a
// private /tmp, which would hide it whatever the CLI does (a real ~/.agent is not under /tmp).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const secrets = {
  settingsToken: 'settings-env-token-7f3a9c',
  oauthToken: 'oauth-access-token-51be02',
  otherSession: 'words-of-another-workspace-9d1e',
  checkpoint: 'checkpoint-copy-of-a-file-c0ffee',
  trusted: '/a/folder/the/user/trusted',
};

/** A user whose state holds one secret of each kind, and a workspace; under /var/tmp. */
async function setup(layout: 'AGENT_HOME' | 'HOME/.agent') {
  const dir = await mkdtemp('/var/tmp/agent-cli-state-');
  cleanups.push(() => rm(dir, { recursive: true, force: true, maxRetries: 10 }));
  const userHome = join(dir, 'user');
  const state = layout === 'AGENT_HOME' ? join(dir, 'state') : join(userHome, '.agent');
  const workspace = join(dir, 'ws');
  await mkdir(workspace, { recursive: true });
  await mkdir(join(state, 'sessions', 'elsewhere-1234'), { recursive: true });
  await mkdir(join(state, 'checkpoints', 'one', 'blobs'), { recursive: true });
  await mkdir(join(state, 'skills', 'greet', 'scripts'), { recursive: true });
  const write = (path: string, text: string) => writeFile(path, text, { mode: 0o600 });
  await write(
    join(state, 'settings.json'),
    JSON.stringify({ env: { SOME_SETTING: secrets.settingsToken } }),
  );
  await write(
    join(state, 'mcp-tokens.json'),
    JSON.stringify({ server: { tokens: { access_token: secrets.oauthToken } } }),
  );
  await write(join(state, 'sessions', 'elsewhere-1234', 'a.json'), secrets.otherSession);
  await write(join(state, 'checkpoints', 'one', 'blobs', 'b'), secrets.checkpoint);
  await write(join(state, 'trusted-folders.json'), JSON.stringify([secrets.trusted]));
  await writeFile(
    join(state, 'skills', 'greet', 'SKILL.md'),
    '---\nname: greet\ndescription: Says hello with its script.\n---\nRun scripts/hello.sh.\n',
  );
  await writeFile(join(state, 'skills', 'greet', 'scripts', 'hello.sh'), 'echo skill-script-ran\n');
  const env = cleanEnv({ HOME: userHome });
  if (layout === 'AGENT_HOME') env.AGENT_HOME = state;
  else delete env.AGENT_HOME;
  return { dir, state, workspace, env };
}

describe('sandboxed commands cannot read the CLI state', () => {
  it.for(['AGENT_HOME', 'HOME/.agent'] as const)(
    'state in %s: settings, tokens, sessions, checkpoints hidden; skills readable',
    async (layout, context) => {
      skipWithout('bwrap')(context);
      const { dir, state, workspace, env } = await setup(layout);
      // Every way a command could look: by name, by listing, by searching, through /proc.
      const probe = [
        `cat ${state}/settings.json ${state}/mcp-tokens.json ${state}/trusted-folders.json`,
        `cat ${state}/sessions/*/* ${state}/checkpoints/*/blobs/*`,
        `ls -laR ${state}`,
        `grep -rs . ${state}`,
        `cat /proc/1/root${state}/mcp-tokens.json`,
        `tar cf - ${state} | strings`,
        `sh ${state}/skills/greet/scripts/hello.sh`,
      ]
        .map((line) => `${line} >> seen.txt 2>&1`)
        .join('; ');
      const script = await writeScript(dir, [
        { toolCalls: [{ name: 'bash', arguments: { command: probe } }] },
        { text: 'done' },
      ]);
      const run = await runCli(
        [
          '-p',
          'look around',
          '--scripted',
          script,
          '--cwd',
          workspace,
          '--mode',
          'full-access',
          '--sandbox',
          'required',
        ],
        { env },
      );
      expect(run.code, run.stderr).toBe(0);
      const seen = await readFile(join(workspace, 'seen.txt'), 'utf8');
      for (const [kind, value] of Object.entries(secrets))
        expect(seen, `${kind} was readable`).not.toContain(value);
      // The user's skills stay usable by bash.
      expect(seen).toContain('skill-script-ran');
    },
  );
});

describe('the file tools in a workspace that is the home directory', () => {
  it('do not read, list, search or write the credential stores or the CLI state', async () => {
    const { dir, state, env } = await setup('HOME/.agent');
    const home = join(dir, 'user');
    const keys = { ssh: 'ssh-private-key-material-4e1d', aws: 'aws-secret-access-key-88a2' };
    await mkdir(join(home, '.ssh'), { recursive: true });
    await mkdir(join(home, '.aws'), { recursive: true });
    await writeFile(join(home, '.ssh', 'id_ed25519'), `${keys.ssh}\n`);
    await writeFile(join(home, '.aws', 'credentials'), `aws_secret_access_key=${keys.aws}\n`);
    await writeFile(join(home, 'notes.txt'), 'ordinary notes\n');
    const reads = [
      '.ssh/id_ed25519',
      '.aws/credentials',
      '.agent/mcp-tokens.json',
      '.agent/settings.json',
      '.agent/sessions/elsewhere-1234/a.json',
      '.agent/checkpoints/one/blobs/b',
    ].map((path) => ({ name: 'read_file', arguments: { path } }));
    const markers = [...Object.values(keys), ...Object.values(secrets)];
    const script = await writeScript(dir, [
      { toolCalls: reads },
      {
        toolCalls: [
          // The tail of each marker: the pattern itself (in the transcript) holds none whole.
          {
            name: 'search',
            arguments: { pattern: markers.map((marker) => marker.slice(-6)).join('|') },
          },
          { name: 'glob', arguments: { pattern: '**/*' } },
          { name: 'list_files', arguments: { depth: 6 } },
          { name: 'read_file', arguments: { path: 'notes.txt' } },
        ],
      },
      {
        toolCalls: [
          {
            name: 'write_file',
            arguments: {
              path: '.agent/settings.json',
              content: '{"permissions":{"allow":["bash(*)"]}}',
            },
          },
        ],
      },
      { text: 'done' },
    ]);
    const saved = join(dir, 'saved.json');
    const run = await runCli(
      [
        '-p',
        'look',
        '--scripted',
        script,
        '--cwd',
        home,
        '--mode',
        'workspace-write',
        '--save',
        saved,
      ],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    const everything = `${run.stdout}${run.stderr}${await readFile(saved, 'utf8')}`;
    for (const marker of markers) expect(everything, marker).not.toContain(marker);
    expect(run.stderr.split('in a directory the file tools may not touch').length - 1).toBe(7);
    expect(run.stderr).toContain('ordinary notes');
    expect(await readFile(join(state, 'settings.json'), 'utf8')).toContain(secrets.settingsToken);
  });
});
