import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../http/common-schemas.js';
import { DOMAIN_MAX_LENGTH, HANDLE_MAX_LENGTH } from './domain-names.js';

export const ClaimDomainRequest = Type.Object(
  {
    domain: Type.String({
      minLength: 1,
      maxLength: DOMAIN_MAX_LENGTH + 6,
      description:
        'A host name such as example.com, proven by https://<domain>/.well-known/agent-registry.json listing the DID or a TXT record _agent-registry.<domain> "did=<DID>"',
    }),
  },
  { additionalProperties: false },
);
export type ClaimDomainRequest = Static<typeof ClaimDomainRequest>;

export const DomainClaim = Type.Object({
  domain: Type.String(),
  method: StringEnum(['https', 'dns'] as const, { description: 'How the proof was last found' }),
  verified_at: Type.Integer({ description: 'When the claim was first proven' }),
  checked_at: Type.Integer({ description: 'When the proof was last looked for' }),
});
export type DomainClaim = Static<typeof DomainClaim>;

export const AgentDomains = Type.Object(
  {
    did: Type.String(),
    domains: Type.Array(DomainClaim),
    handle: Nullable(Type.String()),
    recheck_seconds: Type.Integer({ description: 'DOMAIN_RECHECK_SECONDS of this registry' }),
  },
  { description: 'Extension: docs/identity.md, "Domains and handles"' },
);
export type AgentDomains = Static<typeof AgentDomains>;

export const DomainParams = Type.Object({
  did: Type.String({ description: 'The DID, URL-encoded or raw' }),
  domain: Type.String({ maxLength: DOMAIN_MAX_LENGTH + 6 }),
});

export const SetHandleRequest = Type.Object(
  {
    handle: Type.String({
      minLength: 3,
      maxLength: HANDLE_MAX_LENGTH,
      description: 'Reverse-DNS of one of the agent\'s verified domains, "/", a name: com.example/translator',
    }),
  },
  { additionalProperties: false },
);
export type SetHandleRequest = Static<typeof SetHandleRequest>;

export const HandleQuery = Type.Object(
  {
    handle: Type.String({
      minLength: 3,
      maxLength: HANDLE_MAX_LENGTH,
      description: 'The handle, e.g. com.example/translator',
      examples: ['com.example/translator'],
    }),
  },
  { additionalProperties: false },
);
