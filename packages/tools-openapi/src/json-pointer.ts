/** Appends segments to a JSON pointer, escaping `~` and `/` (RFC 6901). */
export function childPointer(pointer: string, ...segments: readonly (string | number)[]): string {
  let out = pointer;
  for (const segment of segments)
    out += `/${String(segment).replaceAll('~', '~0').replaceAll('/', '~1')}`;
  return out;
}

/** The segments of a local reference (`#/components/schemas/Pet`), or undefined when it is not local. */
export function pointerSegments(ref: string): string[] | undefined {
  if (ref === '#' || ref === '#/') return [];
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((part) => safeDecode(part).replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The value a local reference points at in `root`, or undefined when it points at nothing. */
export function resolvePointer(root: unknown, ref: string): unknown {
  const segments = pointerSegments(ref);
  if (segments === undefined) return undefined;
  let current: unknown = root;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object') return undefined;
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(segment)) return undefined;
      current = current[Number(segment)];
    } else {
      if (!Object.hasOwn(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}

// A pointer in a URI fragment may be percent-encoded (`#/paths/~1pets~1%7Bid%7D`); a stray `%` is kept.
function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
