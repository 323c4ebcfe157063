import type { TestRegistry } from '@agent-registry/testkit/in-process';

/** The status shows error texts only to an operator (docs/federation.md, "Operator status"). */
export const OPERATOR_TOKEN = 'operator-token-0123456789';
export const OPERATOR_HEADERS = { authorization: `Bearer ${OPERATOR_TOKEN}` };

/** One upstream (peer, card host, MCP Registry) in GET /api/federation/status, as an operator sees it. */
export interface SourceStatus {
  id: string;
  kind?: string;
  state: string;
  last_error: string | null;
  last_attempt_at?: number | null;
  last_success_at?: number | null;
  entries: number;
  resumed?: { by: string; at: number; reason: string };
  checkpoint?: { origin: string; size: number; root_hash: string };
}

/** Every source of GET /api/federation/status, read with the operator's token. */
export async function federationSources(
  registry: TestRegistry,
  token: string = OPERATOR_TOKEN,
): Promise<SourceStatus[]> {
  const response = await registry.app.inject({
    method: 'GET',
    url: '/api/federation/status',
    headers: { authorization: `Bearer ${token}` },
  });
  return response.json<{ sources: SourceStatus[] }>().sources;
}
