import { createHash } from 'node:crypto';
import { AgentCard, generateAgentCardSignature } from '@a2a-js/sdk';
import type { KeyObject } from 'node:crypto';
import type { Capability } from '@agent-registry/protocol';
import { a2aBaseUrl } from '../../modules/agents/agent-view.js';
import type { AgentProfile } from '../../modules/agents/schemas.js';
import { capabilityTitle } from '../../modules/capabilities/capability-title.js';
import { textInputProperty } from '../capability-text.js';
import { invocable } from '../invocation.js';

/** Card members are the A2A v1.0 JSON form (ProtoJSON of the AgentCard message). */
export type CardJson = Record<string, unknown>;

/**
 * A2A skills have no schema member, so each capability's JSON Schemas travel in this extension's
 * params, keyed by skill id (= capability type); documented in docs/a2a.md.
 */
export const CAPABILITY_SCHEMAS_EXTENSION = 'urn:agent-registry:a2a:capability-schemas:v1';
/** The agent's availability (docs/availability.md) as the registry measured it when the card was served. */
export const AVAILABILITY_EXTENSION = 'urn:agent-registry:a2a:availability:v1';
export const IDENTITY_EXTENSION = 'urn:agent-registry:a2a:identity:v1';
export const A2A_VERSIONS = ['1.0', '0.3'] as const;
const JSON_MODE = ['application/json'];
/** A capability with one required string property also takes a text part (mapped to that property). */
const JSON_OR_TEXT_MODES = ['application/json', 'text/plain'];
const SECURITY_SCHEME = 'registryToken';

const security = (publicUrl: string): CardJson => ({
  securitySchemes: {
    [SECURITY_SCHEME]: {
      httpAuthSecurityScheme: {
        scheme: 'Bearer',
        bearerFormat: 'JWT',
        description: `A token of this registry (${publicUrl}/api/auth/token); the call acts as that agent`,
      },
    },
  },
  securityRequirements: [{ schemes: { [SECURITY_SCHEME]: { list: [] } } }],
});

const provider = (publicUrl: string): CardJson => ({ organization: 'Agent Registry', url: publicUrl });

const jsonRpcInterfaces = (url: string): CardJson[] =>
  A2A_VERSIONS.map((protocolVersion) => ({ url, protocolBinding: 'JSONRPC', protocolVersion }));

/**
 * a2a.proto marks a skill's tags required (at least one): the capability's own, else the profile's, else
 * the capability type.
 */
function skillTags(capability: Capability, profileTags: readonly string[] | null | undefined): string[] {
  if (capability.tags && capability.tags.length > 0) return capability.tags;
  if (profileTags && profileTags.length > 0) return [...profileTags];
  return [capability.type];
}

function skill(capability: Capability, profileTags: readonly string[] | null | undefined): CardJson {
  return {
    id: capability.type,
    name: capabilityTitle(capability.type),
    description: capability.description ?? `The "${capability.type}" capability`,
    tags: skillTags(capability, profileTags),
    inputModes: textInputProperty(capability) === undefined ? JSON_MODE : JSON_OR_TEXT_MODES,
    outputModes: JSON_MODE,
  };
}

function schemasExtension(capabilities: Capability[]): CardJson {
  const schemas = Object.fromEntries(
    capabilities.map((capability) => [
      capability.type,
      { input_schema: capability.input_schema ?? null, output_schema: capability.output_schema ?? null },
    ]),
  );
  return {
    uri: CAPABILITY_SCHEMAS_EXTENSION,
    description:
      'params.schemas maps each skill id to the capability input_schema and output_schema (JSON Schema); ' +
      'send the input as one data part (or, where the skill lists text/plain in inputModes, as one text ' +
      'part: it becomes the one required string property), get the output as a data part',
    required: false,
    params: { schemas },
  };
}

function availabilityExtension(profile: AgentProfile): CardJson {
  return {
    uri: AVAILABILITY_EXTENSION,
    description:
      'params is the availability the registry measured when it served this card: status (online, offline, ' +
      'unknown), last_seen_at, checked_at, online_since (epoch ms or null), uptime_24h and uptime_7d (0-1 or null)',
    required: false,
    params: { ...profile.availability },
  };
}

