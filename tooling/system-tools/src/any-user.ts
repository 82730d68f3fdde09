/**
 * Test-only: what a test runs as another user (`setpriv --reuid=65534 …`) must be readable by
 * that user, and a repository is often not: a clone made by `mktemp -d` (mode 0700), a home such
 * as /root. These copy what such a run needs to a folder under /var/tmp that every user can read
 * (the private /tmp of a sandbox hides /tmp, not /var/tmp).
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

/** A folder under /var/tmp every user can enter and read, removed by `dispose`. */
export function anyUserDirectory(prefix: string): { path: string; dispose(): void } {
  const dir = fs.mkdtempSync(path.join('/var/tmp', prefix));
  fs.chmodSync(dir, 0o755);
  return { path: dir, dispose: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Makes everything under `dir` readable (and folders enterable) by every user. */
function openToAll(dir: string): void {
  fs.chmodSync(dir, 0o755);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name);
    if (entry.isDirectory()) openToAll(at);
    else if (entry.isFile()) fs.chmodSync(at, fs.statSync(at).mode | 0o444);
  }
}

/** A copy of the folder `source` (links followed) in `into`, readable by every user; its path. */
export function copyForAnyUser(source: string, into: string): string {
  const target = path.join(into, path.basename(source));
  fs.cpSync(source, target, { recursive: true, dereference: true });
  openToAll(target);
  return target;
}

/**
 * Copies the packages `names` — as `fromDir` resolves them — and every package they need at run
 * time (dependencies and peer dependencies, as each one resolves them) into `into/node_modules`,
 * readable by every user: a script in `into` imports them as a user who cannot enter the
 * repository would. Each package is copied whole but for its own `node_modules`.
 */
export function stagePackagesForAnyUser(
  fromDir: string,
  names: readonly string[],
  into: string,
): void {
  const staged = new Set<string>();
  const stage = (name: string, resolveFrom: string): void => {
    if (staged.has(name)) return;
    const manifest = packageManifest(name, resolveFrom);
    if (manifest === undefined) return;
    staged.add(name);
    const root = path.dirname(manifest);
    const target = path.join(into, 'node_modules', name);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.cpSync(root, target, {
      recursive: true,
      dereference: true,
      filter: (source) => path.relative(root, source).split(path.sep)[0] !== 'node_modules',
    });
    const { dependencies = {}, peerDependencies = {} } = JSON.parse(
      fs.readFileSync(manifest, 'utf8'),
    ) as { dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
    for (const dependency of [...Object.keys(dependencies), ...Object.keys(peerDependencies)])
      stage(dependency, root);
  };
  for (const name of names) stage(name, fromDir);
  openToAll(into);
}

/** The real path of `name`'s package.json as resolved from `fromDir`, or undefined (an optional peer not installed). */
function packageManifest(name: string, fromDir: string): string | undefined {
  const own = path.join(fromDir, 'package.json');
  if (
    fs.existsSync(own) &&
    (JSON.parse(fs.readFileSync(own, 'utf8')) as { name?: string }).name === name
  )
    return fs.realpathSync(own);
  const require = createRequire(own);
  for (const dir of require.resolve.paths(name) ?? []) {
    const candidate = path.join(dir, name, 'package.json');
    if (fs.existsSync(candidate)) return fs.realpathSync(candidate);
  }
  return undefined;
}

/**
 * A copy of the running `node` at `target`, executable by every user; its path. Never a hard
 * link: a test that then chowns the folder (`chown -R 65534 …`) chowned the one inode the link
 * shares with the toolchain's node — after `npm test` as root, the Node binary root runs next was
 * owned by `nobody`, who could replace it. A copy-on-write clone where the file system offers one.
 */
export function nodeForAnyUser(target: string): string {
  fs.copyFileSync(process.execPath, target, fs.constants.COPYFILE_FICLONE);
  fs.chmodSync(target, 0o755);
  return target;
}
