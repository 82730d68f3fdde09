// The command line in the locale's character set. Node reads argv as UTF-8: in a Latin-1 terminal
// (`LANG=de_DE.ISO-8859-1`) `agent -p "Erkläre das"` has the byte 0xE4 there, and the model was
// sent `Erkl�re das`. The bytes are still in /proc/self/cmdline (Linux); read in the locale's set,
// they are the text the user typed. Before the credential handover re-executes the CLI with
// `process.argv`, so the second start gets them as UTF-8.
import { readFileSync } from 'node:fs';
import { terminalCharset } from '../ui/terminal-charset.js';

/** Puts back, in `process.argv`, the arguments Node could not read as UTF-8 (Linux; a one-byte locale). */
export function readArgumentsInLocale(argv: string[] = process.argv): void {
  const charset = terminalCharset(process.env);
  const label = charset.kind === 'utf-8' ? undefined : charset.decoder;
  if (label === undefined) return;
  let raw: Buffer;
  try {
    raw = readFileSync('/proc/self/cmdline');
  } catch {
    return;
  }
  const parts: Buffer[] = [];
  for (let start = 0; start < raw.length; ) {
    const end = raw.indexOf(0, start);
    parts.push(raw.subarray(start, end < 0 ? raw.length : end));
    start = end < 0 ? raw.length : end + 1;
  }
  // The CLI's own arguments end the command line (Node's options and the script come first).
  const count = argv.length - 2;
  if (count <= 0 || parts.length < count) return;
  const own = parts.slice(parts.length - count);
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const local = new TextDecoder(label);
  own.forEach((bytes, index) => {
    const at = index + 2;
    if (!argv[at]?.includes('\ufffd')) return;
    try {
      utf8.decode(bytes);
      // Valid UTF-8 (a U+FFFD typed on purpose, or a start re-executed): as it is.
    } catch {
      argv[at] = local.decode(bytes);
    }
  });
}
