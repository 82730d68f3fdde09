#!/usr/bin/env node
// Public API reports (API Extractor): one `api/<name>.api.md` per type entry point of every
// published package, committed next to its source.
//
//   node tooling/release/api-report.mjs            check: fail when a built package's public API
//                                                  differs from its committed report (or has none)
//   node tooling/release/api-report.mjs --update   rewrite the reports from the built declarations
//   … --package packages/core                      only that package (repeatable)
//
// Breaking changes: a line of a report that was in the package's last release (the git tag
// `<name>@<version>` that `changeset publish` creates) and is gone or different now needs a
// changeset for the package of at least `major` (from 1.0.0) or `minor` (0.x, where a minor is
// the breaking step of a caret range). Without one, the check fails and --update warns.
// Before a package's first release there is no baseline, so nothing is flagged.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const update = args.includes('--update');
const only = args
  .flatMap((arg, index) => (arg === '--package' ? [args[index + 1]] : []))
  .map((dir) => path.resolve(repo, dir));

/** Every published (non-private) package of the workspace: packages/* and apps/*. */
export function publicPackages() {
  return ['packages', 'apps']
    .flatMap((group) =>
      existsSync(path.join(repo, group))
        ? readdirSync(path.join(repo, group)).map((name) => path.join(repo, group, name))
        : [],
    )
    .filter((dir) => existsSync(path.join(dir, 'package.json')))
    .map((dir) => ({
      dir,
      manifest: JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')),
    }))
    .filter(({ manifest }) => manifest.private !== true);
}

/** The type entry points a package exports: `{ key, types }` for each `exports` entry with `types`. */
function typeEntries(dir, manifest) {
  return Object.entries(manifest.exports ?? {})
    .filter(
      ([, value]) => typeof value === 'object' && value !== null && typeof value.types === 'string',
    )
    .map(([key, value]) => ({ key, types: path.join(dir, value.types) }));
}

function reportName(manifest, key) {
  const base = manifest.name.replace(/^@[^/]+\//, '');
  return key === '.' ? base : `${base}-${key.replace(/^\.\//, '').replaceAll('/', '-')}`;
}

/** The pending changesets' bump for a package: 'major' | 'minor' | 'patch' | undefined. */
function pendingBump(name) {
  const dir = path.join(repo, '.changeset');
  const order = ['patch', 'minor', 'major'];
  let best;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.md'))) {
    const head = readFileSync(path.join(dir, file), 'utf8').split('---')[1] ?? '';
    for (const line of head.split('\n')) {
      const match = /^\s*["']?([^"':]+)["']?\s*:\s*(major|minor|patch)\s*$/.exec(line);
      if (
        match?.[1] === name &&
        (best === undefined || order.indexOf(match[2]) > order.indexOf(best))
      )
        best = match[2];
    }
  }
  return best;
}

/** The report as of the package's last release tag, or undefined (never released / no git). */
function releasedReport(manifest, reportPath) {
  try {
    const tags = execFileSync(
      'git',
      ['tag', '--list', `${manifest.name}@*`, '--sort=-v:refname', '--merged', 'HEAD'],
      {
        cwd: repo,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    )
      .split('\n')
      .filter(Boolean);
    if (tags.length === 0) return undefined;
    const relative = path.relative(repo, reportPath).split(path.sep).join('/');
    const text = execFileSync('git', ['show', `${tags[0]}:${relative}`], {
      cwd: repo,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return { tag: tags[0], text };
  } catch {
    return undefined;
  }
}

/** Lines of the released report that are gone from the current one (API lines only). */
function removedLines(released, current) {
  const kept = new Set(current.split('\n').map((line) => line.trimEnd()));
  return released
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('//') && !kept.has(line));
}

function extract(dir, manifest, entry, reportFolder, tempFolder) {
  const fileName = `${reportName(manifest, entry.key)}.api.md`;
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: dir,
      mainEntryPointFilePath: entry.types,
      bundledPackages: [],
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'es2023',
            module: 'nodenext',
            moduleResolution: 'nodenext',
            strict: true,
            skipLibCheck: true,
            types: ['node'],
          },
          include: [entry.types],
        },
      },
      apiReport: {
        enabled: true,
        reportFolder,
        reportTempFolder: tempFolder,
        reportFileName: fileName,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      // The report is the API surface; documentation lint belongs elsewhere.
      messages: {
        compilerMessageReporting: { default: { logLevel: 'none', addToApiReportFile: false } },
        extractorMessageReporting: { default: { logLevel: 'none', addToApiReportFile: false } },
        tsdocMessageReporting: { default: { logLevel: 'none', addToApiReportFile: false } },
      },
    },
    configObjectFullPath: path.join(dir, 'api-extractor.json'),
    packageJsonFullPath: path.join(dir, 'package.json'),
  });
  const errors = [];
  const result = Extractor.invoke(config, {
    localBuild: update,
    messageCallback: (message) => {
      if (message.logLevel === 'error' && !message.messageId.startsWith('console-api-report'))
        errors.push(message.text);
      message.handled = true;
    },
  });
  return { result, errors, reportPath: path.join(reportFolder, fileName) };
}

const problems = [];
const warnings = [];
const temp = mkdtempSync(path.join(tmpdir(), 'api-report-'));
let checked = 0;
try {
  for (const { dir, manifest } of publicPackages()) {
    if (only.length > 0 && !only.includes(dir)) continue;
    const entries = typeEntries(dir, manifest);
    for (const entry of entries) {
      const label = `${manifest.name}${entry.key === '.' ? '' : ` (${entry.key})`}`;
      if (!existsSync(entry.types)) {
        problems.push(`${label}: ${path.relative(repo, entry.types)} is missing — build first`);
        continue;
      }
      const reportFolder = path.join(dir, 'api');
      if (update) mkdirSync(reportFolder, { recursive: true });
      const { result, errors, reportPath } = extract(dir, manifest, entry, reportFolder, temp);
      checked++;
      if (errors.length > 0) problems.push(`${label}: API Extractor failed: ${errors.join('; ')}`);
      const relative = path.relative(repo, reportPath);
      if (!update && result.apiReportChanged) {
        problems.push(
          existsSync(reportPath)
            ? `${label}: the public API changed and ${relative} was not updated — review the change, then run \`pnpm api:update\` and commit the report`
            : `${label}: no API report (${relative}) — run \`pnpm api:update\` and commit it`,
        );
      }
      const current = readFileSync(
        update ? reportPath : path.join(temp, path.basename(reportPath)),
        'utf8',
      );
      const released = releasedReport(manifest, reportPath);
      if (released === undefined) continue;
      const removed = removedLines(released.text, current);
      if (removed.length === 0) continue;
      const needed = /^0\./.test(manifest.version) ? ['minor', 'major'] : ['major'];
      const bump = pendingBump(manifest.name);
      if (needed.includes(bump)) continue;
      const text = `${label}: ${removed.length} line(s) of the API released as ${released.tag} changed or went away (first: ${removed[0].trim()}); that breaks users — add a \`${needed[0]}\` changeset for ${manifest.name}${bump === undefined ? '' : ` (pending: ${bump})`}`;
      if (update) warnings.push(text);
      else problems.push(text);
    }
  }
} finally {
  rmSync(temp, { recursive: true, force: true });
}
for (const warning of warnings) console.warn(`warning: ${warning}`);
if (problems.length > 0) {
  for (const problem of problems) console.error(`api: ${problem}`);
  process.exit(1);
}
console.log(
  update
    ? `api: ${checked} report(s) written`
    : `api: ${checked} report(s) match the built declarations`,
);
