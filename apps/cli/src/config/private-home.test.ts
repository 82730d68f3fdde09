import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  type CliRun,
  cleanEnv,
  cliPath,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

// $AGENT_HOME under a umask that lets others write (a container's 000, some CI images), and a home
// left open by an earlier start: real CLI processes, the modes read from the disk after them.

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function scratch(): Promise<string> {
  const dir = await tempDir('agent-cli-private-home-');
  cleanups.push(dir.dispose);
  return dir.path;
}

/** The CLI under `umask`, with AGENT_HOME=home: a one-answer scripted run in `dir`. */
async function runWithUmask(umask: string, dir: string, home: string): Promise<CliRun> {
  const script = await writeScript(dir, [{ text: 'fine' }]);
  return new Promise((resolve, reject) => {
    const child = spawn(
      'sh',
      [
        '-c',
        `umask ${umask} && exec "$0" "$@"`,
        process.execPath,
        cliPath,
        '--scripted',
        script,
        '-p',
        'hi',
        '--cwd',
        dir,
      ],
      { env: cleanEnv({ AGENT_HOME: home }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const modeOf = (path: string) => fs.lstatSync(path).mode & 0o777;

/** Every folder and file under `root` (itself included) that others may write. */
function writableByOthers(root: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    const stat = fs.lstatSync(path);
    if ((stat.mode & 0o022) !== 0) found.push(`${path} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of fs.readdirSync(path)) visit(join(path, name));
  };
  visit(root);
  return found;
}

/** Whether another user could reach `path`: every folder above it inside `root` lets them in. */
function othersCanReach(root: string, path: string): boolean {
  for (let folder = path; folder.startsWith(root); folder = join(folder, '..'))
    if (folder !== path && (modeOf(folder) & 0o001) === 0) return false;
  return true;
}

describe('$AGENT_HOME under umask 000', () => {
  it('a new home is 0700, and nothing in it that others may write can be reached by them', async () => {
    const dir = await scratch();
    const home = join(dir, 'home', '.agent');
    const run = await runWithUmask('000', dir, home);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('fine\n');
    expect(modeOf(home)).toBe(0o700);
    expect(modeOf(join(home, 'cache', 'compile'))).toBe(0o700);
    // Node's compile cache makes its own folder inside with the umask: behind a 0700 folder.
    const open = writableByOthers(home).map((line) => line.slice(0, line.lastIndexOf(' ')));
    expect(open.filter((path) => othersCanReach(home, path))).toEqual([]);
    // A second start under the same umask finds nothing to make private.
    const again = await runWithUmask('000', dir, home);
    expect(again.stderr).not.toContain('other users could write');
  });

  it.each(['022', '077'])('under umask %s the home is 0700 too', async (umask) => {
    const dir = await scratch();
    const home = join(dir, '.agent');
    expect((await runWithUmask(umask, dir, home)).code).toBe(0);
    expect(modeOf(home)).toBe(0o700);
  });
});

describe('a home left open to other users', () => {
  it('its folders are closed to others at start, and said: the home, cache, cache/compile, sessions', async () => {
    const dir = await scratch();
    const home = join(dir, '.agent');
    fs.mkdirSync(join(home, 'cache', 'compile', 'v0-planted'), { recursive: true });
    fs.mkdirSync(join(home, 'sessions'));
    for (const path of ['', 'cache', 'cache/compile', 'cache/compile/v0-planted', 'sessions'])
      fs.chmodSync(join(home, path), 0o777);
    const run = await runWithUmask('022', dir, home);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`agent: other users could write in ${home}`);
    for (const named of ['cache (was 0777)', 'sessions (was 0777)'])
      expect(run.stderr).toContain(named);
    expect(modeOf(home)).toBe(0o700);
    expect(modeOf(join(home, 'cache'))).toBe(0o700);
    expect(modeOf(join(home, 'cache', 'compile'))).toBe(0o700);
    expect(modeOf(join(home, 'sessions'))).toBe(0o700);
  });

  it('a settings file others may write is refused, left as it is, its hooks never run', async () => {
    const dir = await scratch();
    const home = join(dir, '.agent');
    fs.mkdirSync(home, { mode: 0o700 });
    const ran = join(dir, 'hook-ran');
    fs.writeFileSync(
      join(home, 'settings.json'),
      JSON.stringify({
        hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `touch ${ran}` }] }] },
      }),
    );
    fs.chmodSync(join(home, 'settings.json'), 0o666);
    const run = await runWithUmask('022', dir, home);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `agent: ${join(home, 'settings.json')} may be written by other users (mode 0666)`,
    );
    expect(fs.existsSync(ran)).toBe(false);
    // Never made private after the fact: what others wrote would have become the user's.
    expect(modeOf(join(home, 'settings.json'))).toBe(0o666);
  });

  it('a trust store others may write is left as it is, for its reader to refuse', async () => {
    const dir = await scratch();
    const home = join(dir, '.agent');
    fs.mkdirSync(home, { mode: 0o700 });
    fs.writeFileSync(join(home, 'trusted-folders.json'), '{}');
    fs.chmodSync(join(home, 'trusted-folders.json'), 0o666);
    const run = await runWithUmask('022', dir, home);
    expect(run.code, run.stderr).toBe(0);
    expect(modeOf(join(home, 'trusted-folders.json'))).toBe(0o666);
  });

  it('a home others may only read is left as it is, unsaid', async () => {
    const dir = await scratch();
    const home = join(dir, '.agent');
    fs.mkdirSync(home, { mode: 0o755 });
    fs.chmodSync(home, 0o755);
    const run = await runWithUmask('022', dir, home);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('other users could write');
    expect(modeOf(home)).toBe(0o755);
  });

  it('a home reached through a link is judged at its folder', async () => {
    const dir = await scratch();
    const real = join(dir, 'dotfiles-agent');
    fs.mkdirSync(real);
    fs.chmodSync(real, 0o777);
    fs.symlinkSync(real, join(dir, '.agent'));
    const run = await runWithUmask('022', dir, join(dir, '.agent'));
    expect(run.code, run.stderr).toBe(0);
    expect(modeOf(real)).toBe(0o700);
  });
});

describe('a home with a part another user owns', () => {
  it.each([
    ['its settings file', 'settings.json'],
    ['its sessions folder', 'sessions'],
    ['the home itself', ''],
  ])('%s: refused, naming it; the hooks of those settings never run', async (_name, part) => {
    if (process.getuid?.() !== 0) return expect(process.getuid?.()).not.toBe(0);
    const dir = await scratch();
    const home = join(dir, '.agent');
    fs.mkdirSync(join(home, 'sessions'), { recursive: true });
    const ran = join(dir, 'hook-ran');
    fs.writeFileSync(
      join(home, 'settings.json'),
      JSON.stringify({
        hooks: {
          SessionStart: [{ hooks: [{ type: 'command', command: `touch ${ran}` }] }],
        },
      }),
    );
    fs.chownSync(join(home, part), 65534, 65534);
    const run = await runWithUmask('022', dir, home);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`agent: ${join(home, part)} belongs to uid 65534, not to you`);
    expect(fs.existsSync(ran)).toBe(false);
    expect(run.stdout).toBe('');
  });

  it("root's own files in a home (a sudo that kept HOME) are no refusal", async () => {
    if (process.getuid?.() !== 0) return expect(process.getuid?.()).not.toBe(0);
    const dir = await scratch();
    const home = join(dir, '.agent');
    fs.mkdirSync(join(home, 'sessions'), { recursive: true });
    // Running as root, everything is root's: the run goes on.
    const run = await runWithUmask('022', dir, home);
    expect(run.code, run.stderr).toBe(0);
  });
});

describe('the trust store and MCP tool pins are judged by their readers', () => {
  it('left open by others, they are not made private (and so believed): ignored, said', async () => {
    const dir = await scratch();
    const home = join(dir, 'home');
    const repo = join(dir, 'repo');
    fs.mkdirSync(home, { mode: 0o700 });
    fs.mkdirSync(join(repo, '.agent'), { recursive: true });
    fs.mkdirSync(join(repo, '.git'));
    const ran = join(dir, 'ran');
    fs.writeFileSync(
      join(repo, '.agent', 'settings.json'),
      JSON.stringify({
        hooks: { Stop: [{ hooks: [{ type: 'command', command: `touch ${ran}` }] }] },
      }),
    );
    // What another user could have written while the files were open to them.
    const planted = JSON.stringify({
      version: 1,
      folders: {
        [fs.realpathSync(repo)]: {
          trustedAt: '2026-01-01T00:00:00.000Z',
          recursive: true,
          items: {},
        },
      },
    });
    for (const [name, text] of [
      ['trusted-folders.json', planted],
      ['mcp-tool-pins.json', '{"version":1,"servers":{}}'],
    ] as const) {
      fs.writeFileSync(join(home, name), text);
      fs.chmodSync(join(home, name), 0o666);
    }
    const run = await runWithUmask('022', repo, home);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/trust store: .* may be written by other users: ignored/);
    expect(run.stderr).toContain('is not a trusted folder');
    expect(fs.existsSync(ran)).toBe(false);
    expect(fs.statSync(join(home, 'trusted-folders.json')).mode & 0o777).toBe(0o666);
    expect(fs.statSync(join(home, 'mcp-tool-pins.json')).mode & 0o777).toBe(0o666);
  });
});
