/**
 * Registrations per client address and per network prefix in fixed windows, kept in the database so
 * the limit holds across nodes. Rows of past windows are useless and deleted.
 */
export interface RegistrationCountsTable {
  /** `address:<ip>` or `prefix:<network>/<bits>`. */
  bucket: string;
  /** Epoch ms at which the window starts (a multiple of its length). */
  window_start: number;
  count: number;
}

export const registrationCountsTableName = 'registration_counts';
export type RegistrationCountsPartial = { [registrationCountsTableName]: RegistrationCountsTable };
