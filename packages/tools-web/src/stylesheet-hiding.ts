/**
 * Text a page's own stylesheets hide: `<style>.x{display:none}</style>` and `<p class="x">` is
 * as invisible to a reader as an inline `style="display:none"`, and as good a place to hide
 * instructions for the model. The `<style>` elements are parsed by linkedom (its CSSOM, cssomnom);
 * each rule that hides — `display:none`, `visibility:hidden|collapse`, a zero `font-size` or
 * `opacity`, `text-indent`/`left`/`top`/margins far off-screen, `clip: rect(0 0 0 0)`,
 * `clip-path: inset(50%)`, `transform: scale(0)` — is applied to the elements it selects, unless
 * the cascade says otherwise for that element: a rule of the same property that wins by
 * `!important`, an inline style, specificity or order (`.tab{display:none}
 * .tab.active{display:block}` keeps the active tab). `@media` blocks count unless they are for
 * print or speech only; `@supports` and `@layer` blocks count (layer order is not modelled: a
 * hiding rule wins such ties). Stylesheets the page links to are not fetched.
 */

/** The DOM surface used here (linkedom's; no DOM lib in this package's types). */
export interface StyledElement {
  getAttribute(name: string): string | null;
  matches(selector: string): boolean;
  remove(): void;
}

interface StyleRuleLike {
  selectorText?: string;
  style?: {
    length: number;
    [index: number]: string;
    getPropertyValue(name: string): string;
    getPropertyPriority(name: string): string;
  };
  media?: { mediaText?: string };
  cssRules?: ArrayLike<StyleRuleLike>;
}

/** The document surface used here. */
export interface StyledDocument {
  querySelectorAll(selector: string): ArrayLike<unknown>;
}

/** One declaration of a property the hiding rules care about. */
interface Declaration {
  selectorText: string;
  property: string;
  hides: boolean;
  important: boolean;
  /** Position in the document's stylesheets: later wins a tie. */
  order: number;
}

const farOffScreen = /^-(?:\d{4,}(?:\.\d+)?(?:px)?|\d{3,}(?:\.\d+)?(?:em|rem|vw|vh|%))$/;

/** Whether `value` of `property` hides the element's text; undefined for properties not modelled. */
function hidingValue(property: string, raw: string): boolean | undefined {
  const value = raw.trim().toLowerCase().replace(/\s+/g, ' ');
  switch (property) {
    case 'display':
      return value === 'none';
    case 'visibility':
      return value === 'hidden' || value === 'collapse';
    case 'font-size':
      return /^0+(?:\.0+)?[a-z%]*$/.test(value);
    case 'opacity':
      return /^0*(?:\.0+)?%?$/.test(value) && value !== '';
    case 'text-indent':
    case 'left':
    case 'top':
    case 'right':
    case 'margin-left':
    case 'margin-top':
      return farOffScreen.test(value);
    case 'clip':
      return /^rect\((?:\s*[01](?:px)?\s*,?){4}\)$/.test(value);
    case 'clip-path':
      return /^(?:inset\((?:50|100)%\)|circle\(0(?:px|%)?\))$/.test(value);
    case 'transform':
      return /^scale[xy]?\(0(?:\.0+)?(?:,\s*0(?:\.0+)?)?\)$/.test(value);
    default:
      return undefined;
  }
}

/** Stylesheet rules and hidden elements looked at, at most: a page cannot make this slow. */
const limits = { declarations: 4096, hidingRules: 512, candidates: 8192 };

/**
 * Selector tests (one element against one selector) allowed by default; past them the remaining
 * hiding rules are applied by the classes and ids they name, without the cascade (failing
 * closed: a hiding rule is taken at its word). 16 kB of CSS and elements in the agent's thread
 * cost ~1 s of tests at load 20 without a bound.
 */
export const defaultStyleWork = 1_000_000;

/** Media that never show on a screen. */
const offScreenMedia = /^\s*(?:only\s+)?(?:print|speech)\s*$/i;

