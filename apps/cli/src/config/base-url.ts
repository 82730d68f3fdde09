/**
 * A provider's base URL as users paste it (`--base-url`, `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`),
 * checked at start: a URL fetch cannot use failed only at the first prompt, as `request failed:
 * Invalid URL` or `fetch failed: unknown scheme`, naming neither the value nor where it came from.
 */

import { readFileSync } from 'node:fs';
import { isCredentialVariable, urlWithoutCredentials } from '@agent/core';

/** The endpoint paths each vendor's SDK appends to the base URL itself (Anthropic's with its /v1). */
const endpointPaths = {
  openai: /\/(chat\/completions|completions|responses)\/?$/,
  anthropic: /\/(v1\/messages|messages)\/?$/,
  google: /\/(v1beta\/models\/.*)$/,
} as const;

/** What is wrong with `value` as a base URL, as a sentence after its name; undefined when it is usable. */
export function baseUrlProblem(
  value: string,
  vendor: keyof typeof endpointPaths = 'openai',
): string | undefined {
  // A password in the URL (http://user:secret@host) is never echoed.
  const trimmed = value.trim().replace(/\/\/[^/@\s]*@/, '//***@');
  if (/^(['"]).*\1$/s.test(trimmed))
    return `has quotes around it (${trimmed}), kept as part of the value: set it without them`;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return `("${trimmed}") is not a URL: start it with http:// or https:// (e.g. ${example[vendor]})`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `("${trimmed}") is not an http:// or https:// URL (e.g. ${example[vendor]})`;
  const endpoint = endpointPaths[vendor].exec(url.pathname);
  if (endpoint !== null) {
    const base = `${url.origin}${url.pathname.slice(0, endpoint.index)}`;
    return `("${trimmed}") names the endpoint, not the base: give ${base} (the client adds /${endpoint[1]})`;
  }
  return undefined;
}

const example = {
  openai: 'http://localhost:11434/v1',
  anthropic: 'https://api.anthropic.com',
  google: 'https://generativelanguage.googleapis.com',
} as const;

/**
 * Whether this process's command line, as every user reads it (`/proc/self/cmdline`), holds
 * `value`: the start re-executes the CLI with a keyed argument masked (credential-handover.ts)
 * where it can. Where there is no /proc, whether it could not.
 */
export function commandLineHolds(value: string): boolean {
  try {
    return readFileSync('/proc/self/cmdline', 'utf8').includes(value);
  } catch {
    return typeof process.execve !== 'function';
  }
}

/**
 * The warning for a `--base-url` that carries a key (a password, `?key=`, a key as a path
 * segment) that is still on the command line (see {@link commandLineHolds}): a command line is
 * readable by every user of the machine (`ps`, `/proc/<pid>/cmdline`) for as long as the CLI runs,
 * where `OPENAI_BASE_URL` is kept out of what others can read. Undefined when it carries none.
 */
export function baseUrlKeyWarning(value: string): string | undefined {
  if (!isCredentialVariable('OPENAI_BASE_URL', value)) return undefined;
  return `--base-url holds a key (${urlWithoutCredentials(value)}): every user of this machine can read a command line (ps, /proc/<pid>/cmdline) while agent runs. Set OPENAI_BASE_URL instead, which agent keeps from other processes: OPENAI_BASE_URL='<the URL>' agent …`;
}
