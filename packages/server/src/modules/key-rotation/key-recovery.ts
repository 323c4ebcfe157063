import {
  parsePublicKey,
  recoveryCancelMessage,
  recoverySetMessage,
  recoveryStartMessage,
} from '@agent-registry/protocol';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { TransactionRunner } from '../../db/group-commit.js';
import { BadRequestError, ConflictError } from '../../kernel/errors.js';
import { stampAgentChange } from '../agents/change-feed-store.js';
import { findActiveAgent } from '../agents/agents-store.js';
import { appendLogEvent } from '../agents/log-event-store.js';
import { assertKeyNotRetired, findRetiredKey } from '../identity/retired-keys-store.js';
import {
  assertAddressed,
  assertSigned,
  claimOnce,
  currentKeyOf,
  keyedAgent,
  parseRequestKey,
  recoveryKeyNotSet,
  type KeyProofDeps,
} from './key-proof.js';
import { admitKeyChange, type KeyChangeLimit, type KeyClient } from './key-rotation.js';
import {
  applyKeyChange,
  claimDueRecovery,
  dueRecoveries,
  endPendingRecovery,
  findRecovery,
  keyInUse,
  keyIsAgentKey,
  startPendingRecovery,
  upsertRecoveryKey,
  type KeyRecoveryRow,
} from './key-store.js';
import type {
  CancelRecoveryRequest,
  KeyRecoveryStatus,
  PendingRecovery,
  SetRecoveryKeyRequest,
  StartRecoveryRequest,
} from './schemas.js';

export interface KeyRecoveryDeps extends KeyProofDeps {
  writes: TransactionRunner;
  clock: Clock;
  limit: KeyChangeLimit;
  /** KEY_RECOVERY_HOURS in milliseconds. */
  timelockMs: number;
}

/** Due recoveries one sweep finishes at most; the rest wait for the next. */
const SWEEP_BATCH = 100;

/**
 * Recovery of a lost key (docs/identity.md): a recovery key set by the current key may start a public
 * timelock naming a new key; the current key may cancel it; once due, the new key replaces the current
 * one as a rotation does. Without a recovery key a lost key stays lost.
 */
export class KeyRecoveryService {
  constructor(private readonly deps: KeyRecoveryDeps) {}

  async setRecoveryKey(
    rawDid: string | undefined,
    request: SetRecoveryKeyRequest,
    client: KeyClient,
  ): Promise<KeyRecoveryStatus> {
    const now = this.deps.clock.now();
    const agent = await keyedAgent(this.deps, rawDid);
    assertAddressed(this.deps, request.audience, request.timestamp, now);
    const recoveryKey = parseRequestKey(
      request.recovery_key_type,
      request.recovery_public_key,
      'recovery_public_key',
    );
    const current = currentKeyOf(agent);
    if (recoveryKey.keyId === current.keyId) {
      throw new BadRequestError(
        'RECOVERY_KEY_INVALID',
        "recovery_public_key is the agent's current key; a recovery key is a second key, kept apart (offline)",
      );
    }
    const message = recoverySetMessage({
      did: agent.did,
      audience: this.deps.audience,
      timestamp: request.timestamp,
      recovery_key_type: request.recovery_key_type,
      recovery_public_key: request.recovery_public_key,
    });
    await assertSigned(current.parsed, message, request.signature, 'signature', 'the current key');
    await this.deps.writes.run(async (trx) => {
      await admitKeyChange(this.deps.limit, trx, client, agent.did, now);
      await claimOnce(trx, message, request.timestamp, now);
      await assertKeyNotRetired(trx, recoveryKey.keyId, 'recovery_public_key');
      await upsertRecoveryKey(trx, agent.did, recoveryKey, now);
      await appendLogEvent(trx, {
        op: 'key.recovery_set',
        subject: agent.did,
        time: now,
        fields: { recovery_key_type: recoveryKey.keyType, recovery_public_key: recoveryKey.hex },
      });
      await stampAgentChange(trx, agent.did);
    });
    return this.status(agent.did);
  }

  async start(
    rawDid: string | undefined,
    request: StartRecoveryRequest,
    client: KeyClient,
  ): Promise<KeyRecoveryStatus> {
    const now = this.deps.clock.now();
    const agent = await keyedAgent(this.deps, rawDid);
    assertAddressed(this.deps, request.audience, request.timestamp, now);
    const newKey = parseRequestKey(request.new_key_type, request.new_public_key, 'new_public_key');
    const recovery = await findRecovery(this.deps.db, agent.did);
    if (recovery === undefined) throw recoveryKeyNotSet(agent.did);
    if (newKey.keyId === recovery.recovery_key_id || newKey.keyId === agent.key_id) {
      throw new BadRequestError(
        'RECOVERY_KEY_INVALID',
        'new_public_key must be a key of its own: neither the recovery key nor the current key',
      );
    }
    const message = recoveryStartMessage({
      did: agent.did,
      audience: this.deps.audience,
      timestamp: request.timestamp,
      new_key_type: request.new_key_type,
      new_public_key: request.new_public_key,
    });
    const recoveryKey = parsePublicKey(recovery.recovery_key_type, recovery.recovery_public_key);
    await assertSigned(recoveryKey, message, request.signature, 'signature', 'the recovery key');
    if (await keyIsAgentKey(this.deps.db, newKey.keyId)) throw keyInUse('new_public_key');
    const dueAt = now + this.deps.timelockMs;
    await this.deps.writes.run(async (trx) => {
      await admitKeyChange(this.deps.limit, trx, client, agent.did, now);
      await claimOnce(trx, message, request.timestamp, now);
      await assertKeyNotRetired(trx, newKey.keyId, 'new_public_key');
      if (!(await startPendingRecovery(trx, agent.did, recovery.recovery_key_id, newKey, now, dueAt))) {
        throw new ConflictError(
          'RECOVERY_PENDING',
          'A recovery is already pending for this agent (or its recovery key was just replaced); read GET /api/agents/{did}/keys/recovery',
          'Recovery pending',
        );
      }
      await appendLogEvent(trx, {
        op: 'key.recovery_started',
        subject: agent.did,
        time: now,
        fields: { new_key_type: newKey.keyType, new_public_key: newKey.hex, completes_at: dueAt },
      });
      await stampAgentChange(trx, agent.did);
    });
    return this.status(agent.did);
  }

