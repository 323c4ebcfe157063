import { Type } from '@sinclair/typebox';
import { DidParams, errors, ref } from '../../http/common-schemas.js';
import type { App } from '../../http/types.js';
import { BadRequestError, NotFoundError } from '../../kernel/errors.js';
import { LogProof as LogProofSchema } from './schemas.js';
import { parseTilePath } from './tiles.js';
import type { TransparencyLogService } from './transparency-log.js';

/** What the transparency log routes use of the context. */
export interface TransparencyLogRouteDeps {
  transparencyLog: TransparencyLogService;
}

const tags = ['Transparency log'];
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** The checkpoint moves with every change: cached for a moment, as tlog-tiles asks. */
const CHECKPOINT_CACHE = 'public, max-age=2';
const text = (description: string) => ({ description, content: { 'text/plain': { schema: Type.String() } } });
const binary = (description: string) => ({
  description,
  content: { 'application/octet-stream': { schema: Type.String({ format: 'binary' }) } },
});
const TilePathParams = Type.Object({ '*': Type.String() });

export function transparencyLogRoutes(app: App, ctx: TransparencyLogRouteDeps): void {
  const log = ctx.transparencyLog;

  app.get(
    '/log/checkpoint',
    {
      schema: {
        tags,
        operationId: 'getLogCheckpoint',
        summary: 'The signed checkpoint of the transparency log (C2SP tlog-checkpoint)',
        description:
          'Extension: origin, tree size and base64 RFC 6962 root hash, signed as a C2SP signed note with the ' +
          "registry's Ed25519 log key (GET /log/verifier-key). The tree is served as C2SP tlog-tiles: hash tiles " +
          'at `/log/tile/<L>/<N>[.p/<W>]` and entry bundles at `/log/tile/entries/<N>[.p/<W>]` (immutable; a ' +
          'malformed path is a 400 `INVALID_TILE_PATH`, a tile the tree does not have a 404 `TILE_NOT_FOUND`). ' +
          'See docs/transparency-log.md.',
        security: [],
        response: { 200: text('A signed note'), ...errors(500) },
      },
    },
    async (_request, reply) =>
      reply
        .type('text/plain; charset=utf-8')
        .header('cache-control', CHECKPOINT_CACHE)
        .send(await log.checkpoint()),
  );

  app.get(
    '/log/verifier-key',
    {
      schema: {
        tags,
        operationId: 'getLogVerifierKey',
        summary: "The note verifier key of the log's checkpoints (C2SP signed-note)",
        description: 'Extension: `<name>+<hex key ID>+<base64(0x01 || Ed25519 public key)>`, one line.',
        security: [],
        'x-no-database': true,
        response: { 200: text('A verifier key') },
      },
    },
    async (_request, reply) =>
      reply
        .type('text/plain; charset=utf-8')
        .header('cache-control', 'public, max-age=3600')
        .send(`${log.verifierKey}\n`),
  );

  app.get(
    '/log/tile/*',
    {
      // A path of any depth (tlog-tiles encodes N as x001/x234/067) has no OpenAPI template: the route
      // is described under GET /log/checkpoint and in docs/transparency-log.md instead.
      schema: {
        hide: true,
        tags,
        operationId: 'getLogTile',
        summary: 'A hash tile or entry bundle of the log (C2SP tlog-tiles)',
        description:
          'Extension: `/log/tile/<L>/<N>[.p/<W>]` (hash tiles) and `/log/tile/entries/<N>[.p/<W>]` (entry ' +
          'bundles: big-endian uint16 length-prefixed leaf data). Immutable: cached for a year.',
        security: [],
        params: TilePathParams,
        'x-status-reasons': {
          400: 'The path is not a tlog-tiles tile path (`INVALID_TILE_PATH`).',
          404: 'The tree does not (yet) have this tile at this width (`TILE_NOT_FOUND`).',
        },
        response: { 200: binary('Tile bytes'), ...errors(400, 404, 500) },
      },
    },
    async (request, reply) => {
      const path = request.params['*'];
      const address = parseTilePath(path);
      if (address === undefined) {
        throw new BadRequestError(
          'INVALID_TILE_PATH',
          `${JSON.stringify(path)} is not a tile path: use <L>/<N>[.p/<W>] or entries/<N>[.p/<W>], with L from 0 to 63, N in 3-digit elements all but the last prefixed with x and no leading x000 (1234067 is x001/x234/067, 67 is 067), and W from 1 to 255`,
        );
      }
      const body =
        address.level === undefined
          ? await log.entryBundle(address)
          : await log.tile({ ...address, level: address.level });
      if (body === undefined) {
        throw new NotFoundError(
          'TILE_NOT_FOUND',
          `the log has no tile ${path} at its current size (fetch /log/checkpoint: partial tiles exist only for the width the tree size gives)`,
        );
      }
      return reply
        .type('application/octet-stream')
        .header('cache-control', IMMUTABLE)
        .send(body as never);
    },
  );

  app.get(
    '/api/agents/:did/log-proof',
    {
      schema: {
        tags,
        operationId: 'getAgentLogProof',
        summary: "The agent's latest record in the transparency log, with its inclusion proof",
        description:
          'Extension: the leaf of the latest change of the agent, its RFC 6962 inclusion proof and the signed ' +
          'checkpoint it is proven against. See docs/transparency-log.md.',
        security: [],
        params: DidParams,
        'x-status-reasons': {
          400: 'The DID is malformed (`INVALID_DID`).',
          404: 'No agent has this DID (`AGENT_NOT_FOUND`), or its latest change predates the log (`AGENT_NOT_LOGGED`).',
        },
        response: { 200: ref(LogProofSchema), ...errors(400, 404, 500) },
      },
    },
    async (request) => log.proof(request.params.did),
  );
}
