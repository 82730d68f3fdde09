// A trusted hook or server often runs the project's own virtual environment
// (`.venv/bin/python tools/check.py`, `.venv/bin/ruff`, an activated venv's `black`). That python
// reads the environment's `pyvenv.cfg` and, at every start, each `.pth` file of its
// site-packages — an `import` line in one runs — and its `sitecustomize`. The environment lies in
// the workspace, where a sandboxed command may write: a `.pth` it made ran as the user, outside
// the sandbox, at the next hook, every pinned file unchanged. Those files are pinned with the
// program (trust-scripts.ts).
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pythonModuleForms, sitePackagesFolders } from './script-references.js';

function entriesOf(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/**
 * The files the interpreter of the virtual environment `program` belongs to loads at every
 * start, when `program` lies in a venv's `bin` (a `pyvenv.cfg` beside that folder): the
 * `pyvenv.cfg`, and for each `lib/python*` its folder, each `site-packages` folder (a file made
 * there changes its stat), every `.pth` file in it, and `sitecustomize` and `usercustomize` in
 * each form Python takes, there or not. None for any other program.
 */
export function virtualEnvironmentFiles(program: string): string[] {
  const bin = dirname(program);
  const venv = dirname(bin);
  const config = join(venv, 'pyvenv.cfg');
  if (basename(bin) !== 'bin' || !existsSync(config)) return [];
  const lib = join(venv, 'lib');
  const sites = sitePackagesFolders(venv);
  return [
    config,
    lib,
    ...sites.flatMap((site) => [
      ...entriesOf(site)
        .filter((name) => name.endsWith('.pth'))
        .map((name) => join(site, name)),
      ...pythonModuleForms(site, 'sitecustomize'),
      ...pythonModuleForms(site, 'usercustomize'),
    ]),
  ];
}

/**
 * The site-packages folders of the virtual environment whose `bin` holds `program`, or none:
 * where that python finds what a script it runs imports.
 */
export function venvSitePackages(program: string): string[] {
  const bin = dirname(program);
  return basename(bin) === 'bin' && existsSync(join(dirname(bin), 'pyvenv.cfg'))
    ? sitePackagesFolders(dirname(bin))
    : [];
}
