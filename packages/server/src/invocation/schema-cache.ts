import { Ajv, type ValidateFunction } from 'ajv';

/**
 * Compiled capability input schemas, keyed by their JSON text so each schema compiles once. Bounded:
 * the oldest entry goes when full (Map keeps insertion order).
 */
export class SchemaCache {
  private readonly ajv = new Ajv({ strict: false, allErrors: true, addUsedSchema: false });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly capacity = 1000) {}

  validator(schema: object): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.compiled.get(key);
    if (validate === undefined) {
      validate = this.ajv.compile(schema);
      if (this.compiled.size >= this.capacity) {
        const oldest = this.compiled.keys().next().value;
        if (oldest !== undefined) this.compiled.delete(oldest);
      }
      this.compiled.set(key, validate);
    }
    return validate;
  }

  /** Describes the first few errors of the last validation, e.g. "input/text must be string". */
  describe(validate: ValidateFunction): string {
    return this.ajv.errorsText(validate.errors?.slice(0, 10), { dataVar: 'input', separator: '; ' });
  }
}
