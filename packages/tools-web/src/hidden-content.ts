/**
 * Text a browser does not show: a page can hide instructions for the model in an element the
 * reader never sees (`display:none`, `visibility:hidden`, a zero font size or opacity). Such
 * elements are left out of what web_fetch returns, as `hidden` and `aria-hidden` ones are, and
 * those the page's own `<style>` sheets hide (stylesheet-hiding.ts). Linked stylesheets are not
 * fetched; the fence around the page remains the defence for what they hide.
 */
import {
  defaultStyleWork,
  removeStylesheetHidden,
  type StyledDocument,
} from './stylesheet-hiding.js';

/** Declarations of an inline `style` that hide an element. */
const hidingDeclaration =
  /^(display\s*:\s*none|visibility\s*:\s*(hidden|collapse)|font-size\s*:\s*0+(\.0+)?([a-z%]+)?|opacity\s*:\s*0*(\.0+)?%?)\s*(!\s*important)?$/i;

/** Whether an inline `style` attribute hides its element. */
export function hiddenByStyle(style: string | null | undefined): boolean {
  if (style === null || style === undefined || style === '') return false;
  return style.split(';').some((declaration) => hidingDeclaration.test(declaration.trim()));
}

/** Elements whose content a browser does not show as text. */
export const unrenderedSelector = 'template, script, style, noscript, svg, math';

/** The DOM surface {@link removeHiddenElements} uses (no DOM lib in this package's types). */
interface HidingDocument extends StyledDocument {
  querySelectorAll(selector: string): ArrayLike<{
    getAttribute(name: string): string | null;
    remove(): void;
  }>;
}

/**
 * Removes what a browser would not show as text from a parsed page (before Readability reads
 * it). Returns how many elements its stylesheets hid (the page's HTML no longer says so).
 */
export function removeHiddenElements(
  document: HidingDocument,
  maxStyleWork: number = defaultStyleWork,
): number {
  // First: the rules live in the `<style>` elements removed next.
  const bySheet = removeStylesheetHidden(document, maxStyleWork);
  for (const element of Array.from(document.querySelectorAll(unrenderedSelector))) element.remove();
  for (const element of Array.from(document.querySelectorAll('[style]')))
    if (hiddenByStyle(element.getAttribute('style'))) element.remove();
  for (const element of Array.from(document.querySelectorAll('[hidden], [aria-hidden="true"]')))
    element.remove();
  return bySheet;
}
