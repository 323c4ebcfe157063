/** Registry-wide counters that every node adds to (e.g. searches served), flushed in batches. */
export interface RegistryCountersTable {
  name: string;
  value: number;
}

export const registryCountersTableName = 'registry_counters';
export type RegistryCountersPartial = { [registryCountersTableName]: RegistryCountersTable };
