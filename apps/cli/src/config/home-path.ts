// A path option given as `"~/proj"`: quoted, or passed by a launcher with no shell (an editor's
// task, a service unit, a Makefile's quoted variable), the `~` reaches the CLI unexpanded. It was
// read as a folder named `~` in the current one — `--save "~/out.json"` even advised
// `mkdir -p './~'`, a folder a later `rm -rf ~…` typed by hand deletes the wrong thing with.
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * `~` or `~/…` at the start of a path the user gave on the command line: their home, as the
 * shell would have made it (when the home is an absolute path); anything else as given.
 */
export function expandLeadingTilde<Value extends string | undefined>(value: Value): Value {
  if (value === undefined || (value !== '~' && !value.startsWith('~/'))) return value;
  const home = homedir();
  if (!isAbsolute(home)) return value;
  return join(home, value.slice(1)) as Value;
}
