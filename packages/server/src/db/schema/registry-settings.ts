/** Small key/value store for registry-wide state that every node must share (e.g. the token signing key). */
export interface RegistrySettingsTable {
  key: string;
  value: string;
  created_at: number;
}

export const registrySettingsTableName = 'registry_settings';
export type RegistrySettingsPartial = { [registrySettingsTableName]: RegistrySettingsTable };
