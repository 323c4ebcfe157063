import { DidParams, errors } from '../../http/common-schemas.js';
import type { App } from '../../http/types.js';
import type { KeyRecoveryService } from './key-recovery.js';
import type { KeyRotationService } from './key-rotation.js';
import {
  CancelRecoveryRequest,
  KeyChangeResponse,
  KeyRecoveryStatus,
  RotateKeyRequest,
  SetRecoveryKeyRequest,
  StartRecoveryRequest,
} from './schemas.js';

const tags = ['Agents'];

export interface KeyRouteDeps {
  keyRotation: KeyRotationService;
  keyRecovery: KeyRecoveryService;
}

const COMMON_REFUSALS = {
  400: 'A field is invalid: a malformed key (`INVALID_PUBLIC_KEY`), an audience naming another registry (`AUDIENCE_MISMATCH`), a timestamp more than 5 minutes away (`TIMESTAMP_OUT_OF_RANGE`), a signature that does not verify (`INVALID_SIGNATURE`; docs/signing.md, section "Key rotation and recovery"), a message used before (`SIGNATURE_REUSED`), or a did:pkh DID, whose key is its identity (`KEY_ROTATION_UNSUPPORTED`).',
  404: 'No active agent of this registry has this DID (`AGENT_NOT_FOUND`).',
  429: 'More key changes than REGISTRATION_RATE_LIMIT from this client address (or its network), or KEY_CHANGE_RATE_LIMIT for this agent, in the window (`KEY_CHANGE_RATE_LIMITED`); retry after Retry-After seconds.',
};

export function keyRoutes(app: App, ctx: KeyRouteDeps): void {
  app.post(
    '/api/agents/:did/keys/rotate',
    {
      schema: {
        tags,
        operationId: 'rotateKey',
        summary: "Replace a did:web agent's key, keeping its DID and history",
        description:
          'Extension (docs/identity.md). The current key and the new key both sign the key-rotation message; the ' +
          'DID, profile, reviews, reputation, service record, tasks and availability stay, the DID document lists ' +
          'the new key, every token of the old key stops working and the old key is retired for good. Logged as ' +
          '`key.rotated`. Returns a token of the new key.',
        security: [],
        params: DidParams,
        body: RotateKeyRequest,
        'x-rate-limited': true,
        'x-status-reasons': {
          ...COMMON_REFUSALS,
          200: 'Rotated: the new key, its generation and a token of it.',
          409: "The key changed meanwhile: another rotation or a recovery won (`KEY_ROTATION_CONFLICT`), the new key is retired (`KEY_RETIRED`) or is another agent's (`PUBLIC_KEY_EXISTS`).",
        },
        response: { 200: KeyChangeResponse, ...errors(400, 404, 409, 413, 415, 429) },
      },
    },
    async (request) => ctx.keyRotation.rotate(request.params.did, request.body, { address: request.ip }),
  );

  app.get(
    '/api/agents/:did/keys/recovery',
    {
      schema: {
        tags,
        operationId: 'getKeyRecovery',
        summary: "A did:web agent's recovery key and pending recovery",
        description:
          'Extension (docs/identity.md): whether a recovery key is set, and a pending recovery with the time it ' +
          'completes unless the current key cancels it. A recovery that is due finishes on this read.',
        params: DidParams,
        'x-status-reasons': { 400: COMMON_REFUSALS[400], 404: COMMON_REFUSALS[404] },
        response: { 200: KeyRecoveryStatus, ...errors(400, 404) },
      },
    },
    async (request) => ctx.keyRecovery.read(request.params.did),
  );

  app.post(
    '/api/agents/:did/keys/recovery',
    {
      schema: {
        tags,
        operationId: 'setRecoveryKey',
        summary: 'Set or replace the recovery key (signed by the current key)',
        description:
          'Extension (docs/identity.md). Replacing the recovery key ends a recovery the old one started. Logged as `key.recovery_set`.',
        security: [],
        params: DidParams,
        body: SetRecoveryKeyRequest,
        'x-rate-limited': true,
        'x-status-reasons': {
          ...COMMON_REFUSALS,
          200: 'Set: the recovery state.',
          400: `${COMMON_REFUSALS[400]} The recovery key may not be the current key (\`RECOVERY_KEY_INVALID\`).`,
          409: 'The recovery key is a retired key (`KEY_RETIRED`).',
        },
        response: { 200: KeyRecoveryStatus, ...errors(400, 404, 409, 413, 415, 429) },
      },
    },
    async (request) =>
      ctx.keyRecovery.setRecoveryKey(request.params.did, request.body, { address: request.ip }),
  );

  app.post(
    '/api/agents/:did/keys/recovery/start',
    {
      schema: {
        tags,
        operationId: 'startKeyRecovery',
        summary: 'Start a recovery (signed by the recovery key): a public timelock',
        description:
          'Extension (docs/identity.md). After KEY_RECOVERY_HOURS the named key becomes the agent key, as a ' +
          'rotation, unless the current key cancels first. Logged as `key.recovery_started`, then ' +
          '`key.rotated` and `key.recovery_finished`.',
        security: [],
        params: DidParams,
        body: StartRecoveryRequest,
        'x-rate-limited': true,
        'x-status-reasons': {
          ...COMMON_REFUSALS,
          200: 'Started: the recovery state, with the time it completes.',
          400: `${COMMON_REFUSALS[400]} The new key may not be the recovery key or the current key (\`RECOVERY_KEY_INVALID\`).`,
          404: `${COMMON_REFUSALS[404]} The agent has no recovery key (\`RECOVERY_KEY_NOT_SET\`).`,
          409: "A recovery is already pending (`RECOVERY_PENDING`), or the new key is retired (`KEY_RETIRED`) or another agent's (`PUBLIC_KEY_EXISTS`).",
        },
        response: { 200: KeyRecoveryStatus, ...errors(400, 404, 409, 413, 415, 429) },
      },
    },
    async (request) => ctx.keyRecovery.start(request.params.did, request.body, { address: request.ip }),
  );

  app.post(
    '/api/agents/:did/keys/recovery/cancel',
    {
      schema: {
        tags,
        operationId: 'cancelKeyRecovery',
        summary: 'Cancel a pending recovery (signed by the current key)',
        description: 'Extension (docs/identity.md). Logged as `key.recovery_cancelled`.',
        security: [],
        params: DidParams,
        body: CancelRecoveryRequest,
        'x-rate-limited': true,
        'x-status-reasons': {
          ...COMMON_REFUSALS,
          200: 'Cancelled: the recovery state.',
          409: 'No recovery is pending (`RECOVERY_NOT_PENDING`).',
        },
        response: { 200: KeyRecoveryStatus, ...errors(400, 404, 409, 413, 415, 429) },
      },
    },
    async (request) => ctx.keyRecovery.cancel(request.params.did, request.body, { address: request.ip }),
  );
}
