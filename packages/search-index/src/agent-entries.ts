import { searchKey } from './text.js';

interface StoredCapability {
  type: string;
  description?: string | null;
  tags?: string[] | null;
}

export interface IndexedAgentFields {
  did: string;
  name: string;
  description?: string | null;
  /** JSON text, as stored in agents.capabilities. */
  capabilities: string;
  /** JSON text, as stored in agents.tags. */
  tags: string;
}

/** An agent's text per field of the index: what its words are found in. */
export interface AgentDocument {
  name: string;
  description: string;
  /** Capability types and descriptions. */
  capabilities: string;
  /** Agent tags and capability tags. */
  tags: string;
}

/** What the search index holds of an agent: capability types and tags for filters, a document for words. */
export function agentIndexEntries(agent: IndexedAgentFields): {
  capabilityTypes: string[];
  tags: string[];
  document: AgentDocument;
} {
  const capabilities = JSON.parse(agent.capabilities) as StoredCapability[];
  const tags = JSON.parse(agent.tags) as string[];
  const capabilityTags = capabilities.flatMap((capability) => capability.tags ?? []);
  return {
    capabilityTypes: [...new Set(capabilities.map((capability) => searchKey(capability.type)))],
    tags: [...new Set(tags.map(searchKey))].filter((tag) => tag !== ''),
    document: {
      name: agent.name,
      description: agent.description ?? '',
      capabilities: capabilities
        .map((capability) => `${capability.type} ${capability.description ?? ''}`.trim())
        .join('\n'),
      tags: [...tags, ...capabilityTags].join('\n'),
    },
  };
}
