// A trusted folder without `.git`, and a session in it with no hook: a sandboxed command makes
// `.git` whose config says `core.fsmonitor = <command>` (the sandbox keeps an existing `.git`
// read-only, not one made where there was none). Nothing pinned it — no hook, no pin — so the
// next session, after a hook that runs git was added (a pull, the user), pinned the planted `.git`
// as the user's and the hook's `git status` ran the command as the user, outside the sandbox.
// Real CLI, real bubblewrap, real git, as root and as nobody.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { messagesServer, type Turn } from '../testing/messages-server.js';
import { cleanEnv, runCli, tempDir, testUsers } from '../testing/test-support.js';
import { hookSessionSuite } from '../testing/trusted-hook-session.js';

const cleanups = hookSessionSuite('bwrap');

const providerKey = `sk-ant-api03-${'xY9_'.repeat(20)}`;
const hookCommand = 'sh scripts/hooks/status.sh';

/** The calls that make `.git` (through a file tool's staged config and sandboxed bash). */
function plantRepository(command: string): Turn[] {
  const config = `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "${command}; false"\n`;
  return [
    { tool: { name: 'write_file', input: { path: 'staged/config', content: config } } },
    {
      tool: {
        name: 'bash',
        input: {
          command:
            "mkdir -p .git/objects .git/refs/heads && echo 'ref: refs/heads/main' > .git/HEAD && cp staged/config .git/config",
        },
      },
    },
    { text: 'done' },
  ];
}

/** A folder without `.git`, its settings with `hooks` [none]; `session` runs `-p` there as `uid`. */
async function folder(uid: number | undefined) {
  const scratch = await tempDir('agent-cli-git-earlier-');
  cleanups.push(scratch.dispose);
  const repo = join(scratch.path, 'repo');
  const home = join(scratch.path, 'home');
  const outside = join(scratch.path, 'outside');
  await mkdir(join(repo, '.agent'), { recursive: true });
  await mkdir(join(repo, 'scripts', 'hooks'), { recursive: true });
  await mkdir(home);
  await mkdir(outside);
  await writeFile(
    join(repo, 'scripts', 'hooks', 'status.sh'),
    `git status --short >/dev/null 2>&1\necho ran >> "${outside}/hook-ran"\n`,
  );
  const settings = (hooks: boolean) =>
    writeFile(
      join(repo, '.agent', 'settings.json'),
      JSON.stringify(
        hooks
          ? { hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: hookCommand }] }] } }
          : {},
      ),
    );
  await settings(false);
  if (uid !== undefined) execFileSync('chown', ['-R', `${uid}:${uid}`, scratch.path]);
  const session = async (turns: Turn[]) => {
    const server = await messagesServer(turns, cleanups);
    return runCli(
      [
        '-p',
        'go',
        '--provider',
        'anthropic',
        '--cwd',
        repo,
        '--trust',
        '--mode',
        'workspace-write',
      ],
      {
        env: cleanEnv({
          ANTHROPIC_API_KEY: providerKey,
          ANTHROPIC_BASE_URL: server.url,
          AGENT_HOME: home,
          ...(uid === undefined ? {} : { HOME: home }),
        }),
        uid,
      },
    );
  };
  const ran = () => readFile(join(outside, 'hook-ran'), 'utf8').catch(() => '');
  return { repo, outside, settings, session, ran };
}

const laterTurns: Turn[] = [
  { tool: { name: 'list_files', input: { path: '.' } } },
  { tool: { name: 'glob', input: { pattern: '*' } } },
  { text: 'done' },
];

describe.each(testUsers)(
  'a .git made in a session without hooks, then a hook that runs git ($label)',
  ({ uid }) => {
    it('the next session does not run the hook, and says why', async () => {
      const { repo, outside, settings, session, ran } = await folder(uid);
      const first = await session(plantRepository(`touch ${join(outside, 'escaped')}`));
      expect(first.code, first.stderr).toBe(0);
      expect(existsSync(join(repo, '.git', 'config')), first.stderr).toBe(true);

      // A pull (or the user) adds a hook whose script runs git.
      await settings(true);
      const later = await session(laterTurns);
      expect(later.code, later.stderr).toBe(0);
      expect(existsSync(join(outside, 'escaped')), 'the planted fsmonitor ran outside').toBe(false);
      expect(await ran()).toBe('');
      expect(later.stderr).toContain(
        `PostToolUse hook "${hookCommand}" did not run: the .git at the project root was made during an earlier session`,
      );
    });

    it('without one made, the added hook runs after every call', async () => {
      const { settings, session, ran } = await folder(uid);
      const first = await session([
        { tool: { name: 'list_files', input: { path: '.' } } },
        { text: 'done' },
      ]);
      expect(first.code, first.stderr).toBe(0);
      await settings(true);
      const later = await session(laterTurns);
      expect(later.code, later.stderr).toBe(0);
      expect(await ran()).toBe('ran\nran\n');
    });
  },
);
