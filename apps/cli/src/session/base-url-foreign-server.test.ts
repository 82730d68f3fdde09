// A provider's base URL on a loopback port (Ollama, LM Studio, a LiteLLM proxy): while the user's
// server there is not running, any user of the machine can listen on the port and was sent the API
// key and the whole conversation with the first prompt. Real CLI; the other user is `nobody`
// running the system's python3 as the "server" (as root only: only root can be another user).
import { nobodyUid, recordingServerAs, skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { appDir, assertBuilt, cleanEnv, runCli } from '../testing/test-support.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});
beforeAll(() => assertBuilt());

const key = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD';

/** The recording server as `uid` (`nobody`): its port, what it got; ended after the test. */
async function nobodysServer(uid = nobodyUid) {
  const server = await recordingServerAs(uid);
  cleanups.push(() => server.stop());
  return server;
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
      // Nothing at all: no request, no key.
      expect(await theirs.received()).toBe('');
    });

    // Other spellings of this machine reach the same port: 0.0.0.0 (copied from an OLLAMA_HOST),
    // IPv4-mapped loopback. They were not seen as loopback, and the key went to nobody.
    it.each([
      [
        '0.0.0.0',
        (port: number) => `http://0.0.0.0:${port}/v1`,
        (port: number) => `0.0.0.0:${port}`,
      ],
      [
        '[::ffff:127.0.0.1]',
        (port: number) => `http://[::ffff:127.0.0.1]:${port}/v1`,
        (port: number) => `[::ffff:7f00:1]:${port}`,
      ],
    ])('OPENAI_BASE_URL on %s: refused at start, nothing sent', async (_name, url, shown) => {
      const theirs = await nobodysServer();
      const run = await runCli(
        ['-p', 'my secret plans', '--cwd', appDir, '--model', 'gpt-5-mini'],
        {
          env: cleanEnv({ OPENAI_API_KEY: key, OPENAI_BASE_URL: url(theirs.port) }),
        },
      );
      expect(await theirs.received()).toBe('');
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `OPENAI_BASE_URL points at ${shown(theirs.port)}, where a process of another user of this machine (uid 65534, nobody) listens`,
      );
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
