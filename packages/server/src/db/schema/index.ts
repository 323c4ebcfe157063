import type { AgentsPartial } from './agents.js';
import type { RegistrySettingsPartial } from './registry-settings.js';

export type DatabaseSchema = AgentsPartial & RegistrySettingsPartial;

export type { AgentsTable, AgentStatus } from './agents.js';
export type { RegistrySettingsTable } from './registry-settings.js';
