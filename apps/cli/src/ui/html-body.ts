/**
 * An HTML page where an API answer was expected (a proxy's or a gateway's error page, a login
 * page): said as one line naming its title, not as the page's markup pasted into the error.
 */
export function withoutHtmlPage(text: string): string {
  const start = text.search(/<(!doctype html|html)\b/i);
  if (start < 0) return text;
  const title = /<title[^>]*>([^<]*)<\/title>/i
    .exec(text.slice(start))?.[1]
    ?.replace(/\s+/g, ' ')
    .trim();
  const said =
    title === undefined || title === '' ? 'an HTML page' : `an HTML page titled "${title}"`;
  const before = text.slice(0, start).trimEnd();
  // The whole answer a page: said as such, not in brackets after nothing.
  if (before === '') return `${said} (a proxy or gateway answered, not the API)`;
  return `${before} (${said}: a proxy or gateway answered, not the API)`;
}
