// The toolchain fetch of `npm run demo` / `npm test` on a machine with only Node 20 and npm
// (scripts/toolchain.mjs), run in a real child process with the real npm against a registry on
// 127.0.0.1 that serves a small `node-<platform>-<arch>` package the way registry.npmjs.org does
// (packument, tarball, integrity): the cases a first day meets — /tmp on another filesystem, an
// unwritable HOME, no network, a version not published — each end in a working toolchain or one
// line that says what to do.
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const toolchainModule = fileURLToPath(new URL('../../../scripts/toolchain.mjs', import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), 'toolchain-test-'));
const packageName = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
const version = '24.9.0';

/** A tarball laid out as the registry's node package is: `package/bin/node` and its manifest. */
function nodePackageTarball(): Buffer {
  const source = path.join(work, 'package-source');
  mkdirSync(path.join(source, 'package', 'bin'), { recursive: true });
  writeFileSync(
    path.join(source, 'package', 'package.json'),
    JSON.stringify({ name: packageName, version }),
  );
  writeFileSync(path.join(source, 'package', 'bin', 'node'), '#!/bin/sh\necho fake-node\n', {
    mode: 0o755,
  });
  const tarball = path.join(work, 'node.tgz');
  const packed = spawnSync('tar', ['-czf', tarball, '-C', source, 'package'], { encoding: 'utf8' });
  if (packed.status !== 0) throw new Error(`tar failed: ${packed.stderr}`);
  return readFileSync(tarball);
}

let registry: Server;
let registryUrl = '';
const requests: string[] = [];

