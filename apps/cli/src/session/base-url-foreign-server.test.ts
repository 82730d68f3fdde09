// A provider's base URL on a loopback port (Ollama, LM Studio, a LiteLLM proxy): while the user's
// server there is not running, any user of the machine can listen on the port and was sent the API
// key and the whole conversation with the first prompt. Real CLI; the other user is `nobody`
// running the system's python3 as the "server" (as root only: only root can be another user).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { appDir, assertBuilt, cleanEnv, runCli } from '../testing/test-support.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});
beforeAll(() => assertBuilt());

const key = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD';

/** The recording server of @agent/tools-mcp's tests, as `uid` (`nobody`): its port, what it got. */
async function nobodysServer(uid = 65_534): Promise<{ port: number; output(): string }> {
  const script = readFileSync(
    join(appDir, '../../packages/tools-mcp/src/__fixtures__/recording-http-server.py'),
    'utf8',
  );
  const child = execFile('python3', ['-c', script, '127.0.0.1'], {
    uid,
    gid: uid,
    env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
  });
  cleanups.push(() => child.kill());
  let output = '';
  child.stdout?.setEncoding('utf8');
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.on('data', (chunk: string) => {
      output += chunk;
      const found = /port (\d+)\n/.exec(output)?.[1];
      if (found !== undefined) resolve(Number(found));
    });
    child.once('exit', (code) => reject(new Error(`python3 exited ${code}: ${output}`)));
  });
  return { port, output: () => output };
}

describe.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
  "a base URL on a port another user's process listens on",
  () => {
    beforeEach(skipWithout('python3'));
    it.each([
      ['OPENAI_BASE_URL', (port: number) => ({ OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` })],
      ['--base-url', () => ({})],
    ])('%s: refused at start, nothing sent', async (source, extra) => {
      const theirs = await nobodysServer();
      const args = ['-p', 'my secret plans', '--cwd', appDir, '--model', 'gpt-5-mini'];
      if (source === '--base-url') args.push('--base-url', `http://127.0.0.1:${theirs.port}/v1`);
      const run = await runCli(args, {
        env: cleanEnv({ OPENAI_API_KEY: key, ...extra(theirs.port) }),
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `${source} points at 127.0.0.1:${theirs.port}, where a process of another user of this machine (uid 65534, nobody) listens`,
      );
      // It answers one request at a time: one of ours now comes after any the CLI sent.
      await fetch(`http://127.0.0.1:${theirs.port}/`, {
        method: 'POST',
        headers: { 'x-end': 'end' },
      });
      await expect.poll(() => theirs.output()).toContain('x-end');
      expect(theirs.output()).not.toContain(key);
      expect(theirs.output()).not.toContain('chat/completions');
    });

    // Ollama's installer runs it as a system account (useradd -r ollama): root made that user for
    // a service, as root made `daemon` (uid 1), so its server is the user's as root's would be.
    it('a system account listening there is no stranger: the request goes to it', async () => {
      const service = await nobodysServer(1);
      const run = await runCli(['-p', 'hello', '--cwd', appDir, '--model', 'gpt-5-mini'], {
        env: cleanEnv({
          OPENAI_API_KEY: key,
          OPENAI_BASE_URL: `http://127.0.0.1:${service.port}/v1`,
        }),
      });
      expect(run.stderr).not.toContain('another user');
      await expect.poll(() => service.output().toLowerCase()).toContain('authorization');
    });
  },
);
