/**
 * Kiro's `web_fetch {url, mode?, search_terms?}` on our web_fetch: `truncated` returns the first
 * 8,000 characters; `full` as much as a call may ask for; `selective` (Kiro's default) with
 * `search_terms` returns the lines around each line holding a term (10 before and after, merged,
 * case-insensitive) out of the whole page, and without terms the beginning of the page, as Kiro
 * does. Everything else — the fetch, its guards, permission subjects — is web_fetch's own.
 */
import type { DefinedTool, ToolResult, ValidationResult } from '@agent/core';
import { fenced, unfence } from './untrusted-text.js';
import type { WebFetchArgs, WebFetchDetails } from './web-fetch.js';

/** Kiro's fields, kept beside ours between validation and execution. */
interface KiroFetch {
  mode?: unknown;
  search_terms?: unknown;
}

type TaggedArgs = WebFetchArgs & {
  kiro?: { mode: 'selective' | 'truncated' | 'full'; terms: string[] };
};

const linesAround = 10;
const truncatedChars = 8000;

function hasKiroFields(raw: unknown): raw is Record<string, unknown> & KiroFetch {
  return (
    raw !== null &&
    typeof raw === 'object' &&
    !Array.isArray(raw) &&
    ('mode' in raw || 'search_terms' in raw)
  );
}

/** The lines of `body` within {@link linesAround} of a line holding a term; `undefined` if none. */
function selectLines(body: string, terms: readonly string[]): string | undefined {
  const lines = body.split('\n');
  const wanted = terms.map((term) => term.toLowerCase());
  const keep: [number, number][] = [];
  lines.forEach((line, index) => {
    const lower = line.toLowerCase();
    if (!wanted.some((term) => lower.includes(term))) return;
    const from = Math.max(0, index - linesAround);
    const to = Math.min(lines.length - 1, index + linesAround);
    const last = keep[keep.length - 1];
    if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else keep.push([from, to]);
  });
  if (keep.length === 0) return undefined;
  return keep.map(([from, to]) => lines.slice(from, to + 1).join('\n')).join('\n\n[…]\n\n');
}

/** web_fetch that also takes Kiro's `mode` and `search_terms`; `maxChars` is its largest `max_chars`. */
export function withKiroFetchModes(
  tool: DefinedTool<WebFetchArgs, WebFetchDetails>,
  maxChars: number,
): DefinedTool<WebFetchArgs, WebFetchDetails> {
  return {
    ...tool,
    validate: (args): ValidationResult<WebFetchArgs> => {
      if (!hasKiroFields(args))
        return tool.validate?.(args) ?? { ok: true, value: args as WebFetchArgs };
      const { mode, search_terms: searchTerms, ...rest } = args;
      const issues = [];
      if (mode !== undefined && mode !== 'selective' && mode !== 'truncated' && mode !== 'full')
        issues.push({
          path: ['mode'],
          message: `expected one of "selective", "truncated", "full", received ${JSON.stringify(mode)}`,
        });
      if (searchTerms !== undefined && typeof searchTerms !== 'string')
        issues.push({ path: ['search_terms'], message: 'expected a string of keywords' });
      const base = tool.validate?.(rest) ?? {
        ok: true as const,
        value: rest as unknown as WebFetchArgs,
      };
      if (!base.ok || issues.length > 0)
        return { ok: false, issues: [...issues, ...(base.ok ? [] : base.issues)] };
      const terms =
        typeof searchTerms === 'string'
          ? searchTerms.split(/\s+/).filter((term) => term !== '')
          : [];
      const chosen = (mode ?? 'selective') as 'selective' | 'truncated' | 'full';
      const tagged: TaggedArgs = { ...base.value, kiro: { mode: chosen, terms } };
      return { ok: true, value: tagged };
    },
    execute: async (args: TaggedArgs, ctx): Promise<ToolResult<WebFetchDetails>> => {
      const { kiro, ...ours } = args;
      if (kiro === undefined) return tool.execute(ours, ctx);
      const selecting = kiro.mode === 'selective' && kiro.terms.length > 0;
      const chars =
        kiro.mode === 'full' || selecting
          ? maxChars
          : kiro.mode === 'truncated'
            ? Math.min(truncatedChars, maxChars)
            : undefined;
      const result = await tool.execute(
        {
          ...ours,
          ...(chars === undefined || ours.max_chars !== undefined ? {} : { max_chars: chars }),
        },
        ctx,
      );
      const [first, ...others] = result.content;
      if (!selecting || result.isError === true || first?.type !== 'text') return result;
      // The text is the header, a blank line, then the page: select within the page.
      const split = first.text.indexOf('\n\n');
      const header = split === -1 ? '' : first.text.slice(0, split);
      const body = withoutRangeFooter(split === -1 ? first.text : first.text.slice(split + 2));
      // The page sits between its untrusted-content markers: select inside them, keep them around.
      const page = unfence(body);
      const selected = selectLines(page === undefined ? body : page.inner, kiro.terms);
      const text =
        selected === undefined
          ? `${header}\n\nNone of ${kiro.terms.map((term) => `"${term}"`).join(', ')} appears on the page.`
          : `${header}\nSelected: the lines around ${kiro.terms.map((term) => `"${term}"`).join(', ')}\n\n${page === undefined ? selected : fenced(selected, page.fence)}`;
      return { ...result, content: [{ type: 'text', text }, ...others] };
    },
  };
}

/**
 * The page without web_fetch's `[Characters a-b of n …]` footer. Only the last `[Characters` can
 * end the text; a regular expression tried from each one of a page that repeats it rescanned the
 * rest of the page every time.
 */
export function withoutRangeFooter(text: string): string {
  const at = text.lastIndexOf('\n\n[Characters ');
  if (at === -1) return text;
  return /^\n\n\[Characters \d+-\d+ of \d+(?!\d)[^\]]*\]$/.test(text.slice(at))
    ? text.slice(0, at)
    : text;
}