beforeAll(async () => {
  const tarball = nodePackageTarball();
  const integrity = `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
  const shasum = createHash('sha1').update(tarball).digest('hex');
  registry = createServer((request, response) => {
    requests.push(request.url ?? '');
    const tarballPath = `/${packageName}/-/${packageName}-${version}.tgz`;
    if (request.url === `/${packageName}`) {
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          name: packageName,
          'dist-tags': { latest: version },
          versions: {
            [version]: {
              name: packageName,
              version,
              dist: { tarball: `${registryUrl}${tarballPath.slice(1)}`, integrity, shasum },
            },
          },
        }),
      );
    } else if (request.url === tarballPath) {
      response.setHeader('content-type', 'application/octet-stream');
      response.end(tarball);
    } else {
      response.statusCode = 404;
      response.setHeader('content-type', 'application/json');
      response.end('{"error":"Not found"}');
    }
  });
  await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
  registryUrl = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise((resolve) => registry.close(resolve));
  rmSync(work, { recursive: true, force: true });
});

interface Fetched {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Calls `ensureNode` in a child process (its own TMPDIR, HOME, npm settings) — never blocking this one's registry. */
function fetchNode(options: { cacheDir: string; env?: NodeJS.ProcessEnv; version?: string }) {
  const script = `
    import { ensureNode, ToolchainError } from ${JSON.stringify(toolchainModule)};
    try {
      console.log(ensureNode({ cacheDir: process.env.TEST_CACHE_DIR, version: process.env.TEST_VERSION }));
    } catch (error) {
      if (!(error instanceof ToolchainError)) throw error;
      console.error('run: ' + error.message);
      process.exit(1);
    }`;
  return new Promise<Fetched>((resolve) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      {
        env: {
          ...process.env,
          npm_config_registry: registryUrl,
          // A cache of this test's own: what is fetched comes from the registry above.
          npm_config_cache: path.join(work, `npm-cache-${requests.length}-${Date.now()}`),
          npm_config_update_notifier: 'false',
          ...options.env,
          TEST_CACHE_DIR: options.cacheDir,
          TEST_VERSION: options.version ?? version,
        },
        encoding: 'utf8',
        // npm on a machine loaded by a whole `npm test` took over a minute once.
        timeout: 100_000,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function freshFolder(name: string): string {
  return mkdtempSync(path.join(work, `${name}-`));
}

describe('ensureNode', () => {
  it('fetches, unpacks and caches the Node package (a second call fetches nothing)', async () => {
    const cacheDir = freshFolder('cache');
    const first = await fetchNode({ cacheDir });
    expect(first.stderr).toContain(`fetching ${packageName}@${version} from the npm registry`);
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toBe(path.join(cacheDir, `node-${version}`, 'bin'));
    expect(readFileSync(path.join(cacheDir, `node-${version}`, 'bin', 'node'), 'utf8')).toContain(
      'fake-node',
    );
    // Nothing staged is left behind: only the finished folder.
    expect(readdirSync(cacheDir)).toEqual([`node-${version}`]);
    const second = await fetchNode({
      cacheDir,
      env: { npm_config_registry: 'http://127.0.0.1:9/' },
    });
    expect(second.code).toBe(0);
    expect(second.stderr).toBe('');
  });

  // Fedora, Arch and Debian 13 mount /tmp as tmpfs: staging there and renaming into a cache on disk
  // failed with EXDEV and a stack trace. /dev/shm is a tmpfs on Linux, the cache here is on disk.
  it('works when TMPDIR is another filesystem than the cache', async (context) => {
    if (!existsSync('/dev/shm')) context.skip('no /dev/shm on this system');
    const tmp = mkdtempSync(path.join('/dev/shm', 'toolchain test tmp '));
    try {
      const cacheDir = freshFolder('cache');
      expect(statSync(tmp).dev).not.toBe(statSync(cacheDir).dev);
      const fetched = await fetchNode({ cacheDir, env: { TMPDIR: tmp } });
      expect(fetched.stderr).not.toContain('EXDEV');
      expect(fetched.code).toBe(0);
      expect(existsSync(path.join(cacheDir, `node-${version}`, 'bin', 'node'))).toBe(true);
      // (Node itself may keep its compile cache there; nothing of the fetch is left.)
      expect(readdirSync(tmp).filter((name) => name.startsWith('agent-'))).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('a folder left by an interrupted run is removed, and the fetch completes', async () => {
    const cacheDir = freshFolder('cache');
    // A process id that is not running (the kernel's pid limit is far below it).
    const leftover = path.join(cacheDir, `node-${version}.partial-99999999`);
    mkdirSync(path.join(leftover, 'node', 'bin'), { recursive: true });
    const fetched = await fetchNode({ cacheDir });
    expect(fetched.code).toBe(0);
    expect(readdirSync(cacheDir)).toEqual([`node-${version}`]);
  });

  it('says in one line that the registry cannot be reached (not that Node is missing)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const fetched = await fetchNode({
      cacheDir: freshFolder('cache'),
      // npm retries a refused connection for about a minute by default; once is enough here.
      env: { npm_config_registry: `http://127.0.0.1:${port}/`, npm_config_fetch_retries: '0' },
    });
    expect(fetched.code).toBe(1);
    const lines = fetched.stderr.trim().split('\n');
    expect(lines.at(-1)).toBe(
      `run: could not reach the npm registry (http://127.0.0.1:${port}/: ECONNREFUSED) to fetch ${packageName}@${version}: check the network, or the proxy (HTTPS_PROXY, npm config get proxy), then run again`,
    );
    expect(fetched.stderr).not.toContain('npm error');
  });

  it('says a version the registry does not have is not there', async () => {
    const fetched = await fetchNode({ cacheDir: freshFolder('cache'), version: '99.1.0' });
    expect(fetched.code).toBe(1);
    expect(fetched.stderr.trim().split('\n').at(-1)).toBe(
      `run: no Node 99.1.0 for ${process.platform}-${process.arch} on the npm registry (${packageName}): install Node ≥ 22 and run again`,
    );
  });

  // An unset or read-only HOME (service accounts, containers): npm's default cache (~/.npm) cannot
  // be written. A path under a regular file cannot be created even by root.
  it("uses a cache inside the toolchain folder when npm's own cannot be written", async () => {
    const blocker = path.join(work, 'a-file');
    writeFileSync(blocker, '');
    const cacheDir = freshFolder('cache');
    const fetched = await fetchNode({
      cacheDir,
      env: { npm_config_cache: path.join(blocker, '.npm') },
    });
    // npm names the deepest folder it tried (…/.npm/_cacache/tmp).
    expect(fetched.stderr).toContain(
      `run: npm cannot write its cache (${path.join(blocker, '.npm')}`,
    );
    expect(fetched.stderr).toContain(`: ENOTDIR; using ${path.join(cacheDir, 'npm-cache')}\n`);
    expect(fetched.code).toBe(0);
    expect(existsSync(path.join(cacheDir, `node-${version}`, 'bin', 'node'))).toBe(true);
  });

  it('names an unwritable toolchain folder and the variable that moves it', async () => {
    const blocker = path.join(work, 'another-file');
    writeFileSync(blocker, '');
    const cacheDir = path.join(blocker, '.cache', 'agent-toolchain');
    const fetched = await fetchNode({ cacheDir, env: { HOME: '' } });
    expect(fetched.code).toBe(1);
    expect(fetched.stderr.trim()).toBe(
      `run: cannot write the toolchain folder ${cacheDir} (ENOTDIR; HOME is not set): set AGENT_TOOLCHAIN_DIR to a folder you can write, e.g. AGENT_TOOLCHAIN_DIR=/var/tmp/agent-toolchain-$(id -u)`,
    );
  });
});