/** Present when the agent proved a domain (docs/identity.md, "Domains and handles"). */
function identityExtension(profile: AgentProfile): CardJson[] {
  if (profile.domains === undefined) return [];
  return [
    {
      uri: IDENTITY_EXTENSION,
      description:
        'params.domains are the domains the agent proved it holds (its DID at https://<domain>/.well-known/agent-registry.json ' +
        'or in a TXT record _agent-registry.<domain>), re-checked by the registry; params.handle is its readable name, or null',
      required: false,
      params: { domains: profile.domains, handle: profile.handle ?? null },
    },
  ];
}

/** The card of one registered agent, reached through the registry; no interface when it cannot be invoked. */
export function a2aAgentCard(profile: AgentProfile, publicUrl: string): CardJson {
  const card: CardJson = {
    name: profile.name,
    description: profile.description ?? `${profile.name}, an agent registered at ${publicUrl}`,
    supportedInterfaces: invocable(profile) ? jsonRpcInterfaces(a2aBaseUrl(publicUrl, profile.did)) : [],
    provider: provider(publicUrl),
    version: new Date(profile.updated_at).toISOString(),
    documentationUrl: `${publicUrl}/api/agents/${encodeURIComponent(profile.did)}`,
    capabilities: {
      streaming: false,
      pushNotifications: false,
      extendedAgentCard: false,
      extensions: [
        schemasExtension(profile.capabilities),
        availabilityExtension(profile),
        ...identityExtension(profile),
      ],
    },
    ...security(publicUrl),
    defaultInputModes: JSON_MODE,
    defaultOutputModes: JSON_MODE,
    skills: profile.capabilities.map((capability) => skill(capability, profile.tags)),
  };
  if (profile.avatar !== null) card.iconUrl = profile.avatar;
  return card;
}

/** The registry's own card: what it does, and where each agent's card and endpoint live. */
export function registryCard(publicUrl: string): CardJson {
  return {
    name: 'Agent Registry',
    description:
      'A registry where AI agents prove control of a key, publish capabilities, find, invoke and review ' +
      'each other. Every registered agent has its own card at /a2a/{did}/.well-known/agent-card.json ' +
      '(DID percent-encoded) and is called with message/send at /a2a/{did}/.',
    supportedInterfaces: [],
    provider: provider(publicUrl),
    version: '0.1.0',
    documentationUrl: `${publicUrl}/docs`,
    capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false, extensions: [] },
    ...security(publicUrl),
    defaultInputModes: JSON_MODE,
    defaultOutputModes: JSON_MODE,
    skills: [
      {
        id: 'search',
        name: 'Search agents',
        description:
          'Find active agents by full text, capability, tags and reputation: GET /api/agents/search, or the ' +
          'MCP tool search_agents at /mcp',
        tags: ['discovery', 'search'],
        inputModes: JSON_MODE,
        outputModes: JSON_MODE,
      },
      {
        id: 'invoke',
        name: 'Invoke an agent',
        description:
          "Call a registered agent's capability through the registry broker: message/send to the agent's " +
          'A2A base /a2a/{did}/ with a registry token, POST /api/invoke, or the MCP tool invoke_agent',
        tags: ['invocation'],
        inputModes: JSON_MODE,
        outputModes: JSON_MODE,
      },
    ],
  };
}

export interface SignedCard {
  body: string;
  etag: string;
}

/**
 * Normalised through the SDK's own AgentCard codec (what clients parse and what the signature covers),
 * then signed per A2A v1.0 section 8.4: JWS over the RFC 8785 form, with the registry's token key,
 * so the card verifies against /.well-known/jwks.json (named by `jku`).
 */
export async function signCard(
  card: CardJson,
  key: { privateKey: KeyObject; kid: string },
  publicUrl: string,
): Promise<SignedCard> {
  const normalized = AgentCard.toJSON(AgentCard.fromJSON(card)) as AgentCard;
  const sign = generateAgentCardSignature(key.privateKey, {
    alg: 'EdDSA',
    typ: 'JOSE',
    kid: key.kid,
    jku: `${publicUrl}/.well-known/jwks.json`,
  });
  const body = JSON.stringify(await sign(normalized));
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url')}"` };
}
