/**
 * A tiny HTML template tag that escapes by construction: every interpolated value is escaped unless it
 * is already `Html` produced by this tag. There is no way to mark a plain string as safe except `trusted`,
 * which only takes string literals we wrote (SVG icons), never user data.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (char) => ESCAPES[char] ?? char);
}

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.value;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i += 1) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** Markup we wrote ourselves (a constant); the type keeps user strings out. */
export function trusted<T extends string>(literal: T & (string extends T ? never : T)): Html {
  return new Html(literal);
}

/** Only http(s) URLs become links or images; `javascript:`, `data:` and the rest render as text. */
export function safeHttpUrl(raw: string | null | undefined): string | undefined {
  if (raw === null || raw === undefined) return undefined;
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}
