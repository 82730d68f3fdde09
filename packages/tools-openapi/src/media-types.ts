// Media types: which are JSON or text, and which of a request body's types to send.
import type { BodyKind } from './normalized-types.js';

/** Whether a media type is JSON (`application/json`, `application/merge-patch+json`, `…+json;charset=…`). */
export function isJsonMediaType(mediaType: string): boolean {
  const base = baseMediaType(mediaType);
  return base === 'application/json' || base.endsWith('+json') || base === 'text/json';
}

/** A media type without parameters, lower-cased. */
export function baseMediaType(mediaType: string): string {
  return (mediaType.split(';')[0] ?? '').trim().toLowerCase();
}

/** Whether a media type is text a model can read. */
export function isTextMediaType(mediaType: string): boolean {
  const base = baseMediaType(mediaType);
  return (
    base.startsWith('text/') ||
    isJsonMediaType(base) ||
    base.endsWith('+xml') ||
    base.endsWith('+yaml') ||
    [
      'application/xml',
      'application/yaml',
      'application/x-yaml',
      'application/javascript',
      'application/ecmascript',
      'application/x-www-form-urlencoded',
      'application/graphql',
      'application/sql',
      'application/x-ndjson',
      'application/jsonl',
      'application/csv',
    ].includes(base)
  );
}

/** The media type to send of those offered: JSON first (the model writes it best), then forms, then text, then whatever is left. */
export function chooseMediaType(types: readonly string[]): { mediaType: string; kind: BodyKind } {
  const rank = (type: string): number => {
    const base = baseMediaType(type);
    if (base === 'application/json') return 0;
    if (isJsonMediaType(base)) return 1;
    if (base === '*/*' || base === 'application/*') return 2;
    if (base === 'application/x-www-form-urlencoded') return 3;
    if (base === 'multipart/form-data') return 4;
    if (isTextMediaType(base)) return 5;
    return 6;
  };
  const [best] = [...types].sort((a, b) => rank(a) - rank(b));
  const mediaType = best ?? 'application/json';
  const score = rank(mediaType);
  const kind: BodyKind =
    score <= 2
      ? 'json'
      : score === 3
        ? 'form'
        : score === 4
          ? 'multipart'
          : score === 5
            ? 'text'
            : 'binary';
  return { mediaType, kind };
}
