import type { TObject } from '@sinclair/typebox';
import type { preValidationHookHandler } from 'fastify';
import { BadRequestError } from '../kernel/errors.js';

/**
 * Refuses query parameters the route does not know, listing those it accepts: a typo (name= for q=)
 * would otherwise be ignored and return unrelated results.
 */
export function refuseUnknownQuery(schema: TObject): preValidationHookHandler {
  const accepted = Object.keys(schema.properties);
  const known = new Set(accepted);
  return (request, _reply, done) => {
    const query = request.query as Record<string, unknown> | undefined;
    for (const name in query) {
      if (!known.has(name)) {
        done(
          new BadRequestError(
            'UNKNOWN_QUERY_PARAMETER',
            `Unknown query parameter "${name}"; accepted parameters: ${accepted.join(', ')} (full-text search is q=)`,
          ),
        );
        return;
      }
    }
    done();
  };
}