  async cancel(
    rawDid: string | undefined,
    request: CancelRecoveryRequest,
    client: KeyClient,
  ): Promise<KeyRecoveryStatus> {
    const now = this.deps.clock.now();
    const agent = await keyedAgent(this.deps, rawDid);
    assertAddressed(this.deps, request.audience, request.timestamp, now);
    const message = recoveryCancelMessage({
      did: agent.did,
      audience: this.deps.audience,
      timestamp: request.timestamp,
    });
    await assertSigned(
      currentKeyOf(agent).parsed,
      message,
      request.signature,
      'signature',
      'the current key',
    );
    await this.deps.writes.run(async (trx) => {
      await admitKeyChange(this.deps.limit, trx, client, agent.did, now);
      await claimOnce(trx, message, request.timestamp, now);
      if (!(await endPendingRecovery(trx, agent.did, now, 'cancelled'))) {
        throw new ConflictError(
          'RECOVERY_NOT_PENDING',
          'No recovery is pending for this agent (none started, or it already finished)',
          'No recovery pending',
        );
      }
      await stampAgentChange(trx, agent.did);
    });
    return this.status(agent.did);
  }

  /** The agent's recovery state; a recovery that is due finishes first (so a read never shows a stale one). */
  async read(rawDid: string | undefined): Promise<KeyRecoveryStatus> {
    const agent = await keyedAgent(this.deps, rawDid);
    const recovery = await findRecovery(this.deps.db, agent.did);
    if (recovery !== undefined && isDue(recovery, this.deps.clock.now())) await this.finish(recovery);
    return this.status(agent.did);
  }

  /** Finishes every recovery whose timelock has passed (the background sweep; safe on many nodes). */
  async finishDue(): Promise<number> {
    let finished = 0;
    for (const recovery of await dueRecoveries(this.deps.db, this.deps.clock.now(), SWEEP_BATCH)) {
      if (await this.finish(recovery)) finished += 1;
    }
    return finished;
  }

  /** One due recovery: claimed by one node, then the named key replaces the agent's as a rotation. */
  private async finish(recovery: KeyRecoveryRow): Promise<boolean> {
    const { did, pending_key_type: keyType, pending_public_key: publicKey, pending_key_id: keyId } = recovery;
    if (keyType === null || publicKey === null || keyId === null) return false;
    const now = this.deps.clock.now();
    return this.deps.writes.run(async (trx) => {
      if (!(await claimDueRecovery(trx, did, keyId, now))) return false;
      const agent = await findActiveAgent(trx, did);
      if (agent === undefined) return false;
      // The named key may have become another agent's, or been retired, during the timelock.
      if ((await keyIsAgentKey(trx, keyId)) || (await findRetiredKey(trx, keyId)) !== undefined) {
        await appendLogEvent(trx, {
          op: 'key.recovery_cancelled',
          subject: did,
          time: now,
          fields: { reason: 'key_unavailable' },
        });
        await stampAgentChange(trx, did);
        return false;
      }
      const newKey = parsePublicKey(keyType, publicKey);
      const generation = await applyKeyChange(trx, {
        from: currentKeyOf(agent),
        to: newKey,
        at: now,
        via: 'recovery',
      });
      await appendLogEvent(trx, {
        op: 'key.recovery_finished',
        subject: did,
        time: now,
        fields: { new_key_type: newKey.keyType, new_public_key: newKey.hex, key_generation: generation },
      });
      return true;
    });
  }

  /** The pending recovery as the profile shows it (agents module). */
  async pending(did: string): Promise<PendingRecovery | undefined> {
    return (await this.status(did)).pending ?? undefined;
  }

  async status(did: string): Promise<KeyRecoveryStatus> {
    return recoveryStatus(this.deps.db, did, this.deps.timelockMs);
  }
}

const isDue = (recovery: KeyRecoveryRow, now: number): boolean =>
  recovery.pending_due_at !== null && Number(recovery.pending_due_at) <= now;

/** The public recovery state of an agent, as its profile and GET .../keys/recovery show it. */
export async function recoveryStatus(db: Db, did: string, timelockMs: number): Promise<KeyRecoveryStatus> {
  const recovery = await findRecovery(db, did);
  return {
    did,
    recovery_key_set: recovery !== undefined,
    recovery_key_type: recovery?.recovery_key_type ?? null,
    recovery_public_key: recovery?.recovery_public_key ?? null,
    timelock_hours: timelockMs / 3_600_000,
    pending:
      recovery === undefined ||
      recovery.pending_due_at === null ||
      recovery.pending_key_type === null ||
      recovery.pending_public_key === null
        ? null
        : {
            new_key_type: recovery.pending_key_type,
            new_public_key: recovery.pending_public_key,
            started_at: Number(recovery.pending_started_at),
            completes_at: Number(recovery.pending_due_at),
          },
  };
}
