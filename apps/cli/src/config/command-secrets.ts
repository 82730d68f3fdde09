/**
 * Credentials written into a command line — a stdio MCP server's arguments, a hook's command —
 * as known secrets for the redaction (ui/redaction.ts `redactAlso`): READMEs put keys there as
 * often as in `env`, and a server echoing its command line, or a failed hook's notice quoting its
 * command, showed them on the terminal and to the model.
 */

import { isCredentialHeader, isCredentialVariable } from '@agent/core/credentials';

/**
 * The name under which a header's value is held for the redaction (`<prefix> <header>`): one the
 * name rules judge a credential (`… credential`) when {@link isCredentialHeader} says it is one
 * but the header's name does not say so (`X-Honeycomb-Team`), so that a key under any name is
 * hidden like one under `X-Api-Key`.
 */
export function headerSecretName(prefix: string, header: string, value: string): string {
  const name = `${prefix}${header}`;
  return isCredentialHeader(header, value) && !isCredentialVariable(name, value)
    ? `${name} credential`
    : name;
}

/** A server URL's own credentials: each query parameter, named `<name>.url <parameter>`. */
function urlSecrets(name: string, url: string): Record<string, string> {
  const secrets: Record<string, string> = {};
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return secrets;
  }
  // Decoded: what tools hand the model is also matched in its percent-encoded form.
  for (const [parameter, value] of parsed.searchParams) secrets[`${name}.url ${parameter}`] = value;
  return secrets;
}

/** A header as one argument (`mcp-remote … --header "Authorization: Bearer <token>"`). */
const headerArgument = /^([A-Za-z0-9-]+):\s*(.+)$/s;

/**
 * Credentials in a stdio server's arguments, where READMEs put them as often as in `env`:
 * `--api-key <key>` and `--token=<key>` (named `<server>.arg --api-key`, so the name rules judge
 * the flag), a header given to a proxy such as mcp-remote (`Authorization: Bearer <token>`, also
 * without its scheme), a URL's password and query parameters (the official Postgres server takes
 * `postgresql://user:password@host/db`), and each argument as it is (the value rules judge it:
 * `ghp_…`, `sk-…`). A server echoing its command line (a usage error, a log line) handed them to
 * the model and the terminal.
 */
export function argumentSecrets(name: string, args: readonly string[]): Record<string, string> {
  const secrets: Record<string, string> = {};
  args.forEach((argument, index) => {
    secrets[`${name}.arg ${index}`] = argument;
    const assigned = /^(--?[A-Za-z][\w-]*)=(.+)$/s.exec(argument);
    if (assigned?.[1] !== undefined && assigned[2] !== undefined)
      secrets[`${name}.arg ${assigned[1]}`] = assigned[2];
    const next = args[index + 1];
    if (/^--?[A-Za-z][\w-]*$/.test(argument) && next !== undefined && !next.startsWith('-'))
      secrets[`${name}.arg ${argument}`] = next;
    const header = headerArgument.exec(argument);
    if (header?.[1] !== undefined && header[2] !== undefined) {
      secrets[headerSecretName(`${name}.arg `, header[1], header[2].trim())] = header[2].trim();
      const scheme = /^(?:Bearer|Basic|Token)\s+(\S+)$/i.exec(header[2].trim());
      if (scheme?.[1] !== undefined) secrets[`${name}.arg ${header[1]} token`] = scheme[1];
    }
    if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(argument)) {
      Object.assign(secrets, urlSecrets(`${name}.arg ${index}`, argument));
      try {
        const password = decodeURIComponent(new URL(argument).password);
        if (password !== '') secrets[`${name}.arg ${index} url password`] = password;
      } catch {
        // Not a URL after all: the argument as a whole is judged above.
      }
    }
  });
  return secrets;
}

/**
 * The words of a shell command line as the shell would split them — quotes ('…', "…") and
 * backslashes taken away; no expansion — enough to find the arguments a command passes.
 */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let index = 0; index < command.length; index++) {
    const character = command[index] as string;
    if (quote !== undefined) {
      if (character === quote) quote = undefined;
      else if (character === '\\' && quote === '"' && index + 1 < command.length)
        word = (word ?? '') + command[++index];
      else word = (word ?? '') + character;
    } else if (character === "'" || character === '"') {
      quote = character;
      word ??= '';
    } else if (character === '\\' && index + 1 < command.length)
      word = (word ?? '') + command[++index];
    else if (/[\s;&|()<>]/.test(character)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? '') + character;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** {@link argumentSecrets} of a command line's words, named `<name>.arg …`. */
export function commandSecrets(name: string, command: string): Record<string, string> {
  return argumentSecrets(name, shellWords(command));
}

/**
 * The notice for a stdio server whose arguments hold a key; undefined when none do. Every user of
 * the machine reads a process's command line (`ps`, `/proc/<pid>/cmdline`; a sandboxed server's
 * is in bwrap's) for as long as it runs, where its environment is its user's alone. The CLI
 * cannot move an argument the server reads out of its argv, so it says so, naming the flags and
 * never the values.
 */
export function argumentKeyNotice(name: string, args: readonly string[]): string | undefined {
  const where = new Set<string>();
  for (const [secret, value] of Object.entries(argumentSecrets(name, args)))
    if (isCredentialVariable(secret, value))
      where.add(argumentLabel(secret.slice(name.length + 5)));
  if (where.size === 0) return undefined;
  return `mcp ${name}: its arguments hold a key (${[...where].join(', ')}): every user of this machine can read a process's command line (ps, /proc/<pid>/cmdline) while the server runs — if the server reads its key from a variable, give it in the entry's "env" instead (mcp-remote: --header "Authorization:\${AUTH_HEADER}" with AUTH_HEADER in "env")`;
}

/** `3` → `argument 3`; `--api-key`, `Authorization token`, `2 url password` as they are. */
function argumentLabel(key: string): string {
  const index = /^(\d+)(.*)$/.exec(key);
  return index === null ? (key.split(' ')[0] ?? key) : `argument ${index[1]}${index[2] ?? ''}`;
}
