#!/usr/bin/env node
// The release round trip, as a user meets the packages: `changeset version` and `changeset publish`
// on a copy of the repository (a local clone of HEAD plus the built dist folders) to a real
// registry (Verdaccio on 127.0.0.1, started here and stopped after), then, for every published
// package, fresh projects outside the monorepo — one installed with npm, one with pnpm — that
// install what the package's README install line names, type-check the README's `ts example`
// block (moduleResolution nodenext and bundler) and run it. The CLI: `npx @agent/cli demo` (and
// `demo --code-mode`) from that registry. Exits 1 if any step fails, with the step and its output; prints where the time
// went either way.
//
// What makes it cheap (it took 7–8 minutes when each project was installed and compiled in turn):
// the projects install and run their examples a few at a time (ROUND_TRIP_CONCURRENCY, default
// twice the cores: an install mostly waits on the network and the disk); they ask Verdaccio for
// @agent/* alone and take third-party packages from the npm registry through one npm cache and
// pnpm's store, both --prefer-offline, so a later run reads them from disk (registry.mjs); the
// copy gets the workspace's links instead of a second `pnpm install`; one compiler run per module
// resolution checks every example (type-check-examples.mjs); and the ~50,000 installed files are
// deleted in the background. Each phase's wall-clock and CPU time is printed at the end.
import { execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { npmrc, startRegistry } from './registry.mjs';
import { typeCheckExamples } from './type-check-examples.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const keep = process.argv.includes('--keep');
const concurrency = Number(process.env.ROUND_TRIP_CONCURRENCY ?? 2 * availableParallelism());
const onlyNames = process.argv.flatMap((arg, i, all) => (arg === '--only' ? [all[i + 1]] : []));
const work = mkdtempSync(path.join(tmpdir(), 'agent-release-'));
const toolchainCache =
  process.env.AGENT_TOOLCHAIN_DIR ??
  path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'agent-toolchain');
const npmCache = path.join(toolchainCache, 'npm-cache');
const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
const changesetBin = path.join(repo, 'node_modules', '@changesets', 'cli', 'bin.js');
const started = Date.now();
const cpuAtStart = cpuSeconds() ?? 0;

/** Runs a command; resolves with its output, rejects with the command, exit code and output. */
function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...cleanEnv(), ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${command} ${args.join(' ')}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else
        reject(
          new Error(
            `\`${path.basename(command)} ${args.join(' ')}\` exited with ${code ?? signal}\n${output
              .trim()
              .split('\n')
              .slice(-(options.tailLines ?? 40))
              .join('\n')}`,
          ),
        );
    });
  });
}

/** The environment without the workspace's npm/pnpm settings (a consumer is outside the repo). */
function cleanEnv() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|pnpm_|PNPM_)/i.test(key)) continue;
    env[key] = value;
  }
  env.npm_config_update_notifier = 'false';
  env.npm_config_fund = 'false';
  env.npm_config_audit = 'false';
  return env;
}