function collect(rules: ArrayLike<StyleRuleLike>, out: Declaration[], depth: number): void {
  if (depth > 16) return;
  for (let index = 0; index < rules.length && out.length < limits.declarations; index++) {
    const rule = rules[index];
    if (rule === undefined) continue;
    if (rule.selectorText !== undefined && rule.style !== undefined) {
      for (let item = 0; item < rule.style.length; item++) {
        const property = rule.style[item]?.toLowerCase();
        if (property === undefined) continue;
        const hides = hidingValue(property, rule.style.getPropertyValue(property));
        if (hides === undefined) continue;
        out.push({
          selectorText: rule.selectorText,
          property,
          hides,
          important: rule.style.getPropertyPriority(property) === 'important',
          order: out.length,
        });
      }
    } else if (rule.cssRules !== undefined && !offScreenMedia.test(rule.media?.mediaText ?? '')) {
      collect(rule.cssRules, out, depth + 1);
    }
  }
}

/** The top-level parts of a selector list (`a, b:is(c, d)` → `a`, `b:is(c, d)`). */
function selectorParts(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let index = 0; index < list.length; index++) {
    const character = list[index];
    if (character === '(' || character === '[') depth++;
    else if (character === ')' || character === ']') depth--;
    else if (character === ',' && depth === 0) {
      parts.push(list.slice(start, index));
      start = index + 1;
    }
  }
  parts.push(list.slice(start));
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}

/**
 * A selector's specificity as one number (ids, then classes/attributes/pseudo-classes, then
 * types/pseudo-elements). `:where()` counts nothing; the arguments of `:is()`/`:not()`/`:has()`
 * are counted whole (the specification takes the most specific one: this can only overcount,
 * which favours the rule that names more).
 */
