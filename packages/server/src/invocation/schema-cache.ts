import { Ajv, type ValidateFunction } from 'ajv';

/**
 * Compiled capability input schemas, keyed by their JSON text so each schema compiles once. Bounded:
 * the oldest entry goes when full (Map keeps insertion order), and Ajv's own cache lets go of it too.
 */
export class SchemaCache {
  private readonly ajv = new Ajv({ strict: false, allErrors: true, addUsedSchema: false });
  private readonly compiled = new Map<string, { schema: object; validate: ValidateFunction }>();

  constructor(private readonly capacity = 1000) {}

  validator(schema: object): ValidateFunction {
    const key = JSON.stringify(schema);
    const cached = this.compiled.get(key);
    if (cached !== undefined) return cached.validate;
    const validate = this.ajv.compile(schema);
    if (this.compiled.size >= this.capacity) {
      const [oldestKey, oldest] = this.compiled.entries().next().value as [string, { schema: object }];
      this.compiled.delete(oldestKey);
      this.ajv.removeSchema(oldest.schema);
    }
    this.compiled.set(key, { schema, validate });
    return validate;
  }

  /** Describes the first few errors of the last validation, e.g. "input/text must be string". */
  describe(validate: ValidateFunction): string {
    return this.ajv.errorsText(validate.errors?.slice(0, 10), { dataVar: 'input', separator: '; ' });
  }
}
