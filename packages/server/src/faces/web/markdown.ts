import { html, safeHttpUrl, type Html } from './html.js';

/**
 * Just enough Markdown for the repository's own documents (headings, paragraphs, lists, fenced code,
 * inline code, links, bold), escaped like every page; raw HTML in the source is shown as text.
 */
const HEADINGS: ((content: Html) => Html)[] = [
  (content) => html`<h1>${content}</h1>`,
  (content) => html`<h2>${content}</h2>`,
  (content) => html`<h3>${content}</h3>`,
  (content) => html`<h4>${content}</h4>`,
  (content) => html`<h5>${content}</h5>`,
  (content) => html`<h6>${content}</h6>`,
];

export function renderMarkdown(source: string): Html {
  const lines = source.replace(/\r\n/g, '\n').split('\n');
  const blocks: Html[] = [];
  let paragraph: string[] = [];
  let list: { ordered: boolean; items: string[] } | undefined;
  const flush = () => {
    if (paragraph.length > 0) blocks.push(html`<p>${inline(paragraph.join(' '))}</p>`);
    paragraph = [];
    if (list !== undefined) {
      const items = list.items.map((item) => html`<li>${inline(item)}</li>`);
      blocks.push(
        list.ordered
          ? html`<ol>
              ${items}
            </ol>`
          : html`<ul>
              ${items}
            </ul>`,
      );
    }
    list = undefined;
  };
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? '';
    const fence = /^```(\S*)/.exec(line);
    if (fence !== null) {
      flush();
      const code: string[] = [];
      for (i += 1; i < lines.length && !(lines[i] ?? '').startsWith('```'); i += 1) code.push(lines[i] ?? '');
      blocks.push(html`<pre tabindex="0"><code>${code.join('\n')}</code></pre>`);
      continue;
    }
    if (line.startsWith('|')) {
      flush();
      const rows: string[][] = [];
      for (; i < lines.length && (lines[i] ?? '').startsWith('|'); i += 1) rows.push(cells(lines[i] ?? ''));
      i -= 1;
      blocks.push(table(rows));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading !== null) {
      flush();
      const level = (heading[1] ?? '#').length;
      blocks.push(HEADINGS[level - 1]?.(inline(heading[2] ?? '')) ?? html``);
      continue;
    }
    const item = /^\s*([-*]|\d+\.)\s+(.*)$/.exec(line);
    if (item !== null) {
      const ordered = /\d/.test(item[1] ?? '');
      if (paragraph.length > 0 || (list !== undefined && list.ordered !== ordered)) flush();
      list ??= { ordered, items: [] };
      list.items.push(item[2] ?? '');
      continue;
    }
    if (line.trim() === '') {
      flush();
      continue;
    }
    if (list !== undefined && /^\s+\S/.test(line)) {
      list.items[list.items.length - 1] += ` ${line.trim()}`;
      continue;
    }
    if (list !== undefined) flush();
    paragraph.push(line.trim());
  }
  flush();
  return html`${blocks}`;
}

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((cell) => cell.trim());
}

/** A pipe table; the second row is the |---| separator. Wide tables scroll inside their own box. */
function table(rows: string[][]): Html {
  const [head, separator, ...body] = rows;
  const isSeparator = separator !== undefined && separator.every((cell) => /^:?-+:?$/.test(cell));
  const bodyRows = isSeparator ? body : rows.slice(1);
  return html`<div class="table-scroll" tabindex="0"><table>${
    head === undefined
      ? ''
      : html`<thead><tr>${head.map((cell) => html`<th scope="col">${inline(cell)}</th>`)}</tr></thead>`
  }<tbody>${bodyRows.map((row) => html`<tr>${row.map((cell) => html`<td>${inline(cell)}</td>`)}</tr>`)}</tbody></table></div>`;
}

/** `code`, **bold** and [text](url) (http(s) or a relative path only); everything else is text. */
function inline(text: string): Html {
  const parts: Html[] = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    parts.push(html`${text.slice(last, match.index)}`);
    if (match[1] !== undefined) parts.push(html`<code>${match[1]}</code>`);
    else if (match[2] !== undefined) parts.push(html`<strong>${match[2]}</strong>`);
    else {
      const target = match[4] ?? '';
      const href = safeHttpUrl(target) ?? (/^[#./a-zA-Z0-9_-][^:]*$/.test(target) ? target : undefined);
      parts.push(href === undefined ? html`${match[3]}` : html`<a href="${href}">${match[3]}</a>`);
    }
    last = match.index + match[0].length;
  }
  parts.push(html`${text.slice(last)}`);
  return html`${parts}`;
}
