import * as fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { type HtmlToMarkdownResult, htmlToMarkdown } from './html-to-markdown.js';
import { type HtmlToTextOptions, htmlToText } from './html-to-text.js';
import { type HtmlWorkerData, htmlWorkerMarker } from './html-worker.js';

/** How {@link convertHtml} converts a page. */
export interface ConvertHtmlOptions extends HtmlToTextOptions {
  /** Stops the conversion (the worker is ended) and rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Time the article extraction of a large page may take in its worker before the page is
   * converted whole instead (linear time) [10,000 ms].
   */
  articleTimeoutMs?: number;
  /** The worker module; `null`: convert in this thread [`html-worker.js` next to this module]. */
  workerUrl?: URL | null;
}

/** What {@link convertHtml} returns: {@link HtmlToMarkdownResult}, and why an article was not looked for. */
export interface ConvertHtmlResult extends HtmlToMarkdownResult {
  /** Set when the article extraction ran out of time and the page was converted whole. */
  articleTimedOut?: true;
}

/**
 * Pages below this size are converted in the calling thread, within {@link inThreadTreeWork}
 * (a worker's start costs tens of milliseconds). It was 256 kB: a hostile page of that size held
 * the agent's thread for 4–14 s (1,000s of elements nested 120 deep, 30,000 links).
 */
export const workerThresholdChars = 16 * 1024;

/**
 * The most Readability may be given in the calling thread, as the sum of every element's depth
 * (html-to-markdown.ts); a page beyond it is converted whole, in linear time. Real pages under
 * {@link workerThresholdChars} stay below it (a whole 56 kB news article: 3,908, and it goes to
 * the worker); 120 nested `<div>`s alone (7,260) took 130 ms, 800 links (2,400) 300 ms.
 */
export const inThreadTreeWork = 2_000;

/**
 * The selector tests a page's stylesheets may cost in the calling thread (stylesheet-hiding.ts);
 * past them the remaining hiding rules apply by the classes and ids they name.
 */
export const inThreadStyleWork = 20_000;

/** The heap a conversion's worker may use: a hostile page cannot take the agent's memory. */
const workerHeapMb = 1024;

/**
 * The worker module next to this one: `html-worker.js` in dist (also next to the chunks of a
 * bundle that lists it as an entry, as the CLI does); undefined when it is not there (run from
 * source, or bundled without it), and pages are then converted in the calling thread.
 */
export function defaultHtmlWorkerUrl(): URL | undefined {
  const url = new URL('./html-worker.js', import.meta.url);
  return url.protocol === 'file:' && fs.existsSync(url) ? url : undefined;
}

/**
 * HTML → Markdown for web_fetch without blocking the agent: a page over
 * {@link workerThresholdChars} is taken apart in a worker thread (Readability over a DOM is
 * linear on ordinary pages, ~1–3 s a MB, but took 12 s on 1 MB of deeply nested elements), so
 * aborts, timeouts and the other calls go on meanwhile; an abort ends the worker at once; an
 * extraction over `articleTimeoutMs` — or a worker that fails (out of its heap) — gives the whole
 * page through the linear converter instead.
 */
export async function convertHtml(
  html: string,
  options: ConvertHtmlOptions = {},
): Promise<ConvertHtmlResult> {
  const { signal, articleTimeoutMs = 10_000, workerUrl, ...conversion } = options;
  signal?.throwIfAborted();
  const url = workerUrl === undefined ? defaultHtmlWorkerUrl() : workerUrl;
  if (html.length < workerThresholdChars)
    return htmlToMarkdown(html, {
      ...conversion,
      maxTreeWork: inThreadTreeWork,
      maxStyleWork: inThreadStyleWork,
    });
  // No worker (run from source, bundled without it): as before, in this thread, unbounded.
  if (url === null || url === undefined) return htmlToMarkdown(html, conversion);
  const outcome = await inWorker(url, html, conversion, articleTimeoutMs, signal);
  if (outcome !== 'timeout' && outcome !== 'failed') return outcome;
  signal?.throwIfAborted();
  return {
    ...htmlToText(html, conversion),
    extracted: 'page',
    ...(outcome === 'timeout' ? { articleTimedOut: true as const } : {}),
  };
}

function inWorker(
  url: URL,
  html: string,
  options: HtmlToTextOptions,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<HtmlToMarkdownResult | 'timeout' | 'failed'> {
  return new Promise((resolve, reject) => {
    const workerData: HtmlWorkerData = { marker: htmlWorkerMarker, html, options };
    let worker: Worker;
    try {
      worker = new Worker(url, {
        workerData,
        resourceLimits: { maxOldGenerationSizeMb: workerHeapMb },
        // Its output is ours to read: nothing it prints reaches the terminal.
        stdout: true,
        stderr: true,
      });
    } catch {
      // A worker that cannot even be started (no threads left, a bad URL): as one that failed.
      resolve('failed');
      return;
    }
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      // Ended whatever happened: a finished worker exits anyway; a busy one is stopped.
      void worker.terminate();
      settle();
    };
    const onAbort = () => finish(() => reject(signal?.reason));
    const timer = setTimeout(() => finish(() => resolve('timeout')), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (result: HtmlToMarkdownResult) => finish(() => resolve(result)));
    // `on`, not `once`: an 'error' with no listener would throw in this thread.
    worker.on('error', () => finish(() => resolve('failed')));
    worker.once('exit', () => finish(() => resolve('failed')));
  });
}
