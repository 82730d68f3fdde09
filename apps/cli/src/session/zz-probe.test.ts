import { mkdir, readFile, readdir, writeFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { messagesServer, type Turn } from '../testing/messages-server.js';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => { for (const c of cleanups.splice(0)) await c(); });
const providerKey = `sk-ant-api03-Qw7Rt2Yu9Io4Pa6Sd1Fg8Hj3Kl5Zx0Cv7Bn2Mq4We9Rt6Yu1Io3Pa8Sd5Fg0Hj7Kl2Zx9Cv4Bn6Mq1We8`;

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p))); else out.push(p);
  }
  return out;
}

it('probe', async () => {
  const dir = await tempDir('zz-probe-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws'); const home = join(dir.path, 'home');
  await mkdir(workspace); await mkdir(home);
  await writeFile(join(workspace, '.env'), `ANTHROPIC_API_KEY=${providerKey}\nOTHER=1\n`);
  const cmds = (process.env.PROBE_CMDS ?? 'xxd .env|||hexdump -C .env|||od -c .env|||od -tx1 .env|||cut -c20-60 .env|||cat /proc/$PPID/environ /proc/self/environ | tr "\\0" "\\n"').split('|||');
  const turns: Turn[] = cmds.map((command) => ({ tool: { name: 'bash', input: { command } } }));
  const extra = JSON.parse(process.env.PROBE_TURNS ?? '[]') as Turn[];
  turns.push(...extra, { text: 'Done.' });
  const server = await messagesServer(turns, cleanups);
  const saved = join(home, 'saved.json');
  const run = await runCli(['-p', 'go', '--provider', 'anthropic', '--cwd', workspace, '--save', saved, ...(process.env.PROBE_ARGS ?? '--mode full-access').split(' ')], {
    env: cleanEnv({ ANTHROPIC_API_KEY: providerKey, AGENT_HOME: home, ANTHROPIC_BASE_URL: server.url }),
  });
  const sent = server.bodies.join('\n');
  const last = JSON.parse(server.bodies.at(-1) ?? '{}');
  await writeFile('/tmp/s3/last-request.json', JSON.stringify(last, null, 1));
  await writeFile('/tmp/s3/stdout.txt', run.stdout + '\n---stderr---\n' + run.stderr);
  const files = await walk(home);
  const hits: string[] = [];
  const key = providerKey.slice(13);
  const check = (where: string, text: string) => {
    for (let at = 0; at + 10 <= key.length; at += 5) if (text.includes(key.slice(at, at + 10))) { hits.push(`${where}: ${key.slice(at, at + 10)}`); break; }
    const hex = Buffer.from(key).toString('hex');
    for (let at = 0; at + 16 <= hex.length; at += 4) if (text.replace(/[\s:]/g, '').includes(hex.slice(at, at + 16))) { hits.push(`${where} hex`); break; }
  };
  check('sent', sent); check('stdout', run.stdout); check('stderr', run.stderr);
  for (const f of files) check(f, await readFile(f, 'utf8'));
  console.log('FILES', files, 'CODE', run.code, 'HITS', hits);
  expect(hits).toEqual([]);
}, 120_000);
