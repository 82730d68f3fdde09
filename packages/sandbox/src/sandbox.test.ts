import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostAllowed, startAllowListProxy } from './allow-list-proxy.js';
import { containmentLimitations } from './escape-harness.js';
import { closingShell } from './inherited-descriptors.js';
import { createSandbox } from './sandbox.js';
import { defaultSecretPaths } from './secret-paths.js';

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

  it('rejects an allowUnixSockets entry that is not an absolute path, naming the option', () => {
    for (const entry of ['run/docker.sock', '', 42]) {
      expect(() =>
        createSandbox({
          mode: 'off',
          writableRoots: ['/tmp'],
          allowUnixSockets: [entry as string],
        }),
      ).toThrow(/^sandbox allowUnixSockets: expected absolute paths, got/);
    }
  });
});

describe('a bubblewrap sandbox', () => {
  beforeEach(skipWithout('bwrap'));
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  function workspace(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-unit-'));
    made.push(dir);
    return fs.realpathSync(dir);
  }

  it('shows a launched program (and a script interpreter) that lives under the hidden /tmp', async () => {
    // A toolchain unpacked under a temporary home: node at /tmp/…/node-x/bin/node. In /tmp itself,
    // not TMPDIR: a script's #! line cannot name a path with a space (TMPDIR="/tmp/my tmp").
    const toolchain = fs.realpathSync(fs.mkdtempSync('/tmp/sandbox-unit-'));
    made.push(toolchain);
    const bin = path.join(toolchain, 'node-x', 'bin');
    fs.mkdirSync(bin, { recursive: true });
    const node = path.join(bin, 'node');
    try {
      fs.linkSync(fs.realpathSync(process.execPath), node);
    } catch {
      fs.copyFileSync(process.execPath, node);
      fs.chmodSync(node, 0o755);
    }
    const ws = workspace();
    const script = path.join(ws, 'hello.js');
    fs.writeFileSync(script, `#!${node}\nconsole.log('script ran')\n`, { mode: 0o755 });
    const sandbox = createSandbox({ mode: 'required', writableRoots: [ws] });
    const direct = await run(
      await sandbox.wrap({
        file: node,
        args: ['-e', 'console.log(6 * 7)'],
        cwd: ws,
        env: process.env,
      }),
    );
    expect(direct).toEqual({ stdout: '42\n', code: 0 });
    // By name on PATH, and as the interpreter of a script in the workspace.
    const env = { ...process.env, PATH: `${bin}:/usr/bin:/bin` };
    expect(
      (await run(await sandbox.wrap({ file: 'node', args: ['-p', '1 + 1'], cwd: ws, env }))).stdout,
    ).toBe('2\n');
    expect((await run(await sandbox.wrap({ file: script, args: [], cwd: ws, env }))).stdout).toBe(
      'script ran\n',
    );
    // Only the toolchain shows: the rest of /tmp stays private.
    const other = workspace();
    fs.writeFileSync(path.join(other, 'private.txt'), 'x');
    const listing = await run(
      await sandbox.wrap({
        file: node,
        args: [
          '-e',
          `try { require('fs').readFileSync(${JSON.stringify(path.join(other, 'private.txt'))}); console.log('read') } catch { console.log('hidden') }`,
        ],
        cwd: ws,
        env,
      }),
    );
    expect(listing.stdout).toBe('hidden\n');
  });

  it('says Unix sockets are blocked, or which are allowed', () => {
    const ws = workspace();
    const blocked = createSandbox({ mode: 'required', writableRoots: [ws] });
    expect(blocked.status).toMatchObject({ active: true, unixSockets: 'blocked' });
    expect(containmentLimitations(blocked.status.limitations)).toEqual([]);
    // Then what bounds processes and memory (resource-limits.test.ts).
    expect(blocked.describe()).toMatch(
      `sandboxed (bubblewrap): writes only in ${ws} and a private /tmp; no network; no Unix sockets; `,
    );
    const allowed = createSandbox({
      mode: 'required',
      writableRoots: [ws],
      allowUnixSockets: ['/var/run/docker.sock'],
    });
    expect(allowed.status.unixSockets).toBe('allowed');
    expect(allowed.describe()).toContain('Unix sockets allowed (/var/run/docker.sock)');
  });

  it('starts bwrap through a shell that execs it (one process: group kills and exit codes hold), with a private filter file, closed before the command runs', async () => {
    const ws = workspace();
    // Without the cgroup's launcher in front (resource-limits.test.ts checks that one execs too).
    const sandbox = createSandbox({ mode: 'required', writableRoots: [ws], cgroups: 'off' });
    const wrapped = await sandbox.wrap({
      file: 'sh',
      args: ['-c', 'ls /proc/self/fd; read line'],
      cwd: ws,
      env: process.env,
    });
    // bash wherever there is one (it can close descriptors above 9 and takes --norc -p: see
    // outside-shells.ts); /bin/sh only without bash, and then only with no descriptor to close.
    expect(wrapped.file).toBe(closingShell() ?? '/bin/sh');
    const filterFile = wrapped.args[wrapped.args.indexOf('agent-sandbox') + 1] ?? '';
    expect(fs.statSync(filterFile).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(filterFile)).mode & 0o777).toBe(0o700);
    const child = spawn(wrapped.file, [...wrapped.args], { cwd: wrapped.cwd, env: wrapped.env });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    // Wait for the listing: by then bwrap has exec'd the command, and the sh before it is gone.
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    const commandLine = fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
    // By its real path, found once: never looked up on PATH again (planted-programs.test.ts).
    expect(commandLine[0]).toMatch(/^\/.*\/bwrap$/);
    expect(commandLine[0]).toBe(fs.realpathSync(commandLine[0] ?? ''));
    child.stdin.end('\n');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    // 3 is ls's own directory; the filter's descriptor (9) is not left to the command, nor any
    // this process inherited.
    expect(output.split('\n').filter((line) => line !== '')).toEqual(['0', '1', '2', '3']);
  });

  it('keeps the filters in one directory per user, shared by processes and never leaked; not in one someone else could write', () => {
    const temporary = workspace();
    const uid = process.getuid?.() ?? 0;
    const entry = new URL('../dist/index.js', import.meta.url).href;
    const filterOf = () => {
      const script = `
        import { createSandbox } from ${JSON.stringify(entry)};
        const sandbox = createSandbox({ mode: 'required', writableRoots: [process.cwd()], cgroups: 'off', onWarning: () => {} });
        const wrapped = await sandbox.wrap({ file: 'true', args: [], cwd: process.cwd(), env: {} });
        console.log(wrapped.args[wrapped.args.indexOf('agent-sandbox') + 1]);
      `;
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: temporary,
        env: { ...process.env, TMPDIR: temporary },
        encoding: 'utf8',
      });
      expect(child.stderr).toBe('');
      return child.stdout.trim();
    };
    const shared = path.join(temporary, `agent-sandbox-seccomp-${uid}`);
    const first = filterOf();
    expect(path.dirname(first)).toBe(shared);
    expect(filterOf()).toBe(first);
    expect(fs.statSync(shared).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(temporary)).toEqual([`agent-sandbox-seccomp-${uid}`]);
    // Opened to others (or made by another user first): not trusted, a private one instead.
    fs.chmodSync(shared, 0o777);
    const elsewhere = filterOf();
    expect(path.dirname(elsewhere)).not.toBe(shared);
    expect(fs.existsSync(elsewhere)).toBe(false); // removed when that process exited
  });

  it('looks secrets up per command: one removed since does not break it, one made since is hidden', async () => {
    const ws = workspace();
    const home = workspace();
    fs.writeFileSync(path.join(home, '.netrc'), 'machine x password y');
    fs.mkdirSync(path.join(home, '.ssh'));
    const sandbox = createSandbox({
      mode: 'required',
      writableRoots: [ws],
      secretPaths: [path.join(home, '.netrc'), path.join(home, '.ssh')],
    });
    expect(sandbox.status.hiddenPaths).toEqual([
      path.join(home, '.ssh'),
      path.join(home, '.netrc'),
    ]);
    fs.rmSync(path.join(home, '.netrc'));
    fs.rmSync(path.join(home, '.ssh'), { recursive: true });
    const wrapped = await sandbox.wrap({ file: 'true', args: [], cwd: ws, env: process.env });
    const result = spawnSync(wrapped.file, [...wrapped.args], { cwd: ws, env: wrapped.env });
    expect(result.stderr.toString()).toBe('');
    expect(result.status).toBe(0);
    expect(sandbox.status.hiddenPaths).toEqual([]);
    fs.writeFileSync(path.join(home, '.netrc'), 'machine x password made-later');
    const again = await sandbox.wrap({
      file: 'cat',
      args: [path.join(home, '.netrc')],
      cwd: ws,
      env: process.env,
    });
    const read = spawnSync(again.file, [...again.args], { cwd: ws, env: again.env });
    expect(read.stdout.toString()).toBe('');
    expect(sandbox.status.hiddenPaths).toEqual([path.join(home, '.netrc')]);
  });

  it('explains a refused Unix socket, and a call of another architecture', () => {
    const sandbox = createSandbox({ mode: 'required', writableRoots: [workspace()] });
    for (const output of [
      '2026/11/26 14:31:49 socat[5] E socket(1, 1, 0): Operation not permitted',
      'Error: connect EPERM /var/lib/app/app.sock',
      'dial unix /var/run/docker.sock: socket: operation not permitted',
    ]) {
      expect(sandbox.explainFailure(output)).toContain('cannot open Unix-domain sockets');
    }
    expect(sandbox.explainFailure('bash: line 1:  3 Bad system call  ./a.out')).toContain(
      'another architecture',
    );
    expect(sandbox.explainFailure('all good')).toBeUndefined();
  });

  /** A bwrap that rejects one option, as an older bubblewrap or a stricter kernel would. */
  function bwrapWithout(option: string, message: string): string {
    const file = path.join(workspace(), `bwrap-without${option}`);
    fs.writeFileSync(
      file,
      `#!/bin/sh\nfor a in "$@"; do [ "$a" = "${option}" ] && { echo "${message}" >&2; exit 1; }; done\nexec bwrap "$@"\n`,
      { mode: 0o755 },
    );
    return file;
  }

  it('on a bubblewrap without --disable-userns: the filter still refuses new user namespaces, and the status says so', async () => {
    const ws = workspace();
    const sandbox = createSandbox({
      mode: 'required',
      writableRoots: [ws],
      bwrapPath: bwrapWithout('--disable-userns', 'bwrap: Unknown option --disable-userns'),
      onWarning: () => undefined,
    });
    expect(sandbox.status.unixSockets).toBe('blocked');
    expect(containmentLimitations(sandbox.status.limitations)).toEqual([
      'bubblewrap cannot disable nested user namespaces (bwrap: Unknown option --disable-userns); the seccomp filter refuses them instead',
    ]);
    const wrapped = await sandbox.wrap({
      file: 'sh',
      args: ['-c', 'unshare -Ur true && echo ESCAPED; grep CapEff /proc/self/status'],
      cwd: ws,
      env: process.env,
    });
    const { stdout } = await run(wrapped);
    expect(stdout).not.toContain('ESCAPED');
    expect(stdout).toMatch(/CapEff:\s+0+\n/);
  });

  it('where the filter cannot be loaded: Unix sockets are open, and status, describe and the warning say so', () => {
    const warnings: string[] = [];
    const sandbox = createSandbox({
      mode: 'required',
      writableRoots: [workspace()],
      bwrapPath: bwrapWithout('--seccomp', 'bwrap: prctl(PR_SET_SECCOMP): Invalid argument'),
      onWarning: (message) => warnings.push(message),
    });
    expect(sandbox.status.active).toBe(true);
    expect(sandbox.status.unixSockets).toBe('open');
    expect(containmentLimitations(sandbox.status.limitations)).toEqual([
      expect.stringContaining(
        'the seccomp filter could not be loaded (bwrap: prctl(PR_SET_SECCOMP): Invalid argument)',
      ),
    ]);
    expect(sandbox.describe()).toContain(
      'Unix sockets NOT blocked (the seccomp filter could not be loaded',
    );
    expect(warnings).toEqual([expect.stringContaining('the seccomp filter could not be loaded')]);
  });

  it('with allowHosts where bwrap cannot nest: one bwrap, the proxy still works, and the status says Unix sockets are open', async () => {
    const ws = workspace();
    // A bwrap that refuses to run inside itself, as a kernel does under a container's masked /proc
    // (outside the workspace: a bwrap in a writable root is never used).
    const bwrapPath = path.join(workspace(), 'bwrap-no-nesting');
    fs.writeFileSync(
      bwrapPath,
      '#!/bin/sh\n[ -n "$AGENT_TEST_OUTER_BWRAP" ] && { echo "nested /proc refused (test)" >&2; exit 1; }\nAGENT_TEST_OUTER_BWRAP=1 exec bwrap "$@"\n',
      { mode: 0o755 },
    );
    const server = http.createServer((_request, response) => response.end('through the proxy\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const warnings: string[] = [];
    const sandbox = createSandbox({
      mode: 'required',
      writableRoots: [ws],
      network: { allowHosts: ['127.0.0.1'] },
      bwrapPath,
      onWarning: (message) => warnings.push(message),
    });
    try {
      expect(sandbox.status.unixSockets).toBe('allowed');
      expect(containmentLimitations(sandbox.status.limitations)).toEqual([
        expect.stringContaining(
          'with allowHosts, Unix sockets are not blocked: bubblewrap cannot nest here (nested /proc refused (test))',
        ),
      ]);
      expect(sandbox.describe()).toContain('Unix sockets NOT blocked (with allowHosts');
      expect(warnings).toEqual([expect.stringContaining('cannot enforce everything here')]);
      const wrapped = await sandbox.wrap({
        file: 'sh',
        args: ['-c', `curl -sS -m 10 http://127.0.0.1:${port}/; grep CapEff /proc/self/status`],
        cwd: ws,
        env: process.env,
      });
      const { stdout } = await run(wrapped);
      expect(stdout).toContain('through the proxy');
      expect(stdout).toMatch(/CapEff:\s+0+\n/);
    } finally {
      await sandbox.close();
      server.close();
    }
  });
});

/** Runs a wrapped command without blocking the event loop (the proxy lives in this process). */
function run(command: {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}) {
  return new Promise<{ stdout: string; code: number | null }>((resolve) => {
    const child = spawn(command.file, [...command.args], { cwd: command.cwd, env: command.env });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.on('close', (code) => resolve({ stdout, code }));
  });
}
