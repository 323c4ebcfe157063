import type { FastifyReply } from 'fastify';
import {
  AUTH_AUDIENCE_INTRODUCED_AT,
  deprecationAdvice,
  windowEnd,
  type DeprecatedAuthForm,
} from '../../kernel/auth-deprecation.js';

/** The page that explains how to sign the current forms (served by the web pages). */
export const SIGNING_ROUTE = '/docs/signing';

const WHAT: Record<DeprecatedAuthForm, string> = {
  token_without_aud: 'This token has no "aud" claim',
  login_without_audience: 'The signed login message has no "audience"',
};

/** An HTTP quoted-string (RFC 9110, section 5.6.4). */
const quoted = (text: string): string => `"${text.replace(/["\\]/g, (character) => `\\${character}`)}"`;

/**
 * Marks an answer to a request that used a deprecated authentication form: `Deprecation` (RFC 9745,
 * a structured-field date: since when), `Sunset` (RFC 8594, an HTTP-date: when it stops working),
 * `Link` with rel="deprecation" to the signing document, and `Warning: 299` (RFC 7234, section
 * 5.5.7) saying in words what to change, for clients that log warnings but know neither header.
 */
export function markDeprecated(
  reply: FastifyReply,
  form: DeprecatedAuthForm,
  until: number,
  audience: string,
): void {
  const text = `${WHAT[form]}; it is accepted until ${windowEnd(until)}: ${deprecationAdvice(form, audience)}`;
  void reply
    .header('deprecation', `@${Math.floor(AUTH_AUDIENCE_INTRODUCED_AT / 1000)}`)
    .header('sunset', new Date(until).toUTCString())
    .header('link', `<${SIGNING_ROUTE}>; rel="deprecation"; type="text/html"`)
    .header('warning', `299 - ${quoted(text)}`);
}
