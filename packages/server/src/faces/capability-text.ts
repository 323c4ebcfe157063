import type { Capability } from '@agent-registry/protocol';
import type { JsonSchema } from './schemas.js';

/**
 * The property a plain-text input goes to: the one required property of an object input_schema, when
 * it is a string. Any other shape (no schema, several required properties, a non-string one) has no
 * single place for a text, so such a capability takes JSON only.
 */
export function textInputProperty(capability: Capability): string | undefined {
  const schema = capability.input_schema as JsonSchema | null | undefined;
  if (schema == null || (schema.type !== undefined && schema.type !== 'object')) return undefined;
  const required = schema.required;
  if (!Array.isArray(required) || required.length !== 1 || typeof required[0] !== 'string') return undefined;
  const name = required[0];
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  const property = properties?.[name];
  return property?.type === 'string' ? name : undefined;
}
