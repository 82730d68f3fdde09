#!/usr/bin/env node
// The release round trip, as a user meets the packages: `changeset version` and `changeset publish`
// on a copy of the repository (a local clone of HEAD plus the built dist folders) to a real
// registry (Verdaccio on 127.0.0.1, started here and stopped after), then, for every published
// package, fresh projects outside the monorepo — one installed with npm, one with pnpm — that
// install what the package's README install line names, type-check the README's `ts example`
// block (moduleResolution nodenext and bundler) and run it. The CLI: `npx @agent/cli demo` from
// that registry. Exits 1 if any step fails, with the step and its output.
//
// Third-party packages come through Verdaccio's uplink to the npm registry (the one `pnpm install`
// uses); pnpm projects share the workspace's store and npm projects a cache under the toolchain
// directory, both --prefer-offline, so a second run reads them from disk.
import { execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const keep = process.argv.includes('--keep');
const concurrency = Number(process.env.ROUND_TRIP_CONCURRENCY ?? 2);
const onlyNames = process.argv.flatMap((arg, i, all) => (arg === '--only' ? [all[i + 1]] : []));
const work = mkdtempSync(path.join(tmpdir(), 'agent-release-'));
const npmCache = path.join(
  process.env.AGENT_TOOLCHAIN_DIR ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'agent-toolchain'),
  'npm-cache',
);
const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
const changesetBin = path.join(repo, 'node_modules', '@changesets', 'cli', 'bin.js');
const started = Date.now();

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
            `\`${path.basename(command)} ${args.join(' ')}\` exited with ${code ?? signal}\n${output.trim().split('\n').slice(-40).join('\n')}`,
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

async function startRegistry() {
  const { runServer } = await import('verdaccio');
  const storage = path.join(work, 'storage');
  mkdirSync(storage, { recursive: true });
  const app = await runServer({
    self_path: path.join(work, 'verdaccio.yaml'),
    storage,
    auth: { htpasswd: { file: path.join(work, 'htpasswd'), max_users: 10 } },
    uplinks: { npmjs: { url: 'https://registry.npmjs.org/', timeout: '60s', maxage: '30m' } },
    packages: {
      '@agent/*': { access: '$all', publish: '$authenticated', unpublish: '$authenticated' },
      '**': { access: '$all', proxy: 'npmjs' },
    },
    log: { type: 'stdout', format: 'pretty', level: 'fatal' },
    web: { enable: false },
    security: { api: { legacy: true } },
  });
  const server = await new Promise((resolve, reject) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    listening.on('error', reject);
  });
  const url = `http://127.0.0.1:${server.address().port}/`;
  const response = await fetch(`${url}-/user/org.couchdb.user:release`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'release', password: 'round-trip-only' }),
  });
  const { token } = await response.json();
  if (typeof token !== 'string') throw new Error(`Verdaccio gave no token (${response.status})`);
  return { url, token, close: () => new Promise((resolve) => server.close(resolve)) };
}

function npmrc(url, token) {
  const host = url.replace(/^http:/, '');
  return `registry=${url}\n${host}:_authToken=${token}\n`;
}

const tsconfigs = {
  nodenext: { module: 'nodenext', moduleResolution: 'nodenext' },
  bundler: { module: 'preserve', moduleResolution: 'bundler' },
};

