// Files a project ships for the model's context (AGENTS.md in the root and in folders down to the
// workspace, .agent/agents/*.md) are read by the CLI itself, outside the sandbox: a link out of
// the project — in the repository as cloned, or put there later by a sandboxed command — must not
// bring the user's files into the model's context. Links inside the project keep working.
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, symlink, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';
import { loadAgentDefinitions } from './agents.js';
import { maximumProjectFileBytes, readProjectFile } from './project-file.js';
import { agentsInstructions, maximumProjectInstructionBytes } from './settings.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const secret = 'PRIVATE-KEY-MATERIAL-1f5c';

/** A user home with secrets, and a repository (git) beside it with a subfolder. */
async function setup() {
  const dir = await tempDir('agent-cli-project-links-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const repo = join(dir.path, 'repo');
  const sub = join(repo, 'packages', 'app');
  await mkdir(join(home, '.ssh'), { recursive: true });
  await mkdir(join(repo, '.agent', 'agents'), { recursive: true });
  await mkdir(join(repo, '.git'));
  await mkdir(sub, { recursive: true });
  const key = join(home, '.ssh', 'id_ed25519');
  await writeFile(key, `-----BEGIN OPENSSH PRIVATE KEY-----\n${secret}\n`);
  // A secret that happens to look like an agent file (front matter, then the body).
  const agentShaped = join(home, 'notes.md');
  await writeFile(agentShaped, `---\nname: stolen\ndescription: x\n---\n${secret}\n`);
  return { dir: dir.path, home, repo, sub, key, agentShaped, agentHome: join(home, '.agent') };
}

describe('AGENTS.md that leads out of the project', () => {
  it.each([
    [
      'an absolute link in the root',
      async (t: Awaited<ReturnType<typeof setup>>) => {
        await symlink(t.key, join(t.repo, 'AGENTS.md'));
      },
    ],
    [
      'a relative link in the root',
      async (t: Awaited<ReturnType<typeof setup>>) => {
        await symlink(relative(t.repo, t.key), join(t.repo, 'AGENTS.md'));
      },
    ],
    [
      'a link in a folder on the way to the workspace',
      async (t: Awaited<ReturnType<typeof setup>>) => {
        await symlink(t.key, join(t.sub, 'AGENTS.md'));
      },
    ],
    [
      'a link to a link inside that leads out',
      async (t: Awaited<ReturnType<typeof setup>>) => {
        await symlink(t.key, join(t.repo, 'docs.md'));
        await symlink('docs.md', join(t.repo, 'AGENTS.md'));
      },
    ],
    [
      'a folder on the way that is a link out',
      async (t: Awaited<ReturnType<typeof setup>>) => {
        await writeFile(join(t.home, '.ssh', 'AGENTS.md'), secret);
        await symlink(join(t.home, '.ssh'), join(t.repo, 'packages', 'keys'));
        await symlink(join(t.repo, 'packages', 'keys', 'AGENTS.md'), join(t.sub, 'AGENTS.md'));
      },
    ],
  ])('%s is left out, with a notice', async (_label, plant) => {
    const t = await setup();
    await plant(t);
    const notices: string[] = [];
    const text = await agentsInstructions({ cwd: t.sub, root: t.repo }, t.agentHome, (line) =>
      notices.push(line),
    );
    expect(text).not.toContain(secret);
    expect(notices.join('\n')).toMatch(/AGENTS\.md is not used: it leads outside the project/);
  });

  it('nested AGENTS.md files past the total are left out, each named, outermost kept', async () => {
    const t = await setup();
    // Three 1 MiB files on the way to the workspace: two fit in the 2 MiB total, the third does not.
    const big = 'w'.repeat(maximumProjectFileBytes - 1);
    await writeFile(join(t.repo, 'AGENTS.md'), `root ${big}`.slice(0, maximumProjectFileBytes));
    await writeFile(
      join(t.repo, 'packages', 'AGENTS.md'),
      `mid ${big}`.slice(0, maximumProjectFileBytes / 2),
    );
    await writeFile(join(t.sub, 'AGENTS.md'), `leaf ${big}`.slice(0, maximumProjectFileBytes));
    const notices: string[] = [];
    const text = await agentsInstructions({ cwd: t.sub, root: t.repo }, t.agentHome, (line) =>
      notices.push(line),
    );
    expect(text).toContain('root www');
    expect(text).toContain('mid www');
    expect(text).not.toContain('leaf www');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(maximumProjectInstructionBytes + 1024);
    expect(notices).toEqual([
      `agent: ${join(t.sub, 'AGENTS.md')} is not used: the project's AGENTS.md files would pass ${maximumProjectInstructionBytes} bytes in all`,
    ]);
  });

  it('a FIFO is left out without blocking the start', async () => {
    const t = await setup();
    execFileSync('mkfifo', [join(t.repo, 'AGENTS.md')]);
    const notices: string[] = [];
    const text = await agentsInstructions({ cwd: t.repo, root: t.repo }, t.agentHome, (line) =>
      notices.push(line),
    );
    expect(text).toBe('');
    expect(notices.join('\n')).toContain('it is not a regular file');
  });

  it.each([
    ['a sparse file of 2 GB', 2 * 1024 ** 3],
    ['a file just over the limit', maximumProjectFileBytes + 1],
  ])(
    '%s is left out with a notice naming it; the next folder still counts',
    async (_label, size) => {
      const t = await setup();
      await writeFile(join(t.repo, 'AGENTS.md'), '');
      await truncate(join(t.repo, 'AGENTS.md'), size);
      await writeFile(join(t.sub, 'AGENTS.md'), 'Sub-folder rules.');
      await writeFile(
        join(t.repo, '.agent', 'agents', 'huge.md'),
        `---\nname: huge\ndescription: x\n---\n${'y'.repeat(maximumProjectFileBytes)}`,
      );
      const notices: string[] = [];
      const log = (line: string) => notices.push(line);
      const text = await agentsInstructions({ cwd: t.sub, root: t.repo }, t.agentHome, log);
      expect(text).toContain('Sub-folder rules.');
      expect(text.length).toBeLessThan(10_000);
      expect(notices.join('\n')).toContain(
        `${join(t.repo, 'AGENTS.md')} is not used: it is ${size} bytes, over the ${maximumProjectFileBytes}`,
      );
      expect(await loadAgentDefinitions(t.repo, { home: t.agentHome, log })).toEqual([]);
      expect(notices.join('\n')).toContain('huge.md is not used: it is');
    },
  );

  it('a file of exactly the limit is read whole', async () => {
    const t = await setup();
    await writeFile(join(t.repo, 'AGENTS.md'), 'z'.repeat(maximumProjectFileBytes));
    const read = await readProjectFile(join(t.repo, 'AGENTS.md'), t.repo);
    expect(read.kind === 'read' ? read.text.length : read).toBe(maximumProjectFileBytes);
  });

  it('links inside the project still count (AGENTS.md -> CLAUDE.md), and the user file is read', async () => {
    const t = await setup();
    await writeFile(join(t.repo, 'CLAUDE.md'), 'Use tabs.');
    await symlink('CLAUDE.md', join(t.repo, 'AGENTS.md'));
    await mkdir(t.agentHome);
    await writeFile(join(t.agentHome, 'AGENTS.md'), 'Answer briefly.');
    const text = await agentsInstructions({ cwd: t.repo, root: t.repo }, t.agentHome);
    expect(text).toContain('Use tabs.');
    expect(text).toContain('Answer briefly.');
  });

  it('readProjectFile checks the opened file, not the name: missing, inside, outside', async () => {
    const t = await setup();
    await writeFile(join(t.repo, 'inside.md'), 'fine');
    await symlink(t.key, join(t.repo, 'outside.md'));
    expect(await readProjectFile(join(t.repo, 'none.md'), t.repo)).toEqual({ kind: 'missing' });
    expect(await readProjectFile(join(t.repo, 'inside.md'), t.repo)).toEqual({
      kind: 'read',
      text: 'fine',
    });
    expect(await readProjectFile(join(t.repo, 'outside.md'), t.repo)).toMatchObject({
      kind: 'refused',
    });
  });
});

describe('a project agent file that leads out of the project', () => {
  it('is left out (a secret shaped like an agent file does not become a system prompt)', async () => {
    const t = await setup();
    await symlink(t.agentShaped, join(t.repo, '.agent', 'agents', 'stolen.md'));
    await writeFile(
      join(t.repo, '.agent', 'agents', 'reviewer.md'),
      '---\nname: reviewer\ndescription: Reviews.\nmodel: pricey-model\n---\nReview.\n',
    );
    const notices: string[] = [];
    const agents = await loadAgentDefinitions(t.repo, {
      home: t.agentHome,
      log: (line) => notices.push(line),
    });
    expect(agents.map((agent) => agent.name)).toEqual(['reviewer']);
    expect(JSON.stringify(agents)).not.toContain(secret);
    expect(notices.join('\n')).toMatch(/stolen\.md is not used: it leads outside the project/);
    // Trusted (the default here): the project's agent keeps its model.
    expect(agents[0]?.model).toBe('pricey-model');
  });

  it("in an untrusted folder, a project agent's model is ignored, and said", async () => {
    const t = await setup();
    await writeFile(
      join(t.repo, '.agent', 'agents', 'reviewer.md'),
      '---\nname: reviewer\ndescription: Reviews.\nmodel: pricey-model\n---\nReview.\n',
    );
    const notices: string[] = [];
    const agents = await loadAgentDefinitions(t.repo, {
      home: t.agentHome,
      log: (line) => notices.push(line),
      trusted: false,
    });
    expect(agents[0]?.model).toBeUndefined();
    expect(notices.join('\n')).toContain('chooses the model pricey-model; ignored');
  });
});

describe('through the CLI', () => {
  beforeAll(assertBuilt);

  it("a cloned repository's AGENTS.md -> ~/.ssh/id_ed25519 never reaches the model", async () => {
    const t = await setup();
    await symlink(t.key, join(t.repo, 'AGENTS.md'));
    await writeFile(join(t.sub, 'AGENTS.md'), 'Sub-folder rules.');
    const bodies: string[] = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => {
        bodies.push(body);
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: 'no', type: 'invalid_request_error' } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const { port } = server.address() as AddressInfo;
    const run = await runCli(
      ['-p', 'hi', '--base-url', `http://127.0.0.1:${port}/v1`, '--model', 'm', '--cwd', t.sub],
      { env: cleanEnv({ AGENT_HOME: t.agentHome, OPENAI_API_KEY: 'sk-test' }) },
    );
    expect(bodies.length, run.stderr).toBeGreaterThan(0);
    const sent = bodies.join('\n');
    expect(sent).not.toContain(secret);
    // The rest of the instructions still went (the folder's own AGENTS.md).
    expect(sent).toContain('Sub-folder rules.');
    expect(run.stderr).toContain(`${join(t.repo, 'AGENTS.md')} is not used: it leads outside`);
    expect(await readFile(t.key, 'utf8')).toContain(secret);
  });
});

describe('an AGENTS.md of 2 GB (sparse) through the CLI', () => {
  beforeAll(assertBuilt);

  it('the session starts, the file left out with a notice', async () => {
    const t = await setup();
    await writeFile(join(t.repo, 'AGENTS.md'), '');
    await truncate(join(t.repo, 'AGENTS.md'), 2 * 1024 ** 3);
    const script = join(t.dir, 'script.json');
    await writeFile(script, JSON.stringify({ steps: [{ text: 'started' }] }));
    const run = await runCli(['-p', 'hi', '--scripted', script, '--cwd', t.repo], {
      env: cleanEnv({ AGENT_HOME: t.agentHome }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('started');
    expect(run.stderr).toContain(
      `${join(t.repo, 'AGENTS.md')} is not used: it is 2147483648 bytes`,
    );
  });
});

describe('settings files that are not files', () => {
  beforeAll(assertBuilt);

  /** The CLI in `repo`; SIGKILLed if still running after a minute (a hang must not outlive the test). */
  async function runIn(repo: string, home: string) {
    const script = join(repo, '..', 'script.json');
    await writeFile(script, JSON.stringify({ steps: [{ text: 'done' }] }));
    const { spawn } = await import('node:child_process');
    const { cliPath } = await import('../testing/test-support.js');
    return new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [cliPath, '-p', 'hi', '--scripted', script, '--cwd', repo],
        {
          env: cleanEnv({ AGENT_HOME: home }),
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      child.on('close', (code) => {
        clearTimeout(guard);
        resolve({ code, stderr });
      });
    });
  }

  it.each([
    ['.agent/settings.json', 'a FIFO'],
    ['.agent/settings.local.json', 'a FIFO'],
    ['.mcp.json', 'a FIFO'],
    ['.agent/settings.json', 'a link to /dev/zero'],
    ['.mcp.json', 'a link to /dev/urandom'],
    ['.agent/settings.json', 'a file of 2 MB'],
    ['.mcp.json', 'a link to a key'],
  ])(
    '%s as %s: left out with a warning naming it, quoting nothing (db854d2: a project file never stops the CLI)',
    async (name, kind) => {
      const t = await setup();
      await mkdir(join(t.repo, '.agent'), { recursive: true });
      const file = join(t.repo, name);
      if (kind === 'a FIFO') execFileSync('mkfifo', [file]);
      else if (kind === 'a file of 2 MB') await writeFile(file, ' '.repeat(2 * 1024 * 1024));
      else if (kind === 'a link to a key') await symlink(t.key, file);
      else await symlink(kind.replace('a link to ', ''), file);
      const run = await runIn(t.repo, t.agentHome);
      expect(run.code).toBe(0);
      expect(run.stderr).toContain(file);
      expect(run.stderr).not.toContain(secret);
      expect(run.stderr).not.toContain('BEGIN OPENSSH');
    },
  );
});
