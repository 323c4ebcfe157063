/**
 * Forms of authentication from before tokens and login messages named this registry, still accepted
 * for a deprecation window (LEGACY_AUTH_UNTIL) so that clients can upgrade without being locked out:
 * a token without `aud`, and the login message `{purpose:"authenticate", did, timestamp}`.
 */
export type DeprecatedAuthForm = 'token_without_aud' | 'login_without_audience';

/** The day tokens gained `aud` and the login message `audience`: when the forms without them were deprecated. */
export const AUTH_AUDIENCE_INTRODUCED_AT = Date.UTC(2026, 10, 23);

/** A window end as clients read it in errors and warnings, e.g. `2027-03-01T00:00:00Z`. */
export const windowEnd = (until: number): string => new Date(until).toISOString().replace('.000Z', 'Z');

/** What a client is told about a deprecated form it used: in the Warning header, or the error once refused. */
export function deprecationAdvice(form: DeprecatedAuthForm, audience: string): string {
  return form === 'token_without_aud'
    ? 'get a new token at POST /api/auth/token'
    : `sign {purpose:"authenticate", did, audience:"${audience}", timestamp} instead (docs/signing.md, section "Authentication (POST /api/auth/token)")`;
}
