/**
 * The worker thread of {@link convertHtml}: one page's HTML → Markdown (Readability over a
 * linkedom DOM, then turndown) off the agent's main thread, so a page that is slow to take apart
 * cannot freeze the loop, its aborts and timeouts. Started for one conversion and then ended.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { htmlToMarkdown } from './html-to-markdown.js';
import type { HtmlToTextOptions } from './html-to-text.js';

/** What the worker is started with. */
export interface HtmlWorkerData {
  marker: typeof htmlWorkerMarker;
  html: string;
  options: HtmlToTextOptions;
}

/** Tells the worker's start from a plain import of this module (tests import the types). */
export const htmlWorkerMarker = 'agent-tools-web-html-worker';

const data = workerData as Partial<HtmlWorkerData> | undefined;
if (parentPort !== null && data?.marker === htmlWorkerMarker && typeof data.html === 'string')
  parentPort.postMessage(htmlToMarkdown(data.html, data.options ?? {}));
