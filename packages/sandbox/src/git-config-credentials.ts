// Git configuration files hold credentials that git needs and so cannot be hidden whole:
// actions/checkout's `http.https://github.com/.extraheader = AUTHORIZATION: basic <base64 of
// x-access-token:ghs_…>`, `url.https://<token>@github.com/.insteadOf`, a remote's
// `https://user:password@host/…`, an inline `credential.helper = !echo password=…`,
// `sendemail.smtpPass`. A sandboxed `cat .git/config` (or `git config -l`) gave them to the model.
// The sandbox shows a copy with those values replaced by `***` instead (git in there can still
// read everything else: status, log, diff, branches; it cannot push with the user's token, which
// is right), and the CLI redacts the same values from every tool result.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { credentialValueRules, isCredentialHeader } from '@agent/core/credentials';
import { gitConfigIncludePaths, maxIncludeDepth, readConfig } from './git-config-includes.js';
import { gitEntryPaths } from './git-repositories.js';
import { realPath } from './real-paths.js';

/** What stands for a credential in the copy. */
const hidden = '***';

/** A git configuration text with its credentials replaced, and the credentials found. */
export interface GitConfigCredentials {
  /** The text with each credential replaced by `***` (the same text when none was found). */
  text: string;
  /** Each credential as git reads it (and a basic header's decoded parts), without duplicates. */
  secrets: string[];
}

/**
 * Keys whose value is a secret whatever it looks like (by the last part of the name):
 * `sendemail.smtpPass`, `github.token`, `hub.oauthtoken`, `gitlab.token`, `*.password`, `*.apikey`.
 */
const secretKey = /(?:token|passw(?:or)?d|pass|secret|api-?key)$/i;

// A URL with user information (`scheme://user[:password]@`), as written in a value or a section's
// subsection (`[url "https://<token>@github.com/"]`).
const urlUserInformation = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^\s/@"'<>\\]+)@/g;

/**
 * `text` (a git configuration file) with its credentials replaced by `***`: the password (and a
 * token used as the user name) of every URL in it, `extraheader` values that carry credentials
 * (`AUTHORIZATION: basic ***`), the values of keys named for secrets (`smtpPass`, `token`), an
 * inline `!` credential helper that prints a password, and any value of a known key format
 * (`ghp_…`, `glpat-…`). A line continued over several lines keeps its line count.
 */
export function gitConfigWithoutCredentials(text: string): GitConfigCredentials {
  const secrets = new Set<string>();
  const lines = text.split('\n');
  const out: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    // A logical line: physical ones joined while one ends with an unescaped backslash.
    let logical = lines[index] ?? '';
    let joined = 0;
    while (/(?:^|[^\\])(?:\\\\)*\\\r?$/.test(logical) && index + 1 < lines.length) {
      logical = `${logical.replace(/\\\r?$/, '')}${lines[++index] ?? ''}`;
      joined++;
    }
    const filtered = filterLine(logical, secrets);
    if (filtered === logical && joined === 0) out.push(filtered);
    else out.push(filtered, ...Array.from({ length: joined }, () => ''));
  }
  if (secrets.size === 0) return { text, secrets: [] };
  return { text: out.join('\n'), secrets: [...secrets].filter((secret) => secret !== '') };
}

function filterLine(line: string, secrets: Set<string>): string {
  // URLs first, anywhere on the line: a section's subsection, a remote, a proxy, an insteadOf.
  const withoutUrls = line.replace(urlUserInformation, (_match, scheme: string, info: string) => {
    const colon = info.indexOf(':');
    const user = colon === -1 ? info : info.slice(0, colon);
    const password = colon === -1 ? '' : info.slice(colon + 1);
    const tokenUser = isTokenLike(decoded(user));
    if (password === '' && !tokenUser) return `${scheme}${info}@`;
    for (const part of [password, ...(tokenUser ? [user] : [])]) addBoth(secrets, part);
    const shownUser = tokenUser ? hidden : user;
    return `${scheme}${shownUser}${password === '' ? '' : `:${hidden}`}@`;
  });
  const entry = /^(\s*(?:\[[^\]]*\]\s*)?)([A-Za-z][A-Za-z0-9-]*)(\s*=\s*)(.*)$/.exec(withoutUrls);
  if (entry === null) return withoutUrls;
  const [, before = '', key = '', equals = '', raw = ''] = entry;
  const value = configValue(raw);
  if (value === '') return withoutUrls;
  const replaced = secretValue(key, value, secrets);
  return replaced === undefined ? withoutUrls : `${before}${key}${equals}${replaced}`;
}