function publicPackages(root) {
  return ['packages', 'apps']
    .flatMap((group) => {
      const dir = path.join(root, group);
      if (!existsSync(dir)) return [];
      return execFileSync('ls', [dir], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((name) => path.join(dir, name));
    })
    .filter((dir) => existsSync(path.join(dir, 'package.json')))
    .map((dir) => ({
      dir,
      manifest: JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')),
    }))
    .filter(({ manifest }) => manifest.private !== true);
}

/** The README's first install line (`pnpm add …` / `npm install …`): the packages it names. */
export function installLine(readme) {
  for (const block of readme.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
    for (const line of block[1].split('\n')) {
      const match = /^\s*(?:pnpm add|npm install|npm i)\s+(.+?)\s*(?:#.*)?$/.exec(line);
      if (match === null) continue;
      const names = match[1].split(/\s+/).filter((word) => word !== '' && !word.startsWith('-'));
      if (names.length > 0) return names;
    }
  }
  return undefined;
}

/** The README's `ts example` block. */
export function exampleBlock(readme) {
  return /```ts example\n([\s\S]*?)```/.exec(readme)?.[1];
}

/**
 * The workspace links, in the copy: `pnpm publish` resolves each `workspace:` range through the
 * package's `node_modules/<dependency>` link to the sibling package (whose version `changeset
 * version` just set), and reads nothing else of node_modules. Each public package gets the
 * workspace links `pnpm install` made for it in the workspace — relative, so they land on the
 * copy's siblings. (A `pnpm install` in the copy made the same links, plus ~75,000 files of
 * third-party packages to write and then delete: a third of the round trip's time.)
 */
function linkWorkspace(copy) {
  for (const { dir } of publicPackages(repo)) {
    const from = path.join(dir, 'node_modules');
    if (!existsSync(from)) continue;
    const to = path.join(copy, path.relative(repo, dir), 'node_modules');
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      const names = entry.name.startsWith('@')
        ? readdirSync(path.join(from, entry.name)).map((name) => path.join(entry.name, name))
        : [entry.name];
      for (const name of names) {
        const link = path.join(from, name);
        if (!lstatSync(link).isSymbolicLink()) continue;
        const target = readlinkSync(link);
        // A third-party package's link goes into node_modules/.pnpm; a workspace link does not.
        if (path.isAbsolute(target) || target.split(path.sep).includes('node_modules')) continue;
        mkdirSync(path.dirname(path.join(to, name)), { recursive: true });
        symlinkSync(target, path.join(to, name));
      }
    }
  }
}

/**
 * Removes the work directory without waiting for it: the consumer projects hold some 50,000
 * installed files, which a busy disk takes tens of seconds to delete, and nothing needs them gone
 * before the next step. A detached child of its own, so it finishes after this process exits.
 */
function removeInBackground(directory) {
  const remover = spawn(
    process.execPath,
    [
      '-e',
      'require("node:fs").rmSync(process.argv[1], { recursive: true, force: true })',
      directory,
    ],
    { detached: true, stdio: 'ignore' },
  );
  remover.unref();
}

/** Where the time went: each phase's wall-clock time and the CPU time it used, printed at the end. */
const phases = [];
async function phase(name, work) {
  const at = Date.now();
  const cpuAt = cpuSeconds();
  try {
    return await work();
  } finally {
    const cpu = cpuSeconds();
    phases.push(
      `${name} ${seconds(Date.now() - at)}${cpu === undefined || cpuAt === undefined ? '' : ` (cpu ${(cpu - cpuAt).toFixed(1)} s)`}`,
    );
  }
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * CPU seconds used so far by this process and the children it has reaped (Linux: /proc), or
 * undefined elsewhere. On a shared machine the wall clock says more about the neighbours; this
 * says what the round trip itself costs.
 */
function cpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces): utime, stime, cutime, cstime are 14–17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = fields.slice(11, 15).reduce((sum, value) => sum + Number(value), 0);
    return ticks / 100;
  } catch {
    return undefined;
  }
}

/** One consumer project: install with `manager`, run the example (type-checked later, with all the others). */
async function consumer(pkg, manager, registry, versions) {
  const dir = path.join(work, 'consumers', `${pkg.manifest.name.replace(/[@/]/g, '_')}-${manager}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2)}\n`,
  );
  writeFileSync(path.join(dir, '.npmrc'), npmrc(registry.url, registry.token, { scope: '@agent' }));
  const specs = pkg.install.map((name) =>
    versions.has(name) ? `${name}@${versions.get(name)}` : name,
  );
  const timings = {};
  let at = Date.now();
  if (manager === 'npm') {
    await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--cache', npmCache, ...specs],
      { cwd: dir },
    );
  } else {
    await run(
      'pnpm',
      ['add', '--prefer-offline', '--store-dir', pnpmStore, '--reporter=silent', ...specs],
      { cwd: dir },
    );
  }
  timings.install = Date.now() - at;
  const example = path.join(dir, 'example.ts');
  writeFileSync(example, pkg.example);
  at = Date.now();
  await run(process.execPath, ['example.ts'], { cwd: dir, timeoutMs: 120_000 }).catch((error) => {
    throw new Error(`README example: ${error.message}`);
  });
  timings.example = Date.now() - at;
  return { timings, example };
}

