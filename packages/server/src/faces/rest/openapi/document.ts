import type { SwaggerOptions } from '@fastify/swagger';
import type { OpenAPIV3_1 } from 'openapi-types';
import { PRODUCT_NAME } from '../branding.js';
import { RETRY_AFTER_STATUSES, STATUS_MEANINGS, sharedStatuses } from './statuses.js';

type Document = OpenAPIV3_1.Document;
type Operation = OpenAPIV3_1.OperationObject & Record<`x-${string}`, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

export const TAGS: OpenAPIV3_1.TagObject[] = [
  {
    name: 'Agents',
    description: 'Register an agent by proving its key, read and update profiles, configure invocation',
  },
  { name: 'Auth', description: 'Tokens by signature, and the keys that verify them' },
  { name: 'Discovery', description: 'Search agents and read platform statistics' },
  { name: 'DID', description: 'DID documents of registered agents (did:web and did:pkh)' },
  { name: 'Chains', description: 'Blockchains accepted for secp256k1 keys (did:pkh)' },
  {
    name: 'Invocation',
    description: 'Call a capability of another agent through the registry and read its task',
  },
  {
    name: 'Agent tasks',
    description: 'The worker side of queue mode: poll, accept, report results or failures',
  },
  { name: 'Reviews', description: 'Reviews and reputation' },
  { name: 'Watches', description: 'Signed webhooks on changes of agents and remote entries (extension)' },
  {
    name: 'Moderation',
    description:
      "Abuse reports, the operator's suspensions and restorations, and the public list of decisions (extension)",
  },
  {
    name: 'Federation',
    description:
      'Agents that live at other registries: read-only entries with their provenance, and the sources status',
  },
  { name: 'Operations', description: 'Health, readiness, version and Prometheus metrics' },
];

/** Options for @fastify/swagger: document header, shared components, and the finishing pass. */
export function openapiOptions(options: { version: string; metricsToken: boolean }): SwaggerOptions {
  const { version } = options;
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: PRODUCT_NAME,
        version,
        description:
          'Agents prove control of a key, get a DID and a token, publish capabilities, find, invoke and review ' +
          'each other. Every error is JSON `{error, details, code}`; `code` is stable and listed in ErrorResponse. ' +
          'Every response carries `X-Request-Id` (send one to choose it).',
        license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      },
      // Relative: the document is served by the registry it describes, whatever its PUBLIC_URL.
      servers: [{ url: '/', description: 'The registry serving this document' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'The token from registration or POST /api/auth/token',
          },
          federationAdminToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'FEDERATION_ADMIN_TOKEN of the registry: operator writes (docs/federation.md)',
          },
          ...(options.metricsToken
            ? {
                metricsToken: {
                  type: 'http',
                  scheme: 'bearer',
                  description: 'METRICS_TOKEN of the registry',
                },
              }
            : {}),
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`),
    },
    transformObject: (documentObject) =>
      'openapiObject' in documentObject
        ? (finishDocument(documentObject.openapiObject as Document) as typeof documentObject.openapiObject)
        : documentObject.swaggerObject,
  };
}

const HEADERS: Record<string, OpenAPIV3_1.HeaderObject> = {
  XRequestId: {
    description: 'Id of this request in the registry logs: the X-Request-Id sent, when valid, or a new UUID',
    schema: { type: 'string', maxLength: 128 },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying',
    schema: { type: 'integer', minimum: 0 },
  },
  WWWAuthenticate: { description: 'Bearer', schema: { type: 'string' } },
};

const ref = (kind: 'headers' | 'schemas', name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Annotations that steer validation (constraints a service checks with a better message) leave the document. */
function stripInternalKeywords(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) stripInternalKeywords(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  delete record['x-checked-by-service'];
  for (const value of Object.values(record)) stripInternalKeywords(value);
}

/**
 * Completes every operation from the shared status map: `security: []` on public ones, the statuses
 * every route of its kind can answer, a description per status, the error body and the
 * X-Request-Id / Retry-After / WWW-Authenticate headers, and a description listing when each status happens.
 */
export function finishDocument(document: Document): Document {
  document.components ??= {};
  document.components.headers = { ...document.components.headers, ...HEADERS };
  for (const [route, pathItem] of Object.entries(document.paths ?? {})) {
    if (pathItem === undefined) continue;
    for (const method of METHODS) {
      const operation = pathItem[method] as Operation | undefined;
      if (operation === undefined) continue;
      // Routes name their operationId; one added without keeps the document valid with a derived name.
      operation.operationId ??= derivedOperationId(method, route);
      finishOperation(operation);
    }
  }
  stripInternalKeywords(document);
  return document;
}

/** get /api/agents/{did}/reviews -> getApiAgentsDidReviews */
function derivedOperationId(method: string, route: string): string {
  const words = route.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  return method + words.map((word) => word[0]?.toUpperCase() + word.slice(1)).join('');
}

function finishOperation(operation: Operation): void {
  const reasons = (operation['x-status-reasons'] ?? {}) as Record<string, string>;
  const authenticated = (operation.security ?? []).some((requirement) => 'bearerAuth' in requirement);
  operation.security ??= [];
  const responses = (operation.responses ??= {});
  const statuses = new Set(Object.keys(responses).map(Number));
  for (const status of sharedStatuses({
    hasBody: operation.requestBody !== undefined,
    hasParameters: (operation.parameters ?? []).length > 0,
    authenticated,
    rateLimited: operation['x-rate-limited'] === true,
    noDatabase: operation['x-no-database'] === true,
  }))
    statuses.add(status);

  const lines: string[] = [];
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const key = String(status);
    const meaning = reasons[key] ?? STATUS_MEANINGS[status] ?? `HTTP ${status}.`;
    const existing = responses[key] as OpenAPIV3_1.ResponseObject | undefined;
    const headers: Record<string, OpenAPIV3_1.ReferenceObject> = {
      'X-Request-Id': ref('headers', 'XRequestId'),
    };
    if (RETRY_AFTER_STATUSES.has(status)) headers['Retry-After'] = ref('headers', 'RetryAfter');
    if (status === 401) headers['WWW-Authenticate'] = ref('headers', 'WWWAuthenticate');
    if (status >= 400) {
      responses[key] = {
        description: meaning,
        headers,
        content: { 'application/json': { schema: ref('schemas', 'ErrorResponse') } },
      };
    } else {
      responses[key] = {
        ...existing,
        description:
          existing?.description && existing.description !== 'Default Response'
            ? existing.description
            : meaning,
        headers: { ...existing?.headers, ...headers },
      };
    }
    lines.push(`- \`${status}\`: ${meaning}`);
  }
  const what = operation.description ?? operation.summary ?? '';
  operation.description = `${what}\n\nResponses:\n${lines.join('\n')}`;
  delete operation['x-status-reasons'];
  delete operation['x-rate-limited'];
  delete operation['x-no-database'];
}
