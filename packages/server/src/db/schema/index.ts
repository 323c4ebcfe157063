import type { AgentsPartial } from './agents.js';
import type { RegistrySettingsPartial } from './registry-settings.js';
import type { TasksPartial } from './tasks.js';

export type DatabaseSchema = AgentsPartial & RegistrySettingsPartial & TasksPartial;

export type { AgentsTable, AgentStatus } from './agents.js';
export type { RegistrySettingsTable } from './registry-settings.js';
export type { TaskDelivery, TaskErrorCode, TaskStatus, TasksTable } from './tasks.js';