/** `npx @agent/cli demo` (and `demo --code-mode`) from the registry, in a directory of its own. */
async function npxDemo(registry, version) {
  const dir = path.join(work, 'npx');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, '.npmrc'), npmrc(registry.url, registry.token, { scope: '@agent' }));
  // A cache of its own: npx runs whatever it installed before for the same spec (`<cache>/_npx`),
  // so with the shared cache a run started the CLI an earlier run published under this version.
  // The CLI is one bundle with no dependencies: nothing else is downloaded again.
  const cache = path.join(dir, 'npm-cache');
  const output = await run(
    'npx',
    ['-y', '--prefer-offline', '--cache', cache, `@agent/cli@${version}`, 'demo'],
    { cwd: dir, env: { AGENT_HOME: path.join(dir, 'home') } },
  );
  if (!/stop reason: completed/.test(output))
    throw new Error(`the demo did not complete:\n${output.slice(-2000)}`);
  // Code mode from the tarball: QuickJS's .wasm must have been packed next to the bundle.
  const codeMode = await run(
    'npx',
    ['-y', '--prefer-offline', '--cache', cache, `@agent/cli@${version}`, 'demo', '--code-mode'],
    { cwd: dir, env: { AGENT_HOME: path.join(dir, 'home') } },
  );
  if (!/stop reason: completed/.test(codeMode) || !/one script made \d+ tool calls/.test(codeMode))
    throw new Error(`the code-mode demo did not complete:\n${codeMode.slice(-2000)}`);
}

async function pool(items, size, worker) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await worker(items[index]);
      }
    }),
  );
  return results;
}

