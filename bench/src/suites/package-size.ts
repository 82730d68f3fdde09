/**
 * What users download: for every published package, the tarball `pnpm pack` makes (packed and
 * unpacked) and the install size with its production dependencies and peers (the workspace's
 * packages counted as their tarballs' contents, others as their installed folders), each package
 * counted once.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchSection } from '../types.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Listed {
  name: string;
  version: string;
  path: string;
  dependencies?: Record<string, Listed>;
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += folderBytes(full);
    else if (entry.isFile()) total += statSync(full).size;
  }
  return total;
}

function kb(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(2)} MB`
    : `${(bytes / 1024).toFixed(0)} kB`;
}

const packed = new Map<string, { packed: number; unpacked: number }>();

function packSize(dir: string, out: string): { packed: number; unpacked: number } {
  const cached = packed.get(dir);
  if (cached !== undefined) return cached;
  const before = new Set(readdirSync(out));
  execFileSync('pnpm', ['pack', '--pack-destination', out], { cwd: dir, stdio: 'ignore' });
  const tarball = readdirSync(out).find((name) => !before.has(name) && name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`pnpm pack made nothing in ${dir}`);
  const file = path.join(out, tarball);
  const listing = execFileSync('tar', ['-tzvf', file], { encoding: 'utf8' });
  let unpacked = 0;
  for (const line of listing.split('\n')) {
    const size = Number(line.trim().split(/\s+/)[2]);
    if (Number.isFinite(size)) unpacked += size;
  }
  const result = { packed: statSync(file).size, unpacked };
  packed.set(dir, result);
  return result;
}

export async function run(): Promise<BenchSection> {
  const out = mkdtempSync(path.join(tmpdir(), 'agent-pack-'));
  const rows: string[][] = [];
  try {
    const dirs = [
      ...readdirSync(path.join(repo, 'packages')).map((name) => path.join(repo, 'packages', name)),
      path.join(repo, 'apps', 'cli'),
    ];
    for (const dir of dirs) {
      const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        name: string;
        private?: boolean;
        peerDependencies?: Record<string, string>;
      };
      if (manifest.private === true) continue;
      const own = packSize(dir, out);
      const listed = JSON.parse(
        execFileSync('pnpm', ['list', '--prod', '--depth', 'Infinity', '--json'], {
          cwd: dir,
          encoding: 'utf8',
        }),
      ) as Listed[];
      const seen = new Set<string>();
      let install = own.unpacked;
      const visit = (deps: Record<string, Listed> | undefined) => {
        for (const dep of Object.values(deps ?? {})) {
          const real = realpathSync(dep.path);
          if (seen.has(real)) continue;
          seen.add(real);
          install +=
            real.startsWith(repo) && !real.includes('node_modules')
              ? packSize(real, out).unpacked
              : folderBytes(real);
          visit(dep.dependencies);
        }
      };
      visit(listed[0]?.dependencies);
      const require = createRequire(path.join(dir, 'package.json'));
      for (const peer of Object.keys(manifest.peerDependencies ?? {})) {
        try {
          const peerDir = path.dirname(require.resolve(`${peer}/package.json`));
          const real = realpathSync(peerDir);
          if (!seen.has(real)) {
            seen.add(real);
            install += folderBytes(real);
          }
        } catch {
          // A peer not installed here is not counted.
        }
      }
      rows.push([manifest.name, kb(own.packed), kb(own.unpacked), kb(install), String(seen.size)]);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return {
    title: 'What users download — per published package',
    columns: [
      'Package',
      'Packed (.tgz)',
      'Unpacked',
      'Installed with dependencies and peers',
      'Packages installed',
    ],
    rows,
    notes: [
      'Tarballs include source maps and type declarations. Installed size: the production dependency closure (each package once) plus peers; workspace packages count as their tarballs, others as their folders in node_modules.',
    ],
  };
}
