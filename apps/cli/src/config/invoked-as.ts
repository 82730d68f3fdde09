import { basename, isAbsolute, relative, sep } from 'node:path';

/**
 * How the user can run this CLI again, for hints: `agent` when it was started as the installed
 * command (npx, a global install, a link), else `node <path to main.js>` as typed from the current
 * folder — after `npm run demo` in a clone there is no `agent` on the PATH, and a hint naming it
 * sends a new user to "command not found".
 */
export function invokedAs(
  script: string | undefined = process.argv[1],
  cwd: string = process.cwd(),
): string {
  if (script === undefined || basename(script) !== 'main.js') return 'agent';
  const fromHere = relative(cwd, script);
  const path =
    fromHere === '..' || fromHere.startsWith(`..${sep}`) || isAbsolute(fromHere)
      ? script
      : fromHere;
  return `node ${/\s/.test(path) ? `'${path}'` : path}`;
}