export function specificity(selector: string): number {
  const text = selector
    .replace(/"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'/g, '')
    .replace(/\[[^\]]*\]/g, '.attribute')
    .replace(/:where\((?:[^()]|\([^()]*\))*\)/gi, '')
    .replace(/:(?:is|not|has|matches)\(/gi, ' (');
  const ids = text.match(/#[\w-]+/g)?.length ?? 0;
  const elements = text.match(/::[\w-]+|(?:^|[\s>+~(])[a-z][\w-]*/gi)?.length ?? 0;
  const classes = text.match(/\.[\w-]+|(?<!:):[\w-]+/g)?.length ?? 0;
  return ids * 1_000_000 + classes * 1_000 + elements;
}

/** The inline `style` declarations of `property`, as `{ value, important }`. */
function inlineDeclaration(
  style: string | null,
  property: string,
): { hides: boolean; important: boolean } | undefined {
  if (style === null || style === '') return undefined;
  let found: { hides: boolean; important: boolean } | undefined;
  for (const declaration of style.split(';')) {
    const colon = declaration.indexOf(':');
    if (colon === -1 || declaration.slice(0, colon).trim().toLowerCase() !== property) continue;
    let value = declaration.slice(colon + 1);
    const important = /!\s*important\s*$/i.test(value);
    if (important) value = value.replace(/!\s*important\s*$/i, '');
    const hides = hidingValue(property, value);
    // The last one written wins, unless an earlier one is important.
    if (hides !== undefined && (found === undefined || important || !found.important))
      found = { hides, important };
  }
  return found;
}

/** An attribute the last compound of a selector requires: present, or equal to `value`. */
interface AttributeKey {
  name: string;
  value: string | undefined;
}

/**
 * The classes, id and attributes the last compound of a selector requires (`div.a > p.b#c` →
 * `.b`, `#c`; `p[data-x="1"]` → `data-x` = `1`; `[hidden-note]` → present). Attribute tests other
 * than presence and `=` (`^=`, `*=`, `~=`…) are left out: the key then asks less (fails closed).
 */
function lastCompoundKeys(selector: string): HidingKey {
  const last =
    selector
      .split(/[\s>+~]+(?![^[]*\])/)
      .filter((part) => part !== '')
      .at(-1) ?? '';
  const attributes: AttributeKey[] = [];
  for (const [, name = '', operator, quoted, bare] of last.matchAll(
    /\[\s*([\w-]+)\s*(?:([~|^$*]?=)\s*(?:"([^"]*)"|'[^']*'|([^\]\s]*))\s*(?:[is]\s*)?)?\]/g,
  )) {
    const value = operator === '=' ? (quoted ?? bare ?? '') : undefined;
    if (operator === undefined || operator === '=')
      attributes.push({ name: name.toLowerCase(), value });
    else attributes.push({ name: name.toLowerCase(), value: undefined });
  }
  const plain = last.replace(/\([^)]*\)|\[[^\]]*\]/g, '');
  return {
    classes: [...plain.matchAll(/\.([\w-]+)/g)].map((match) => match[1] ?? ''),
    id: /#([\w-]+)/.exec(plain)?.[1],
    attributes,
  };
}

/**
 * Removes the elements the page's `<style>` sheets hide (see the file comment); run before the
 * `<style>` elements themselves are removed. `maxWork` bounds the selector tests (see
 * {@link defaultStyleWork}). Returns how many elements were removed.
 */
export function removeStylesheetHidden(
  document: StyledDocument,
  maxWork: number = defaultStyleWork,
): number {
  const declarations: Declaration[] = [];
  const styles = Array.from(document.querySelectorAll('style')) as {
    sheet?: { cssRules?: ArrayLike<StyleRuleLike> };
  }[];
  for (const style of styles) {
    try {
      const rules = style.sheet?.cssRules;
      if (rules !== undefined) collect(rules, declarations, 0);
    } catch {
      // A sheet the parser cannot read hides nothing we can name.
    }
  }
  const hiding = declarations.filter((item) => item.hides).slice(0, limits.hidingRules);
  if (hiding.length === 0) return 0;
  const byProperty = new Map<string, Declaration[]>();
  for (const item of declarations) {
    const list = byProperty.get(item.property) ?? [];
    list.push(item);
    byProperty.set(item.property, list);
  }
  const everything = Array.from(document.querySelectorAll('*')) as StyledElement[];
  let checks = everything.length;
  const specificities = new Map<string, number>();
  /** The declaration's rank for `element`, or undefined when it does not apply to it. */
  const rank = (item: Declaration, element: StyledElement): number[] | undefined => {
    let best: number | undefined;
    for (const part of selectorParts(item.selectorText)) {
      checks++;
      let matched = false;
      try {
        matched = element.matches(part);
      } catch {
        matched = false;
      }
      if (matched) {
        let value = specificities.get(part);
        if (value === undefined) {
          value = specificity(part);
          specificities.set(part, value);
        }
        best = Math.max(best ?? 0, value);
      }
    }
    return best === undefined ? undefined : [item.important ? 1 : 0, 0, best, item.order];
  };
  const before = (a: number[], b: number[]) => {
    for (let index = 0; index < a.length; index++)
      if ((a[index] ?? 0) !== (b[index] ?? 0)) return (a[index] ?? 0) < (b[index] ?? 0);
    return false;
  };
  /** Whether the declaration that wins `property` for `element` hides it. */
  const hiddenBy = (element: StyledElement, property: string): boolean => {
    // Past the budget a hiding rule is taken at its word.
    if (checks > maxWork) return true;
    let winner: { rank: number[]; hides: boolean } | undefined;
    for (const item of byProperty.get(property) ?? []) {
      if (checks > maxWork) return true;
      const itemRank = rank(item, element);
      if (itemRank !== undefined && (winner === undefined || !before(itemRank, winner.rank)))
        winner = { rank: itemRank, hides: item.hides };
    }
    const inline = inlineDeclaration(element.getAttribute('style'), property);
    if (inline !== undefined) {
      const inlineRank = [inline.important ? 1 : 0, 1, 0, 0];
      if (winner === undefined || !before(inlineRank, winner.rank))
        winner = { rank: inlineRank, hides: inline.hides };
    }
    return winner?.hides === true;
  };

  const removed = new Set<StyledElement>();
  let candidates = 0;
  let index = 0;
  for (; index < hiding.length && checks + everything.length <= maxWork; index++) {
    const item = hiding[index] as Declaration;
    checks += everything.length;
    let elements: StyledElement[];
    try {
      elements = Array.from(document.querySelectorAll(item.selectorText)) as StyledElement[];
    } catch {
      // A selector linkedom cannot match (`:hover`, an unknown pseudo-class) says nothing here.
      continue;
    }
    for (const element of elements) {
      if (removed.has(element)) continue;
      if (++candidates > limits.candidates) break;
      if (hiddenBy(element, item.property)) removed.add(element);
    }
  }
  // Past the budget: the rules left, by the classes and id they name (no descendant or
  // attribute conditions, no cascade); a rule naming neither is not applied.
  if (index < hiding.length) {
    const rest = hiding.slice(index).flatMap((item) => selectorParts(item.selectorText));
    const matches = keyMatcher(rest.map(lastCompoundKeys).filter(namesSomething));
    for (const element of everything) {
      if (removed.has(element)) continue;
      if (matches((name) => element.getAttribute(name) ?? undefined)) removed.add(element);
    }
  }
  for (const element of removed) element.remove();
  return removed.size;
}

/** What an element must carry for a hiding rule to be applied to it by name (no DOM, no cascade). */
interface HidingKey {
  classes: string[];
  id: string | undefined;
  attributes: AttributeKey[];
}

/** Rules that name only attributes, checked against every element: at most this many. */
const maxAttributeOnlyKeys = 64;

/**
 * Whether an element's attributes carry every class (and the id) of one of `keys`; keys are
 * looked up by their id, else their first class, so an element checks only those it could match.
 */
function keyMatcher(
  keys: readonly HidingKey[],
): (attribute: (name: string) => string | undefined) => boolean {
  const byName = new Map<string, HidingKey[]>();
  const attributeOnly: HidingKey[] = [];
  for (const key of keys) {
    const first = key.classes[0];
    if (key.id === undefined && first === undefined) {
      if (attributeOnly.length < maxAttributeOnlyKeys) attributeOnly.push(key);
      continue;
    }
    const name = key.id === undefined ? `.${first}` : `#${key.id}`;
    const list = byName.get(name);
    if (list === undefined) byName.set(name, [key]);
    else list.push(key);
  }
  return (attribute) => {
    const id = attribute('id');
    const classes = new Set((attribute('class') ?? '').split(/\s+/).filter((name) => name !== ''));
    const fits = (key: HidingKey) =>
      (key.id === undefined || key.id === id) &&
      key.classes.every((item) => classes.has(item)) &&
      key.attributes.every(({ name, value }) => {
        const actual = attribute(name);
        return actual !== undefined && (value === undefined || actual === value);
      });
    const names = [...classes].map((name) => `.${name}`);
    if (id !== undefined) names.push(`#${id}`);
    return names.some((name) => (byName.get(name) ?? []).some(fits)) || attributeOnly.some(fits);
  };
}

/**
 * For the whole-page converter, which has no DOM to match selectors on (a page over 5 MB, one
 * whose article extraction ran out of time, one the DOM could not be built for): a test of an
 * element's attributes against the hiding rules of the page's `<style>` texts, by the classes and
 * id and attributes each rule's last compound names, without the cascade — failing closed
 * (`.tab{display:none} .tab.active{display:block}` drops the active tab too; a print-only
 * `@media` block counts). A rule naming none (`div p`) is not applied. Undefined when no rule hides anything this way.
 *
 * The rules are found by one linear scan of `selector { declarations }` pairs, not by a CSS
 * parser: this runs in the agent's thread after a worker's time limit, and cssomnom took ~3 s
 * there for 1 MB of rules.
 */
export function sheetHidingMatcher(
  styles: readonly string[],
): ((attributes: Readonly<Record<string, string | undefined>>) => boolean) | undefined {
  const keys: HidingKey[] = [];
  for (const style of styles) {
    const css = style.replace(/\/\*[\s\S]*?(?:\*\/|$)/g, ' ');
    // Innermost blocks only: an @media or @supports block's own header never precedes them.
    for (const [, selectorText = '', block = ''] of css.matchAll(/([^{}]*)\{([^{}]*)\}/g)) {
      const selector = selectorText.trim();
      if (selector === '' || selector.startsWith('@')) continue;
      const hides = block.split(';').some((declaration) => {
        const colon = declaration.indexOf(':');
        if (colon === -1) return false;
        const property = declaration.slice(0, colon).trim().toLowerCase();
        const value = declaration.slice(colon + 1).replace(/!\s*important\s*$/i, '');
        return hidingValue(property, value) === true;
      });
      if (!hides) continue;
      for (const part of selectorParts(selector)) {
        const key = lastCompoundKeys(part);
        if (namesSomething(key)) keys.push(key);
      }
    }
  }
  if (keys.length === 0) return undefined;
  const matches = keyMatcher(keys);
  return (attributes) => matches((name) => attributes[name]);
}

/** Whether a key names a class, an id or an attribute (a bare type selector names none). */
function namesSomething(key: HidingKey): boolean {
  return key.classes.length > 0 || key.id !== undefined || key.attributes.length > 0;
}
