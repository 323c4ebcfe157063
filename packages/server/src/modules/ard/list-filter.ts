import { BadRequestError } from '../../kernel/errors.js';

/** The fields of GET /agents' filter expression (ard-spec Appendix A). */
export const LIST_FILTER_FIELDS = [
  'displayName',
  'type',
  'publisherId',
  'createdAfter',
  'updatedAfter',
] as const;
type ListFilterField = (typeof LIST_FILTER_FIELDS)[number];

/** A parsed filter: every constraint must hold (AND); a list's values are alternatives (OR). */
export interface ListFilter {
  /** Lower-cased: the entry's displayName contains it, ignoring case. */
  displayName?: string;
  /** Lower-cased media types. */
  type?: string[];
  /** Lower-cased publisher domains. */
  publisherId?: string[];
  /** Epoch ms: created strictly after. */
  createdAfter?: number;
  /** Epoch ms: last changed strictly after. */
  updatedAfter?: number;
}

/** ISO 8601 as ARD writes it: a date, or a date-time with seconds optional and Z or an offset. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;
const GRAMMAR =
  "<field> = '<value>' joined by AND, e.g. type = 'application/a2a-agent-card+json' AND createdAfter > '2026-01-01'";

function invalid(message: string): BadRequestError {
  return new BadRequestError('VALIDATION_FAILED', `filter: ${message}`);
}

function isListFilterField(name: string): name is ListFilterField {
  return (LIST_FILTER_FIELDS as readonly string[]).includes(name);
}

function instant(field: string, value: string): number {
  const at = ISO_INSTANT.test(value) ? Date.parse(value) : Number.NaN;
  // Date.parse rolls 2026-02-30 over to March: a date that does not read back the same is refused.
  const day = value.slice(0, 10);
  if (Number.isNaN(at) || new Date(Date.parse(day)).toISOString().slice(0, 10) !== day) {
    throw invalid(
      `${field} takes an ISO 8601 date or date-time such as '2026-01-01' or '2026-01-01T12:00:00Z'`,
    );
  }
  return at;
}

function alternatives(field: string, value: string): string[] {
  const values = value.split(',').map((part) => part.trim().toLowerCase());
  if (values.some((part) => part === '')) throw invalid(`${field} has an empty value between its commas`);
  return values;
}

/**
 * GET /agents' filter expression (ard-spec Appendix A and its OpenAPI example), as docs/ard.md gives its
 * grammar: `field op 'value'` constraints joined by AND; type and publisherId take comma-separated
 * alternatives; displayName matches a part of the name, ignoring case; createdAfter and updatedAfter take
 * an ISO 8601 instant with `>` (or `=`). Anything else is a 400 saying where and what to write instead.
 */
export function parseListFilter(text: string): ListFilter {
  const filter: ListFilter = {};
  let at = 0;
  const skipSpace = () => {
    while (at < text.length && /\s/.test(text[at] as string)) at += 1;
  };
  const where = () => (at >= text.length ? 'at the end' : `at character ${at + 1}`);
  for (;;) {
    skipSpace();
    const name = /^[A-Za-z][A-Za-z0-9_.]*/.exec(text.slice(at))?.[0];
    if (name === undefined) throw invalid(`expected a field name ${where()}; write ${GRAMMAR}`);
    if (!isListFilterField(name)) {
      throw invalid(`field "${name.slice(0, 64)}" is not supported; use ${LIST_FILTER_FIELDS.join(', ')}`);
    }
    if (name in filter) {
      throw invalid(
        `${name} appears twice; constraints on one field are not combined (give type and publisherId alternatives comma-separated in one value)`,
      );
    }
    at += name.length;
    skipSpace();
    const operator = text[at];
    const after = name === 'createdAfter' || name === 'updatedAfter';
    if (operator !== '=' && !(after && operator === '>')) {
      throw invalid(`expected ${after ? '> or =' : '='} after ${name} ${where()}`);
    }
    at += 1;
    skipSpace();
    const quote = text[at];
    if (quote !== "'" && quote !== '"') {
      throw invalid(
        `expected a value in quotes after ${name} ${operator} ${where()}, e.g. ${name} ${operator} '...'`,
      );
    }
    let value = '';
    at += 1;
    for (;;) {
      if (at >= text.length) throw invalid(`the value of ${name} has no closing ${quote}`);
      const char = text[at] as string;
      at += 1;
      if (char !== quote) value += char;
      else if (text[at] === quote) {
        // A doubled quote stands for the quote itself.
        value += quote;
        at += 1;
      } else break;
    }
    if (value.trim() === '') throw invalid(`the value of ${name} is empty`);
    if (name === 'displayName') filter.displayName = value.toLowerCase();
    else if (name === 'type') filter.type = alternatives(name, value);
    else if (name === 'publisherId') filter.publisherId = alternatives(name, value);
    else filter[name] = instant(name, value.trim());
    skipSpace();
    if (at >= text.length) return filter;
    const joiner = /^[A-Za-z]+/.exec(text.slice(at))?.[0];
    if (joiner?.toUpperCase() !== 'AND' || !/\s/.test(text[at + 3] ?? ' ')) {
      throw invalid(
        `expected AND ${where()}: constraints are joined by AND only (alternatives go comma-separated in one value of type or publisherId)`,
      );
    }
    at += 3;
  }
}
