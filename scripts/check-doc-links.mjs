// Checks that every relative link in the repository's Markdown files reaches an existing file and, when it
// names one, a heading of that file (GitHub's anchor rules). Run: node scripts/check-doc-links.mjs
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const root = path.resolve(import.meta.dirname, '..');
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.md'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => file !== '' && fs.existsSync(path.join(root, file)));

/** Markdown text without fenced code blocks and inline code spans, so links in examples are not read. */
function prose(markdown) {
  return markdown
    .replace(/^([ \t]*)(`{3,}|~{3,})[^\n]*\n[\s\S]*?\n\1\2[^\n]*$/gm, '')
    .replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown) {
  const anchors = new Set();
  const seen = new Map();
  const text = markdown.replace(/^([ \t]*)(`{3,}|~{3,})[^\n]*\n[\s\S]*?\n\1\2[^\n]*$/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    // Code spans keep their text (`<file>` included); outside them, links keep their text and tags go.
    const plain = heading
      .split(/(`[^`]*`)/)
      .map((part, index) =>
        index % 2 === 1 ? part : part.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, ''),
      )
      .join('');
    const base = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    anchors.add(count === 0 ? base : `${base}-${count}`);
    seen.set(base, count + 1);
  }
  for (const [, id] of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id);
  return anchors;
}

const anchorCache = new Map();
function anchorsOfFile(file) {
  if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(fs.readFileSync(file, 'utf8')));
  return anchorCache.get(file);
}

const problems = [];
let checked = 0;
for (const file of files) {
  const text = prose(fs.readFileSync(path.join(root, file), 'utf8'));
  const targets = [
    ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]),
    ...[...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((match) => match[1]),
  ];
  for (const target of targets) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    checked += 1;
    const [pathPart, anchor] = target.split('#', 2);
    const resolved =
      pathPart === ''
        ? path.join(root, file)
        : path.resolve(path.dirname(path.join(root, file)), decodeURI(pathPart));
    if (!fs.existsSync(resolved)) {
      problems.push(`${file}: ${target}: no such file`);
      continue;
    }
    if (
      anchor !== undefined &&
      resolved.endsWith('.md') &&
      !anchorsOfFile(resolved).has(decodeURIComponent(anchor))
    ) {
      problems.push(`${file}: ${target}: no such heading`);
    }
  }
}
for (const problem of problems) process.stderr.write(`${problem}\n`);
process.stdout.write(
  `${checked} relative links in ${files.length} Markdown files, ${problems.length} broken\n`,
);
process.exitCode = problems.length === 0 ? 0 : 1;
