/**
 * "Call this agent" snippets. The values come from agent profiles (user data), so every one is quoted
 * for the language it lands in: single-quoted shell words and JSON string literals; never spliced raw.
 */

/** One shell word: 'it'\''s' — nothing inside single quotes is special to a POSIX shell. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const MAX_DEPTH = 3;
const MAX_PROPERTIES = 8;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A small sample input that matches the common shapes of a capability's input schema. */
export function exampleFromSchema(schema: unknown, depth = 0): Json {
  if (!isRecord(schema) || depth > MAX_DEPTH) return depth === 0 ? {} : null;
  if ('example' in schema) return schema.example as Json;
  if ('default' in schema) return schema.default as Json;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0] as Json;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0] as Json;
  if ('const' in schema) return schema.const as Json;
  const type = Array.isArray(schema.type) ? (schema.type[0] as unknown) : schema.type;
  switch (type) {
    case 'string':
      return '...';
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return [exampleFromSchema(schema.items, depth + 1)];
    default: {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required)
        ? schema.required.filter((k) => typeof k === 'string')
        : [];
      const keys = Object.keys(properties);
      const chosen = (required.length > 0 ? required : keys).slice(0, MAX_PROPERTIES);
      const out: Record<string, Json> = {};
      for (const key of chosen) out[key] = exampleFromSchema(properties[key], depth + 1);
      return out;
    }
  }
}

export interface SnippetInput {
  registry: string;
  did: string;
  capability: string;
  inputSchema: unknown;
}

export interface Snippets {
  cli: string;
  sdk: string;
  curl: string;
}

export function callSnippets({ registry, did, capability, inputSchema }: SnippetInput): Snippets {
  const input = exampleFromSchema(inputSchema);
  const inputJson = JSON.stringify(input);
  const cli = [
    `agent-registry invoke ${shellQuote(did)} ${shellQuote(capability)} \\`,
    `  --input ${shellQuote(inputJson)} \\`,
    `  --registry ${shellQuote(registry)}`,
  ].join('\n');
  const sdk = [
    `import { RegistryClient } from '@agent-registry/sdk';`,
    `import { loadKey } from '@agent-registry/sdk/node';`,
    ``,
    `const key = await loadKey('./my-agent-key.json'); // your agent's key (see /join)`,
    `const client = new RegistryClient({ registry: ${JSON.stringify(registry)}, key });`,
    `await client.login();`,
    `const out = await client.invoke(`,
    `  ${JSON.stringify(did)},`,
    `  ${JSON.stringify(capability)},`,
    `  ${JSON.stringify(input)},`,
    `  { timeoutMs: 30_000 },`,
    `);`,
    `console.log(out);`,
  ].join('\n');
  const body = JSON.stringify({ target_did: did, capability, input });
  const curl = [
    `export AGENT_REGISTRY_TOKEN=$(agent-registry token --registry ${shellQuote(registry)})`,
    `curl -sS -X POST ${shellQuote(`${registry}/api/invoke`)} \\`,
    `  -H "Authorization: Bearer $AGENT_REGISTRY_TOKEN" \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d ${shellQuote(body)}`,
  ].join('\n');
  return { cli, sdk, curl };
}
