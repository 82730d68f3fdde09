import * as fs from 'node:fs';

/**
 * File descriptors this process got from whoever started it and would pass on to every child:
 * those above 2 without close-on-exec. Node opens its own descriptors close-on-exec, so these are
 * the ones a launcher left open — a shell's `exec 3>file`, a CI runner's or an IDE's pipes, make's
 * jobserver. bubblewrap closes none of them: a descriptor of a file outside the workspace lets a
 * sandboxed command write through it, one of a directory lets it read every file below (its
 * masks only cover paths, not a directory opened before), and `/proc/1/fd/N` reopens either.
 */

// O_CLOEXEC as /proc/<pid>/fdinfo/<fd> shows it in "flags:" (octal, the kernel's open flags).
const closeOnExec = 0o2000000;

/** The inherited descriptors ({@link inheritedDescriptors}), ascending; [] where /proc cannot tell (not Linux). */
export function inheritedDescriptors(): number[] {
  let names: string[];
  try {
    names = fs.readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    let info: string;
    try {
      info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1');
    } catch {
      continue; // The directory's own descriptor, closed since: not passed on.
    }
    const flags = /^flags:\s*([0-7]+)/m.exec(info)?.[1];
    // Flags that cannot be read count as inherited: closing one too many costs nothing.
    if (flags === undefined || (Number.parseInt(flags, 8) & closeOnExec) === 0) found.push(fd);
  }
  return found.sort((a, b) => a - b);
}

const bashCandidates = ['/bin/bash', '/usr/bin/bash', '/usr/local/bin/bash'];

/**
 * A shell that can close descriptors above 9 (dash cannot: its redirections take one digit), or
 * undefined when there is none.
 */
export function closingShell(): string | undefined {
  return bashCandidates.find((candidate) => {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The bash words that close `descriptors` (`exec 3>&- 40>&-; `), '' for none. */
export function closeDescriptorsScript(descriptors: readonly number[]): string {
  return descriptors.length === 0 ? '' : `exec ${descriptors.map((fd) => `${fd}>&-`).join(' ')}; `;
}