/** The value shown instead of `value` of `key`, with what it hid added to `secrets`; undefined to keep it. */
function secretValue(key: string, value: string, secrets: Set<string>): string | undefined {
  if (/^extraheader$/i.test(key)) {
    const colon = value.indexOf(':');
    if (colon <= 0) return undefined;
    const name = value.slice(0, colon).trim();
    const field = value.slice(colon + 1).trim();
    if (!isCredentialHeader(name, field)) return undefined;
    secrets.add(field);
    const scheme = /^(\S+)\s+(\S.*)$/.exec(field);
    if (scheme === null) return quoted(`${name}: ${hidden}`);
    const credential = scheme[2] ?? '';
    secrets.add(credential);
    if (/^basic$/i.test(scheme[1] ?? '')) addBasicParts(secrets, credential);
    return quoted(`${name}: ${scheme[1]} ${hidden}`);
  }
  if (/^helper$/i.test(key) && value.startsWith('!')) {
    const printed = [
      ...value.matchAll(/\b(?:password|passwd|token|secret)\s*=\s*['"]?([^\s'";]+)/gi),
    ];
    if (printed.length === 0 && !hasKnownKey(value)) return undefined;
    secrets.add(value);
    for (const [, secret] of printed) if (secret !== undefined) secrets.add(secret);
    return hidden;
  }
  if (
    (secretKey.test(key) && !/^(?:true|false|yes|no|on|off)$/i.test(value)) ||
    hasKnownKey(value)
  ) {
    secrets.add(value);
    return hidden;
  }
  return undefined;
}

/**
 * Whether `value`, or a word of it, is a key of a known format (`ghp_…`, `sk-…`, a JWT); a URL's
 * user information (already judged, and `***` where it was a credential) aside.
 */
function hasKnownKey(value: string): boolean {
  const text = value.replace(urlUserInformation, '$1');
  return [text, ...text.split(/[\s'"=;,]+/)].some(
    (word) => word !== '' && credentialValueRules.some((rule) => rule.pattern.test(word)),
  );
}

/** A URL's user name that is a token (`https://ghp_…@github.com`), not a person's or a role's name. */
function isTokenLike(user: string): boolean {
  if (hasKnownKey(user)) return true;
  return /^[A-Za-z0-9_-]{16,}$/.test(user) && /[0-9]/.test(user) && /[A-Za-z]/.test(user);
}

/** The user and password inside a basic credential (`x-access-token:ghs_…`, base64). */
function addBasicParts(secrets: Set<string>, credential: string): void {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(credential)) return;
  const pair = Buffer.from(credential, 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  if (colon === -1 || !/^[\x20-\x7e]+$/.test(pair)) return;
  secrets.add(pair);
  secrets.add(pair.slice(colon + 1));
  const user = pair.slice(0, colon);
  if (isTokenLike(user)) secrets.add(user);
}

function addBoth(secrets: Set<string>, part: string): void {
  secrets.add(part);
  secrets.add(decoded(part));
}

function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** A git configuration value as git reads it: comments cut, quotes removed, escapes read. */
function configValue(raw: string): string {
  let value = '';
  let quoted = false;
  let pending = '';
  for (let index = 0; index < raw.length; index++) {
    const char = raw[index] ?? '';
    if (char === '\\') {
      const next = raw[++index] ?? '';
      value += pending + ({ n: '\n', t: '\t', b: '\b' }[next] ?? next);
      pending = '';
    } else if (char === '"') {
      value += pending;
      pending = '';
      quoted = !quoted;
    } else if (!quoted && (char === '#' || char === ';')) break;
    else if (!quoted && /\s/.test(char)) pending += char;
    else {
      value += pending + char;
      pending = '';
    }
  }
  return value.trim();
}

/** `value` as a git configuration value: quoted, with `"` and `\` escaped. */
function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/** Where {@link gitConfigFiles} looks. */
export interface GitConfigPlaces {
  /** Directories whose repositories count: each one's own `.git`, and the repository it lies in. */
  roots: readonly string[];
  /** More git directories or `.git` entries (repositories found inside the roots). */
  repositories?: readonly string[];
  /** The user's home. */
  home: string;
  /** Where `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM` and `XDG_CONFIG_HOME` are read. */
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * The git configuration files, by real path, that exist as regular files: the system's and the
 * user's (`GIT_CONFIG_SYSTEM` or `/etc/gitconfig`, `GIT_CONFIG_GLOBAL` or `~/.gitconfig`,
 * `$XDG_CONFIG_HOME/git/config`), each repository's `config` and `config.worktree` (a worktree's
 * common directory's too), and every file those include (`include.path`, `includeIf` paths of
 * any condition), in turn.
 */
export function gitConfigFiles(places: GitConfigPlaces): string[] {
  const { env, home } = places;
  const xdg = env.XDG_CONFIG_HOME;
  const starts = [
    env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig',
    env.GIT_CONFIG_GLOBAL ?? path.join(home, '.gitconfig'),
    path.join(
      xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(home, '.config'),
      'git',
      'config',
    ),
  ];
  const entries = new Set([
    ...places.roots.flatMap((root) => [path.join(root, '.git'), ...enclosingGitEntry(root)]),
    ...(places.repositories ?? []),
  ]);
  for (const entry of entries)
    for (const directory of gitEntryPaths(entry, ['/']))
      starts.push(path.join(directory, 'config'), path.join(directory, 'config.worktree'));
  const found = new Set<string>();
  const visit = (file: string, depth: number) => {
    const real = realPath(file);
    if (real === undefined || found.has(real) || depth > maxIncludeDepth) return;
    const text = readConfig(real);
    if (text === undefined) return;
    found.add(real);
    for (const value of gitConfigIncludePaths(text)) {
      const included = value.startsWith('~/')
        ? path.join(home, value.slice(2))
        : path.resolve(path.dirname(file), value);
      visit(included, depth + 1);
    }
  };
  for (const file of starts) visit(file, 0);
  return [...found];
}

/** The `.git` entry of the repository `directory` lies in, above it (git's own discovery). */
function enclosingGitEntry(directory: string): string[] {
  let current = path.dirname(path.resolve(directory));
  for (;;) {
    const entry = path.join(current, '.git');
    if (fs.lstatSync(entry, { throwIfNoEntry: false }) !== undefined) return [entry];
    const parent = path.dirname(current);
    if (parent === current) return [];
    current = parent;
  }
}
