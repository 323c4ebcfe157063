import type { Capability } from '@agent-registry/protocol';
import type { Db } from '../../db/connect.js';
import { BadRequestError, agentNotFound, agentSuspended } from '../../kernel/errors.js';
import { findActiveAgent, findAgentStatus, type AgentRow } from '../agents/agents-store.js';
import type { RemoteReferrals } from '../agents/agents.js';
import { requireDid } from '../identity/did-param.js';

/** The agent an invocation names, if it takes invocations here; a remote one is referred to its home. */
export async function requireInvocableTarget(
  db: Db,
  didWebDomain: string,
  remote: RemoteReferrals | undefined,
  rawDid: string,
): Promise<AgentRow> {
  const did = requireDid(rawDid, didWebDomain).did;
  const target = await findActiveAgent(db, did);
  if (target === undefined) {
    // Read only on a miss: a suspended agent answers its own code, so callers learn why.
    if ((await findAgentStatus(db, did)) === 'suspended') throw agentSuspended(did);
    throw (await remote?.referral(did)) ?? agentNotFound(did);
  }
  if (target.invocation_enabled !== 1) {
    throw new BadRequestError('INVOCATION_DISABLED', `${did} does not accept invocations`);
  }
  if (target.delivery_mode === 'none') {
    throw new BadRequestError(
      'INVOCATION_DISABLED',
      `${did} has delivery mode "none"; it cannot receive invocations`,
    );
  }
  return target;
}

/** The capability of the target the invocation names, or the list of those it offers. */
export function requireCapability(target: AgentRow, type: string): Capability {
  const capabilities = JSON.parse(target.capabilities) as Capability[];
  const capability = capabilities.find((candidate) => candidate.type === type);
  if (capability === undefined) {
    const offered = capabilities.map((candidate) => candidate.type).join(', ');
    throw new BadRequestError(
      'CAPABILITY_NOT_OFFERED',
      `${target.did} does not offer "${type}" (it offers: ${offered})`,
    );
  }
  return capability;
}
