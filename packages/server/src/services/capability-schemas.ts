import { Ajv, type ValidateFunction } from 'ajv';
import { BadRequestError } from '../errors.js';
import type { Capability } from '../identity/types.js';
import { ByteBoundedCache } from '../invocation/schema-cache.js';
import { linearRegExp } from './linear-regexp.js';
import { assertSchemaBudget } from './schema-limits.js';

/** Schema JSON held compiled at once; a compiled validator keeps about 30 times its schema's JSON live. */
export const COMPILED_SCHEMA_CACHE_MAX_BYTES = 4 * 1024 * 1024;

interface Compiled {
  schema: object;
  validate: ValidateFunction;
}

/**
 * Agents' capability JSON Schemas: checked when published (size and complexity first, then the
 * meta-schema and a compile) and compiled once for validating invocation input. Patterns run on a
 * linear-time engine, so no input can make validation backtrack.
 */
export class CapabilitySchemas {
  // addUsedSchema: false keeps agents' schemas (and their $id) out of the shared instance.
  private readonly ajv = new Ajv({
    strict: false,
    allErrors: true,
    addUsedSchema: false,
    logger: false,
    code: { regExp: linearRegExp },
  });
  private readonly cache: ByteBoundedCache<Compiled>;
  private compileCount = 0;

  constructor(maxCachedBytes = COMPILED_SCHEMA_CACHE_MAX_BYTES) {
    // Ajv caches compiled schemas by object; dropping it with the entry lets the memory go.
    this.cache = new ByteBoundedCache(maxCachedBytes, (entry) => this.ajv.removeSchema(entry.schema));
  }

  /** How many schemas were compiled since start (a compile is the expensive step). */
  get compilations(): number {
    return this.compileCount;
  }

  /** Bytes of schema JSON whose compiled validators are cached. */
  get cachedBytes(): number {
    return this.cache.bytes;
  }

  /**
   * A 400 unless every schema of the profile is within the limits, is a valid JSON Schema and compiles.
   * Call after the request is authenticated: the budget check is cheap, compiling is not.
   */
  assertPublishable(capabilities: readonly Capability[] | null | undefined): void {
    assertSchemaBudget(capabilities);
    capabilities?.forEach((capability, index) => {
      for (const member of ['input_schema', 'output_schema'] as const) {
        const schema = capability[member];
        if (schema === undefined || schema === null) continue;
        try {
          this.validator(schema);
        } catch (error) {
          const problem = error instanceof Error ? error.message : 'it does not compile';
          throw new BadRequestError(
            'INVALID_CAPABILITY_SCHEMA',
            `capabilities[${index}].${member} is not a usable JSON Schema: ${problem}` +
              (/regexp/i.test(problem) ? ' (patterns use RE2 syntax: no lookaround or backreferences)' : ''),
          );
        }
      }
    });
  }

  /** The compiled validator of a schema, compiled on first use and kept while the byte budget allows. */
  validator(schema: object): ValidateFunction {
    const key = JSON.stringify(schema);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached.validate;
    this.compileCount++;
    let validate: ValidateFunction;
    try {
      validate = this.ajv.compile(schema);
    } catch (error) {
      this.ajv.removeSchema(schema);
      throw error;
    }
    this.cache.set(key, { schema, validate }, Buffer.byteLength(key, 'utf8'));
    return validate;
  }

  /** Describes the first few errors of the last validation, e.g. "input/text must be string". */
  describe(validate: ValidateFunction): string {
    return this.ajv.errorsText(validate.errors?.slice(0, 10), { dataVar: 'input', separator: '; ' });
  }
}
