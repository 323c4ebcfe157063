import { Ajv } from 'ajv';
import safeRegex from 'safe-regex2';
import { BadRequestError } from '../errors.js';
import type { Capability } from '../identity/types.js';
import { LIMITS } from './limits.js';

// addUsedSchema: false keeps agents' schemas (and their $id) out of the shared instance.
const schemaChecker = new Ajv({ strict: false, validateSchema: true, addUsedSchema: false });

/** A valid absolute http(s) URL of at most 2048 characters, or a 400 naming the field. */
export function assertHttpUrl(field: string, value: string): void {
  if (value.length > LIMITS.urlMaxLength) {
    throw new BadRequestError('INVALID_URL', `${field} must be at most ${LIMITS.urlMaxLength} characters`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new BadRequestError('INVALID_URL', `${field} must be an absolute http:// or https:// URL`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new BadRequestError('INVALID_URL', `${field} must be an absolute http:// or https:// URL`);
  }
}

/** Every regular expression a schema asks the validator to run: `pattern` values and `patternProperties` keys. */
function schemaPatterns(schema: unknown, found: string[] = []): string[] {
  if (Array.isArray(schema)) {
    for (const item of schema) schemaPatterns(item, found);
  } else if (typeof schema === 'object' && schema !== null) {
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'pattern' && typeof value === 'string') found.push(value);
      if (key === 'patternProperties' && typeof value === 'object' && value !== null)
        found.push(...Object.keys(value));
      schemaPatterns(value, found);
    }
  }
  return found;
}

/** Why a capability schema cannot be used, or undefined when it is fine. */
function schemaProblem(schema: object): string | undefined {
  if (!schemaChecker.validateSchema(schema)) {
    return schemaChecker.errorsText(schemaChecker.errors);
  }
  // Validation runs on the event loop: a backtracking pattern would let one input stall the registry.
  const risky = schemaPatterns(schema).find((pattern) => !safeRegex(pattern));
  if (risky !== undefined) return `pattern "${risky.slice(0, 80)}" may backtrack exponentially; simplify it`;
  try {
    schemaChecker.compile(schema);
  } catch (error) {
    return error instanceof Error ? error.message : 'it does not compile';
  } finally {
    // Ajv caches compiled schemas by object; drop it so published schemas do not accumulate.
    schemaChecker.removeSchema(schema);
  }
  return undefined;
}

/** Rules the request schema cannot state: URL validity and capability JSON Schemas that compile safely. */
export function assertProfileRules(profile: {
  avatar?: string | null;
  website?: string | null;
  capabilities?: Capability[] | null;
}): void {
  if (profile.avatar) assertHttpUrl('profile.avatar', profile.avatar);
  if (profile.website) assertHttpUrl('profile.website', profile.website);
  profile.capabilities?.forEach((capability, index) => {
    for (const member of ['input_schema', 'output_schema'] as const) {
      const schema = capability[member];
      if (schema === undefined || schema === null) continue;
      const problem = schemaProblem(schema);
      if (problem !== undefined) {
        throw new BadRequestError(
          'INVALID_CAPABILITY_SCHEMA',
          `capabilities[${index}].${member} is not a usable JSON Schema: ${problem}`,
        );
      }
    }
  });
}

/** The stored form of a capability: known members only, absent optional members left out. */
export function normaliseCapability(capability: Capability): Capability {
  const stored: Capability = { type: capability.type };
  if (capability.description != null) stored.description = capability.description;
  if (capability.tags != null) stored.tags = capability.tags;
  if (capability.input_schema != null) stored.input_schema = capability.input_schema;
  if (capability.output_schema != null) stored.output_schema = capability.output_schema;
  return stored;
}
