import { BadRequestError } from '../../kernel/errors.js';
import { REVIEW_RULES } from '../../kernel/discovery-rules.js';

const TWO_DECIMALS = /^(\d+)(?:\.(\d{1,2}))?$/;

/**
 * A rating as integer hundredths, or a 400. Decimals are counted on the number's shortest
 * round-trip decimal form (the digits the client wrote, as JSON.stringify and Python print it), never
 * with binary arithmetic: 1.13 and 9.99 have two decimals even though no double equals them, and
 * 1.005 has three although 1.005 * 100 rounds to 100.5 in floating point.
 */
export function ratingHundredths(value: number, field = 'rating'): number {
  const match = Number.isFinite(value) ? TWO_DECIMALS.exec(String(value)) : null;
  const hundredths =
    match === null ? Number.NaN : Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  if (!(hundredths >= REVIEW_RULES.ratingMinHundredths && hundredths <= REVIEW_RULES.ratingMaxHundredths)) {
    throw new BadRequestError(
      'INVALID_RATING',
      `${field} must be a number from ${REVIEW_RULES.ratingMin.toFixed(2)} to ${REVIEW_RULES.ratingMax.toFixed(2)} with at most two decimals, got ${String(value)}`,
    );
  }
  return hundredths;
}

export const ratingFromHundredths = (hundredths: number): number => hundredths / 100;
