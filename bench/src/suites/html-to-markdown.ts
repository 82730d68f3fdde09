/**
 * HTML → Markdown for web_fetch, on five real pages saved from Mozilla Readability's test corpus
 * (`src/__fixtures__/html-pages/`, with Readability's expected article for each): what web_fetch does
 * now (`htmlToMarkdown`: Readability over linkedom, then turndown; the built-in converter when no
 * article is found) against the built-in converter it used before (`htmlToText`, whole page) and
 * node-html-markdown (whole page). Per converter: throughput, and how much of the output is the
 * article — recall (share of the article's words kept) and noise (share of output words that are
 * not in the article), both over words of 4+ letters.
 */
import { readFileSync } from 'node:fs';
import { htmlToMarkdown, htmlToText } from '@agent/tools-web';
import { parseHTML } from 'linkedom';
import { NodeHtmlMarkdown } from 'node-html-markdown';
import type { BenchSection } from '../types.js';

const dir = new URL('../__fixtures__/html-pages/', import.meta.url);
const pages = ['wikipedia', 'nytimes-1', 'medium-1', 'bbc-1', 'ars-1'];
const repetitions = Number(process.env.BENCH_HTML_REPS ?? 5);

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z]{4,}/g) ?? []);
const textOf = (html: string) =>
  parseHTML(`<html><body>${html}</body></html>`).document.body.textContent ?? '';

export async function run(): Promise<BenchSection> {
  const nhm = new NodeHtmlMarkdown();
  const converters: Record<string, (html: string) => string> = {
    'htmlToMarkdown (web_fetch now)': (html) => htmlToMarkdown(html).text,
    'htmlToText (before, whole page)': (html) => htmlToText(html).text,
    'node-html-markdown (whole page)': (html) => nhm.translate(html),
  };
  const inputs = pages.map((page) => ({
    page,
    html: readFileSync(new URL(`${page}.html`, dir), 'utf8'),
    expected: words(textOf(readFileSync(new URL(`${page}.expected.html`, dir), 'utf8'))),
  }));
  const totalBytes = inputs.reduce((sum, input) => sum + Buffer.byteLength(input.html), 0);
  const rows: string[][] = [];
  let baselineMs = Number.NaN;
  for (const [name, convert] of Object.entries(converters)) {
    let ms = 0;
    const recall: number[] = [];
    const noise: number[] = [];
    let outChars = 0;
    for (const input of inputs) {
      convert(input.html); // warm-up
      const started = performance.now();
      let out = '';
      for (let i = 0; i < repetitions; i++) out = convert(input.html);
      ms += (performance.now() - started) / repetitions;
      outChars += out.length;
      const got = words(out);
      let kept = 0;
      for (const word of input.expected) if (got.has(word)) kept++;
      let extra = 0;
      for (const word of got) if (!input.expected.has(word)) extra++;
      recall.push(kept / Math.max(1, input.expected.size));
      noise.push(extra / Math.max(1, got.size));
    }
    if (Number.isNaN(baselineMs)) baselineMs = ms;
    const pct = (values: number[]) =>
      `${Math.round((100 * values.reduce((a, b) => a + b, 0)) / values.length)}% (${values.map((v) => Math.round(100 * v)).join('/')})`;
    rows.push([
      name,
      ms.toFixed(1),
      (totalBytes / 1e6 / (ms / 1000)).toFixed(1),
      `${(ms / baselineMs).toFixed(2)}×`,
      pct(recall),
      pct(noise),
      String(outChars),
    ]);
  }
  return {
    title: `HTML → Markdown for web_fetch (${pages.length} real pages, ${(totalBytes / 1e6).toFixed(2)} MB)`,
    columns: [
      'Converter',
      'ms for all pages',
      'MB/s',
      '× web_fetch now',
      'Article words kept (mean; per page)',
      'Words not in the article (mean; per page)',
      'Output characters',
    ],
    rows,
    notes: [
      `Pages: ${pages.join(', ')} — source.html and expected.html from mozilla/readability's test/test-pages (commit ab4027a8, Apache-2.0). Mean of ${repetitions} conversions per page after one warm-up (BENCH_HTML_REPS).`,
      'Less noise is fewer tokens for the model on the same article; the built-in converter is faster but keeps navigation, menus and footers. Pages where Readability finds no article go through the built-in converter whole.',
    ],
  };
}
