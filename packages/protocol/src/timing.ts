/** Registration timestamps may be this far from the registry's clock either way (interface section 5). */
export const REGISTRATION_TIMESTAMP_SKEW_MS = 5 * 60 * 1000;
/** An authentication signature is accepted for this long after its timestamp (and only once). */
export const AUTHENTICATION_MAX_AGE_MS = 5 * 60 * 1000;
/** An authentication timestamp may be at most this far ahead of the registry's clock. */
export const AUTHENTICATION_MAX_FUTURE_MS = 60 * 1000;
