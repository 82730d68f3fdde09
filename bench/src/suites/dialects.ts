/**
 * What the providers' tool dialects make of real vendors' operations (GitHub, Stripe): how many
 * tools OpenAI's strict mode keeps strict (and why the rest are not), and what the conversion to
 * Gemini's OpenAPI-subset schema had to change.
 */
import { toGeminiSchema } from '@agent/providers-google';
import { toStrictSchema } from '@agent/providers-openai';
import { githubTools, stripeTools } from '../tool-search/catalogues.js';
import type { BenchSection } from '../types.js';

export async function run(): Promise<BenchSection> {
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const [label, tools] of [
    ['GitHub REST API', githubTools()],
    ['Stripe API', stripeTools()],
  ] as const) {
    let strict = 0;
    const reasons = new Map<string, number>();
    let geminiWarned = 0;
    let digitNames = 0;
    for (const tool of tools) {
      const result = toStrictSchema(tool.parameters);
      if (result.ok) strict++;
      else {
        const reason = result.reason.replace(/^#[^:]*: /, '');
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      }
      if (toGeminiSchema(tool.parameters, 'openapi').warnings.length > 0) geminiWarned++;
      if (/^[0-9]/.test(tool.name)) digitNames++;
    }
    rows.push([
      label,
      String(tools.length),
      `${strict} (${((100 * strict) / tools.length).toFixed(1)}%)`,
      String(geminiWarned),
      String(digitNames),
    ]);
    const top = [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 3);
    if (top.length > 0)
      notes.push(
        `${label}, not strict: ${top.map(([reason, count]) => `${reason} (${count})`).join('; ')}.`,
      );
  }
  return {
    title: 'Tool dialects on real specs — OpenAI strict mode and Gemini',
    columns: [
      'Catalogue',
      'Tools',
      'OpenAI strict',
      'Gemini: tools with a conversion warning',
      'Names starting with a digit',
    ],
    rows,
    notes: [
      'Strict keeps a tool strict by moving constraints it cannot carry (minLength, maxLength, uniqueItems, unknown formats) into the description; the loop still validates them. Typed maps (`additionalProperties: {schema}`, no `properties`) go as `[{ key, value }]` entries and are mapped back. Before (2026-11-23): Stripe 0 of 452 strict; 325 before maps.',
      ...notes,
    ],
  };
}