const failures = [];
let registry;
let pnpmStore;
try {
  // 1. A copy: HEAD cloned locally, plus the built packages (dist is not committed).
  const copy = path.join(work, 'repo');
  await phase('copy', async () => {
    execFileSync('git', ['clone', '--quiet', '--local', repo, copy]);
    for (const { dir } of publicPackages(repo)) {
      const dist = path.join(dir, 'dist');
      if (!existsSync(dist))
        throw new Error(`${path.relative(repo, dir)} is not built (no dist/); build first`);
      cpSync(dist, path.join(copy, path.relative(repo, dir), 'dist'), { recursive: true });
    }
    execFileSync('git', ['-C', copy, 'config', 'user.email', 'release@example.invalid']);
    execFileSync('git', ['-C', copy, 'config', 'user.name', 'release round trip']);
  });
  pnpmStore = execFileSync('pnpm', ['store', 'path'], { cwd: repo, encoding: 'utf8' }).trim();
  await phase('workspace links', async () => linkWorkspace(copy));
  // 2. Versions and changelogs from the pending changesets; the registry starts meanwhile.
  const [started, versioned] = await Promise.allSettled([
    phase('registry start', () => startRegistry({ work })),
    phase('changeset version', () =>
      run(process.execPath, [changesetBin, 'version'], { cwd: copy }),
    ),
  ]);
  // Kept before anything can throw, so the `finally` below stops it.
  if (started.status === 'fulfilled') registry = started.value;
  for (const result of [started, versioned]) if (result.status === 'rejected') throw result.reason;
  const packages = publicPackages(copy).filter(
    ({ manifest }) => onlyNames.length === 0 || onlyNames.includes(manifest.name),
  );
  const versions = new Map(packages.map(({ manifest }) => [manifest.name, manifest.version]));
  const changelogs = packages.filter(({ dir }) => existsSync(path.join(dir, 'CHANGELOG.md')));
  console.log(
    `round trip: changeset version → ${[...versions].map(([n, v]) => `${n}@${v}`).join(', ')}; ${changelogs.length} changelog(s) written`,
  );

  // 3. Everything published to the registry.
  writeFileSync(path.join(copy, '.npmrc'), npmrc(registry.url, registry.token));
  await phase('changeset publish', () =>
    run(process.execPath, [changesetBin, 'publish'], {
      cwd: copy,
      env: { npm_config_registry: registry.url },
    }),
  );
  for (const [name, version] of versions) {
    const response = await fetch(`${registry.url}${name.replace('/', '%2f')}`);
    const document = response.ok ? await response.json() : {};
    if (document.versions?.[version] === undefined)
      failures.push(`${name}@${version}: not in the registry after changeset publish`);
  }
  console.log(`round trip: published ${versions.size} package(s) to ${registry.url}`);

  // 4. Each package alone, as its README says, with npm and with pnpm; the CLI with npx.
  const jobs = [];
  if (versions.has('@agent/cli')) jobs.push({ npx: versions.get('@agent/cli') });
  for (const { dir, manifest } of packages) {
    if (manifest.name === '@agent/cli') continue;
    const readme = existsSync(path.join(dir, 'README.md'))
      ? readFileSync(path.join(dir, 'README.md'), 'utf8')
      : '';
    const install = installLine(readme);
    const example = exampleBlock(readme);
    if (install === undefined || example === undefined) {
      failures.push(
        `${manifest.name}: its README needs ${install === undefined ? 'an install line (```sh block with `pnpm add …`)' : ''}${install === undefined && example === undefined ? ' and ' : ''}${example === undefined ? 'a runnable ```ts example block' : ''}`,
      );
      continue;
    }
    if (!install.includes(manifest.name))
      failures.push(
        `${manifest.name}: its README's install line does not install it (${install.join(' ')})`,
      );
    for (const manager of ['npm', 'pnpm'])
      jobs.push({ pkg: { manifest, install, example }, manager });
  }
  const examples = new Map();
  const rows = await phase(`installs and examples (${concurrency} at a time)`, () =>
    pool(jobs, concurrency, async (job) => {
      const at = Date.now();
      if (job.npx !== undefined) {
        try {
          await npxDemo(registry, job.npx);
          return `  ✓ npx @agent/cli demo (${seconds(Date.now() - at)})`;
        } catch (error) {
          failures.push(`npx @agent/cli demo: ${error.message}`);
          return '  ✗ npx @agent/cli demo';
        }
      }
      const label = `${job.pkg.manifest.name} (${job.manager})`;
      try {
        const { timings, example } = await consumer(job.pkg, job.manager, registry, versions);
        examples.set(example, label);
        return `  ✓ ${label}: install ${seconds(timings.install)}, example ${seconds(timings.example)}`;
      } catch (error) {
        failures.push(`${label}: ${error.message}`);
        return `  ✗ ${label}`;
      }
    }),
  );
  for (const row of rows) console.log(row);

  // 5. Every example that installed, type-checked in one compiler run per module resolution.
  if (examples.size > 0) {
    const errors = await phase(`type-check (${examples.size} examples, 2 tsc runs)`, () =>
      typeCheckExamples({
        directory: path.join(work, 'consumers'),
        examples: [...examples.keys()],
        tsc,
        typeRoots: [path.join(repo, 'node_modules', '@types')],
        run: (command, args, options) => run(command, args, { ...options, tailLines: 400 }),
      }),
    );
    for (const [file, messages] of errors)
      failures.push(`${examples.get(file)}: type-check: ${messages.join('\n')}`);
    console.log(
      `  ${errors.size === 0 ? '✓' : '✗'} type-check: ${examples.size} README examples, nodenext and bundler`,
    );
  }
} catch (error) {
  failures.push(error instanceof Error ? error.message : String(error));
} finally {
  await phase('registry stop', async () => registry?.close());
  if (!keep) removeInBackground(work);
}
const total = seconds(Date.now() - started);
const cpu = cpuSeconds();
console.log(
  `round trip: ${phases.join(', ')}${cpu === undefined ? '' : `; cpu ${(cpu - cpuAtStart).toFixed(1)} s in all`}`,
);
if (failures.length > 0) {
  console.error(`round trip FAILED after ${total}:\n${failures.map((f) => `- ${f}`).join('\n')}`);
  process.exit(1);
}
console.log(`round trip passed in ${total}${keep ? ` (kept in ${work})` : ''}`);
