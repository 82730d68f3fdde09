// A hook script checked out with Windows line endings (`core.autocrlf`, an editor that saves CRLF)
// starts `#!/bin/sh\r`: the kernel looks for an interpreter named `/bin/sh\r`, and the shell reports
// the *script* as "not found" (exit 127) — a file the user can see right there. The hint names the
// cause and the fix.
import { closeSync, openSync, readSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

/**
 * When the program `command` starts with (its first word, a path) is a script whose first line
 * ends with a carriage return: a sentence saying so and how to convert it; else undefined.
 * Relative paths are read from `cwd`. Reads at most 512 bytes; never throws.
 */
export function crlfScriptHint(command: string, cwd: string): string | undefined {
  const first = /^\s*(?:"([^"]+)"|'([^']+)'|(\S+))/.exec(command);
  const program = first?.[1] ?? first?.[2] ?? first?.[3];
  if (program === undefined || !program.includes('/')) return undefined;
  const file = isAbsolute(program) ? program : join(cwd, program);
  let head: string;
  try {
    const descriptor = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(512);
      const read = readSync(descriptor, buffer, 0, buffer.length, 0);
      head = buffer.subarray(0, read).toString('latin1');
    } finally {
      closeSync(descriptor);
    }
  } catch {
    return undefined;
  }
  const line = head.split('\n')[0] ?? '';
  if (!line.startsWith('#!') || !line.endsWith('\r')) return undefined;
  return `${program} has Windows line endings (its first line ends with a carriage return, so the system looks for an interpreter named "${line.slice(2).trim()}\\r"): convert it with dos2unix ${program} (or sed -i 's/\\r$//' ${program}), and git config core.autocrlf input keeps it so`;
}
