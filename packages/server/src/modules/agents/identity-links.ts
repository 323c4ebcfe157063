import type { Db } from '../../db/connect.js';
import { findAgentStatus } from './agents-store.js';
import { addIdentityEvidence } from '../identity/identity-links-store.js';
import { parseDid } from '@agent-registry/protocol';

/**
 * Evidence that two identities are one operator, as far as the registry can see it
 * (docs/decisions/reputation.md, "Identity links"). Each piece only ever restricts the agent that supplied
 * it: being linked means your calls of each other do not count in the service record and your reviews of each
 * other neither verify nor weigh. So claiming a link to someone else gains nothing. Links are never removed:
 * an operator who moves a webhook is still the same operator.
 */
export const LINK_EVIDENCE = {
  webhookHost: (url: string): string => `webhook-host:${new URL(url).hostname.toLowerCase()}`,
  referral: (referrerDid: string): string => `referral:${referrerDid}`,
} as const;

export async function recordWebhookHost(db: Db, did: string, webhookUrl: string, now: number): Promise<void> {
  await addIdentityEvidence(db, did, LINK_EVIDENCE.webhookHost(webhookUrl), now);
}

/** A referrer that names a registered agent links the two (free-text referrers are only stored). */
export async function recordReferral(
  db: Db,
  did: string,
  referrer: string | null | undefined,
  didWebDomain: string,
  now: number,
): Promise<void> {
  if (referrer == null || referrer === '') return;
  let referrerDid: string;
  try {
    referrerDid = parseDid(referrer.trim(), didWebDomain).did;
  } catch {
    return;
  }
  if (referrerDid === did || (await findAgentStatus(db, referrerDid)) === undefined) return;
  await addIdentityEvidence(db, did, LINK_EVIDENCE.referral(referrerDid), now);
  await addIdentityEvidence(db, referrerDid, LINK_EVIDENCE.referral(referrerDid), now);
}
