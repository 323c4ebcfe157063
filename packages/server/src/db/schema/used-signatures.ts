/**
 * Authentication messages already exchanged for a token, so each signature works once. Kept in the
 * database so the rule holds across nodes; a row is useless (and swept) once its timestamp is too old
 * to be accepted anyway.
 */
export interface UsedSignaturesTable {
  /** SHA-256 (hex) of the signed message text: a re-encoded signature over the same text is the same use. */
  digest: string;
  expires_at: number;
}

export const usedSignaturesTableName = 'used_signatures';
export type UsedSignaturesPartial = { [usedSignaturesTableName]: UsedSignaturesTable };
