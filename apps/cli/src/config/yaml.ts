/**
 * `yaml`'s parser behind an ES module of our own: `yaml` is CommonJS under Node, and a bundle's
 * lazily loaded chunk of a CommonJS package keeps only its default export, so the CLI imports this
 * module lazily instead of `yaml` itself.
 */
export { parse } from 'yaml';
