import { Ajv, type ValidateFunction } from 'ajv';
import { linearRegExp } from '@agent-registry/protocol';
import { ByteBoundedCache } from '../../kernel/byte-bounded-cache.js';

/** Schema JSON held compiled at once; a compiled validator keeps about 30 times its schema's JSON live. */
export const COMPILED_SCHEMA_CACHE_MAX_BYTES = 4 * 1024 * 1024;

interface Compiled {
  schema: object;
  validate: ValidateFunction;
}

/**
 * Agents' JSON Schemas compiled with Ajv: patterns on a linear-time engine, validation stopping at the
 * first error (collecting every error of a large input costs memory without bound), compiled
 * validators cached by schema text within a byte budget.
 */
export class CompiledSchemas {
  // addUsedSchema: false keeps agents' schemas (and their $id) out of the shared instance.
  private readonly ajv = new Ajv({
    strict: false,
    allErrors: false,
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

  /** How many schemas were compiled (a compile is the expensive step). */
  get compilations(): number {
    return this.compileCount;
  }

  /** Bytes of schema JSON whose compiled validators are cached. */
  get cachedBytes(): number {
    return this.cache.bytes;
  }

  /** Compiles without keeping the result; throws Ajv's error when the schema is not usable. */
  check(schema: object): void {
    this.compileCount++;
    try {
      this.ajv.compile(schema);
    } finally {
      this.ajv.removeSchema(schema);
    }
  }

  /** The compiled validator of a schema given as JSON text, compiled on first use and kept while the budget allows. */
  validator(schemaJson: string): ValidateFunction {
    const cached = this.cache.get(schemaJson);
    if (cached !== undefined) return cached.validate;
    const schema = JSON.parse(schemaJson) as object;
    this.compileCount++;
    let validate: ValidateFunction;
    try {
      validate = this.ajv.compile(schema);
    } catch (error) {
      this.ajv.removeSchema(schema);
      throw error;
    }
    this.cache.set(schemaJson, { schema, validate }, Buffer.byteLength(schemaJson, 'utf8'));
    return validate;
  }

  /** Describes the error of the last validation, e.g. "input/text must be string". */
  describe(validate: ValidateFunction): string {
    return this.ajv.errorsText(validate.errors?.slice(0, 10), { dataVar: 'input', separator: '; ' });
  }
}
