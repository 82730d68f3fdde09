/** Longest wire name providers accept. */
const maxWireNameLength = 64;
/** `_` plus 8 hex digits. */
const hashSuffixLength = 9;

/** Replaces every character outside `[a-zA-Z0-9_-]` with `_`; an empty part becomes `_`. */
export function sanitizeNamePart(part: string): string {
  const sanitized = part.replace(/[^a-zA-Z0-9_-]/gu, '_');
  return sanitized === '' ? '_' : sanitized;
}

/**
 * The wire name of an MCP tool: `server__tool`, each part sanitised to `[a-zA-Z0-9_-]` (with
 * `prefix: false`, the tool's own name alone, sanitised). A name over 64 characters is cut and
 * ends in `_` plus 8 hex digits of a hash of the original server and tool names, so the same tool
 * always gets the same name and two long names rarely meet.
 */
export function mcpToolWireName(
  server: string,
  tool: string,
  options: { prefix?: boolean } = {},
): string {
  const name =
    options.prefix === false
      ? sanitizeNamePart(tool)
      : `${sanitizeNamePart(server)}__${sanitizeNamePart(tool)}`;
  if (name.length <= maxWireNameLength) return name;
  const hash = fnv1a32(`${server}\u0000${tool}`).toString(16).padStart(8, '0');
  return `${name.slice(0, maxWireNameLength - hashSuffixLength)}_${hash}`;
}

/** 32-bit FNV-1a over UTF-16 code units: tiny, deterministic, runtime-neutral. */
function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}
