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

/**
 * What the last look found for each open descriptor: inherited or not. A descriptor keeps its
 * close-on-exec flag while it stays open (Node sets it on all of its own and never clears one), so
 * only numbers not seen open at the last look are read again. Reading every descriptor's fdinfo at
 * each launch cost O(open descriptors) per command: 500 concurrent sandboxed calls (three pipes
 * each) spent most of their CPU here, minutes on a loaded CI machine.
 */
let known = new Map<number, boolean>();

/** The inherited descriptors ({@link inheritedDescriptors}), ascending; [] where /proc cannot tell (not Linux). */
export function inheritedDescriptors(): number[] {
  let names: string[];
  try {
    names = fs.readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const seen = new Map<number, boolean>();
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    const before = known.get(fd);
    if (before !== undefined) {
      seen.set(fd, before);
      continue;
    }
    let info: string;
    try {
      info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1');
    } catch {
      continue; // The directory's own descriptor, closed since: not passed on.
    }
    const flags = /^flags:\s*([0-7]+)/m.exec(info)?.[1];
    // Flags that cannot be read count as inherited: closing one too many costs nothing.
    seen.set(fd, flags === undefined || (Number.parseInt(flags, 8) & closeOnExec) === 0);
  }
  // Numbers closed since are forgotten: one opened again under the number is read afresh.
  known = seen;
  return [...seen]
    .filter(([, inherited]) => inherited)
    .map(([fd]) => fd)
    .sort((a, b) => a - b);
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
