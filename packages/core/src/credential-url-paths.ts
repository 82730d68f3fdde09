// Keys that live in a URL's path, not in its password or query: a webhook URL of Slack, Discord,
// Zapier, IFTTT, Microsoft Teams, n8n or Mattermost, a Telegram bot's API URL. Whoever has the
// URL can post as the user, so the URL is the credential, and a server quoting the path it was
// sent (`404 /bot123:AA…/sendMessage`) shows the key without the rest of it.

/** A service whose URLs carry their key in the path: the host, and the key segments of a path. */
interface PathKeyRule {
  host: RegExp;
  /** The path's segments (decoded) that are the key; empty when the path holds none. */
  keys(segments: readonly string[]): string[];
}

/** The segments after the first one named `marker`, when there are at least `count` of them. */
function after(marker: string, count: number, take: (rest: readonly string[]) => string[]) {
  return (segments: readonly string[]): string[] => {
    const at = segments.indexOf(marker);
    if (at < 0) return [];
    const rest = segments.slice(at + 1).filter((segment) => segment !== '');
    return rest.length >= count ? take(rest) : [];
  };
}

const rules: readonly PathKeyRule[] = [
  // hooks.slack.com/services/T…/B…/<secret>, /workflows/T…/A…/<id>/<secret>
  {
    host: /^hooks\.slack\.com$/,
    keys: (segments) =>
      segments[0] === 'services' || segments[0] === 'workflows' || segments[0] === 'triggers'
        ? segments.slice(1).filter((segment) => segment !== '')
        : [],
  },
  // discord.com/api/webhooks/<id>/<token>
  {
    host: /^(?:[a-z]+\.)?discord(?:app)?\.com$/,
    keys: after('webhooks', 2, (rest) => rest.slice(1, 2)),
  },
  // api.telegram.org/bot<token>/<method>, /file/bot<token>/<path>
  {
    host: /^api\.telegram\.org$/,
    keys: (segments) =>
      segments
        .filter((segment) => /^bot\d+:[A-Za-z0-9_-]{20,}$/.test(segment))
        .map((segment) => segment.slice(3)),
  },
  // hooks.zapier.com/hooks/catch/<account>/<secret>/
  { host: /^hooks\.zapier\.com$/, keys: after('catch', 2, (rest) => rest.slice(0, 2)) },
  // maker.ifttt.com/trigger/<event>/with/key/<key>, /use/<key>
  {
    host: /^maker\.ifttt\.com$/,
    keys: (segments) => [
      ...after('key', 1, (rest) => rest.slice(0, 1))(segments),
      ...after('use', 1, (rest) => rest.slice(0, 1))(segments),
    ],
  },
  // <tenant>.webhook.office.com/webhookb2/<group>@<tenant>/IncomingWebhook/<secret>/<owner>…
  {
    host: /(?:^|\.)webhook\.office\.com$|^outlook\.office(?:365)?\.com$/,
    keys: after('webhookb2', 1, (rest) => [...rest]),
  },
];

// Any other host: the segment after `/hooks/`, `/webhook/`, `/webhooks/` (n8n, Mattermost,
// Rocket.Chat, Gitea, self-hosted automation) when it looks generated — 16 or more characters
// with letters and digits, as a random id or key is, and a word or a date is not.
const generic = /^(?:hooks?|webhooks?|webhook-test)$/i;
const generated = /^(?=[^/]*[0-9])(?=[^/]*[A-Za-z])[A-Za-z0-9_~.:@=+-]{16,}$/;

// Any host, any place in the path: a segment that can only be a random key — 20 or more token
// characters mixing capitals, small letters and digits, or 32 or more of letters and digits (a
// hex key) other than a git object id (40 hex digits, as in `/commit/<id>`). Words, versions,
// numeric ids, UUIDs and file names (a dot) are none of these.
const mixedKey =
  /^(?=[A-Za-z0-9_-]*[A-Z])(?=[A-Za-z0-9_-]*[a-z])(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}$/;
const longKey = /^(?=[A-Za-z0-9]*[A-Za-z])(?=[A-Za-z0-9]*[0-9])[A-Za-z0-9]{32,}$/;
const gitObjectId = /^[0-9a-f]{40}$/;

/** Whether a path segment can only be a random key (see {@link mixedKey}). */
export function looksLikePathKey(segment: string): boolean {
  return mixedKey.test(segment) || (longKey.test(segment) && !gitObjectId.test(segment));
}

/**
 * The segments of `url`'s path that are its key (decoded), for the services known to keep one
 * there, a generated-looking segment after a `hooks`/`webhook` segment, and anywhere a segment
 * that can only be a random key.
 */
export function urlPathKeys(url: URL): string[] {
  const segments = url.pathname.split('/').slice(1).map(decodeSegment);
  const host = url.hostname.toLowerCase();
  const rule = rules.find((candidate) => candidate.host.test(host));
  if (rule !== undefined) return rule.keys(segments).filter((key) => key.length >= 6);
  const keys = segments.filter(looksLikePathKey);
  for (let index = 0; index + 1 < segments.length; index++) {
    if (!generic.test(segments[index] ?? '')) continue;
    for (const segment of segments.slice(index + 1))
      if (generated.test(segment)) keys.push(segment);
    break;
  }
  return [...new Set(keys)];
}

/** `url` with each of its path keys replaced by `***`; undefined when its path holds none. */
export function withoutPathKeys(url: URL): string | undefined {
  const keys = new Set(urlPathKeys(url));
  if (keys.size === 0) return undefined;
  const path = url.pathname
    .split('/')
    .map((segment) => {
      const decoded = decodeSegment(segment);
      if (keys.has(decoded)) return '***';
      // Telegram's `bot<token>` keeps the word `bot`.
      if (decoded.startsWith('bot') && keys.has(decoded.slice(3))) return 'bot***';
      return segment;
    })
    .join('/');
  const copy = new URL(url.href);
  copy.pathname = path;
  return copy.href;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
