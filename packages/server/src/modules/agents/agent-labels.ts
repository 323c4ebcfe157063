import type { Db } from '../../db/connect.js';
import { readAgentLabels } from './agent-labels-store.js';

export interface AgentLabel {
  name: string;
  active: boolean;
  /** 30-day success rate of brokered calls (0-1), null without a counted call in that window. */
  successRate: number | null;
}

/**
 * What pages show of the agents they mention besides the one they are about (reviewers, result
 * cards): one query per page for all of them, never one per review or card.
 */
export class AgentLabelService {
  constructor(private readonly deps: { db: Db }) {}

  async labels(dids: readonly string[]): Promise<Map<string, AgentLabel>> {
    const rows = await readAgentLabels(this.deps.db, [...new Set(dids)]);
    return new Map(
      rows.map((row) => [
        row.did,
        { name: row.name, active: row.status === 'active', successRate: row.service_success_rate },
      ]),
    );
  }
}