/** One consumer project: install with `manager`, type-check twice, run the example. */
async function consumer(pkg, manager, registry, versions) {
  const dir = path.join(work, 'consumers', `${pkg.manifest.name.replace(/[@/]/g, '_')}-${manager}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2)}\n`,
  );
  writeFileSync(path.join(dir, '.npmrc'), npmrc(registry.url, registry.token));
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
    const store = execFileSync('pnpm', ['store', 'path'], { cwd: repo, encoding: 'utf8' }).trim();
    await run(
      'pnpm',
      ['add', '--prefer-offline', '--store-dir', store, '--reporter=silent', ...specs],
      { cwd: dir },
    );
  }
  timings.install = Date.now() - at;
  writeFileSync(path.join(dir, 'example.ts'), pkg.example);
  at = Date.now();
  for (const [name, options] of Object.entries(tsconfigs)) {
    const config = {
      compilerOptions: {
        ...options,
        target: 'es2023',
        lib: ['es2023', 'esnext.disposable'],
        strict: true,
        noEmit: true,
        // Declaration files themselves are compiled by the API report check; here, the example against them.
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [path.join(repo, 'node_modules', '@types')],
      },
      files: ['example.ts'],
    };
    writeFileSync(path.join(dir, `tsconfig.${name}.json`), JSON.stringify(config, null, 2));
    await run(process.execPath, [tsc, '-p', `tsconfig.${name}.json`], { cwd: dir }).catch(
      (error) => {
        throw new Error(`type-check (${name}): ${error.message}`);
      },
    );
  }
  timings.typecheck = Date.now() - at;
  at = Date.now();
  const output = await run(process.execPath, ['example.ts'], {
    cwd: dir,
    timeoutMs: 120_000,
  }).catch((error) => {
    throw new Error(`README example: ${error.message}`);
  });
  timings.example = Date.now() - at;
  return { timings, output };
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
try {
  // 1. A copy: HEAD cloned locally, plus the built packages (dist is not committed).
  const copy = path.join(work, 'repo');
  execFileSync('git', ['clone', '--quiet', '--local', repo, copy]);
  for (const { dir } of publicPackages(repo)) {
    const dist = path.join(dir, 'dist');
    if (!existsSync(dist))
      throw new Error(`${path.relative(repo, dir)} is not built (no dist/); build first`);
    cpSync(dist, path.join(copy, path.relative(repo, dir), 'dist'), { recursive: true });
  }
  // pnpm publish resolves `workspace:` ranges through each package's node_modules links.
  await run(
    'pnpm',
    ['install', '--frozen-lockfile', '--prefer-offline', '--ignore-scripts', '--reporter=silent'],
    {
      cwd: copy,
      env: { CI: 'true' },
    },
  );
  execFileSync('git', ['-C', copy, 'config', 'user.email', 'release@example.invalid']);
  execFileSync('git', ['-C', copy, 'config', 'user.name', 'release round trip']);

  // 2. Versions and changelogs from the pending changesets.
  await run(process.execPath, [changesetBin, 'version'], { cwd: copy });
  const packages = publicPackages(copy).filter(
    ({ manifest }) => onlyNames.length === 0 || onlyNames.includes(manifest.name),
  );
  const versions = new Map(packages.map(({ manifest }) => [manifest.name, manifest.version]));
  const changelogs = packages.filter(({ dir }) => existsSync(path.join(dir, 'CHANGELOG.md')));
  console.log(
    `round trip: changeset version → ${[...versions].map(([n, v]) => `${n}@${v}`).join(', ')}; ${changelogs.length} changelog(s) written`,
  );

  // 3. The registry, and everything published to it.
  registry = await startRegistry();
  writeFileSync(path.join(copy, '.npmrc'), npmrc(registry.url, registry.token));
  await run(process.execPath, [changesetBin, 'publish'], {
    cwd: copy,
    env: { npm_config_registry: registry.url },
  });
  for (const [name, version] of versions) {
    const response = await fetch(`${registry.url}${name.replace('/', '%2f')}`);
    const document = response.ok ? await response.json() : {};
    if (document.versions?.[version] === undefined)
      failures.push(`${name}@${version}: not in the registry after changeset publish`);
  }
  console.log(`round trip: published ${versions.size} package(s) to ${registry.url}`);

  // 4. Each package alone, as its README says, with npm and with pnpm.
  const jobs = [];
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
  const rows = await pool(jobs, concurrency, async ({ pkg, manager }) => {
    try {
      const { timings } = await consumer(pkg, manager, registry, versions);
      return `  ✓ ${pkg.manifest.name} (${manager}): install ${timings.install} ms, type-check ${timings.typecheck} ms, example ${timings.example} ms`;
    } catch (error) {
      failures.push(`${pkg.manifest.name} (${manager}): ${error.message}`);
      return `  ✗ ${pkg.manifest.name} (${manager})`;
    }
  });
  for (const row of rows) console.log(row);

  // 5. The CLI straight from the registry.
  if (versions.has('@agent/cli')) {
    const dir = path.join(work, 'npx');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, '.npmrc'), npmrc(registry.url, registry.token));
    try {
      const output = await run(
        'npx',
        [
          '-y',
          '--prefer-offline',
          '--cache',
          npmCache,
          `@agent/cli@${versions.get('@agent/cli')}`,
          'demo',
        ],
        { cwd: dir, env: { AGENT_HOME: path.join(dir, 'home') } },
      );
      if (!/stop reason: completed/.test(output))
        throw new Error(`the demo did not complete:\n${output.slice(-2000)}`);
      console.log('  ✓ npx @agent/cli demo');
    } catch (error) {
      failures.push(`npx @agent/cli demo: ${error.message}`);
      console.log('  ✗ npx @agent/cli demo');
    }
  }
} catch (error) {
  failures.push(error instanceof Error ? error.message : String(error));
} finally {
  await registry?.close();
  if (!keep) rmSync(work, { recursive: true, force: true });
}
const seconds = ((Date.now() - started) / 1000).toFixed(0);
if (failures.length > 0) {
  console.error(
    `round trip FAILED after ${seconds} s:\n${failures.map((f) => `- ${f}`).join('\n')}`,
  );
  process.exit(1);
}
console.log(`round trip passed in ${seconds} s${keep ? ` (kept in ${work})` : ''}`);
