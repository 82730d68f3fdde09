// Changelog lines for `changeset version`: the changeset's text as written for users (no commit
// hashes), and one line naming the @agent packages a release picked up new versions of.
'use strict';

async function getReleaseLine(changeset) {
  const [first, ...rest] = changeset.summary.trim().split('\n');
  const body = rest.map((line) => (line.trim() === '' ? '' : `  ${line}`)).join('\n');
  return `- ${first}${body === '' ? '' : `\n${body}`}`;
}

async function getDependencyReleaseLine(_changesets, dependenciesUpdated) {
  if (dependenciesUpdated.length === 0) return '';
  const names = dependenciesUpdated.map(
    (dependency) => `${dependency.name}@${dependency.newVersion}`,
  );
  return `- Uses ${names.join(', ')}.`;
}

module.exports = {
  default: { getReleaseLine, getDependencyReleaseLine },
  getReleaseLine,
  getDependencyReleaseLine,
};
