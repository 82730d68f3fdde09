import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostAllowed, startAllowListProxy } from './allow-list-proxy.js';
import { createSandbox, defaultSecretPaths } from './sandbox.js';

describe('hostAllowed', () => {
  it.each([
    ['api.github.com', ['api.github.com'], true],
    ['API.GitHub.com.', ['api.github.com'], true],
    ['evil-api.github.com', ['api.github.com'], false],
    ['raw.githubusercontent.com', ['*.githubusercontent.com'], true],
    ['githubusercontent.com', ['*.githubusercontent.com'], false],
    ['githubusercontent.com.evil.io', ['*.githubusercontent.com'], false],
    ['127.0.0.1', ['127.0.0.1'], true],
    ['127.0.0.2', ['127.0.0.1'], false],
    ['[::1]', ['::1'], true],
    ['localhost', ['127.0.0.1'], false],
  ])('%s against %j → %s', (host, allow, expected) => {
    expect(hostAllowed(host, allow)).toBe(expected);
  });
});

async function ask(socketPath: string, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.write(request);
  });
}

describe('the allow-list proxy', () => {
  it('refuses hosts not on the list, origin-form requests and other schemes with a 403', async () => {
    const proxy = await startAllowListProxy(['example.invalid']);
    try {
      for (const request of [
        'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n',
        'GET http://169.254.169.254/latest/meta-data HTTP/1.1\r\nHost: x\r\n\r\n',
        'GET / HTTP/1.1\r\nHost: example.invalid\r\n\r\n',
        'GET ftp://example.invalid/ HTTP/1.1\r\n\r\n',
        'CONNECT example.invalid:0 HTTP/1.1\r\n\r\n',
      ]) {
        expect(await ask(proxy.socketPath, request)).toMatch(/^HTTP\/1\.1 403 Forbidden/);
      }
    } finally {
      await proxy.close();
    }
  });

  it('does not keep the process alive, and leaves nothing behind when the process exits unclosed', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-exit-'));
    try {
      const entry = new URL('../dist/index.js', import.meta.url).href;
      const script = `
        import { startAllowListProxy } from ${JSON.stringify(entry)};
        // Many proxies nobody closes: one exit handler for all (no listener-leak warning).
        let proxy;
        for (let i = 0; i < 20; i++) proxy = await startAllowListProxy(['example.invalid']);
        console.log(proxy.socketPath);
      `;
      // A proxy nobody closes: the process must still end on its own, well before the timeout.
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        env: { ...process.env, TMPDIR: tmp },
        timeout: 30_000,
      });
      expect(child.stderr).toBe('');
      expect(child.signal).toBeNull();
      expect(child.status).toBe(0);
      expect(child.stdout).toContain(path.join(tmp, 'agent-sandbox-proxy-'));
      expect(fs.readdirSync(tmp)).toEqual([]);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('createSandbox', () => {
  it('rejects an unknown mode', () => {
    expect(() => createSandbox({ mode: 'maybe' as never, writableRoots: ['/tmp'] })).toThrow(
      'sandbox mode must be auto, required or off',
    );
  });

  it('off runs commands as they are, and says so', async () => {
    const sandbox = createSandbox({ mode: 'off', writableRoots: ['/tmp'] });
    const command = { file: 'bash', args: ['-c', 'true'], cwd: '/tmp', env: {} };
    expect(await sandbox.wrap(command)).toBe(command);
    expect(sandbox.describe()).toBe('NOT sandboxed (the sandbox is off)');
  });

  it('hides the usual credential paths by default', () => {
    const paths = defaultSecretPaths('/home/me');
    for (const entry of ['.ssh', '.aws', '.config/gcloud', '.netrc', '.gnupg', '.kube'])
      expect(paths).toContain(`/home/me/${entry}`);
  });
});
