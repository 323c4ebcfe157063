import { CompiledSchemas } from './compiled-schemas.js';
import { UnusableSchemaError, type InputVerdict } from './validator-pool.js';

/** Schema JSON compiled on the event loop at once: only small schemas come here (modules/capabilities/inline-validation.ts). */
const INLINE_COMPILED_CACHE_MAX_BYTES = 512 * 1024;

/**
 * Checks input against a schema on the calling thread, with the same Ajv setup and error text as the
 * validation workers. Only for schema and input pairs that modules/capabilities/inline-validation.ts bounds.
 */
export class InlineValidator {
  private readonly schemas = new CompiledSchemas(INLINE_COMPILED_CACHE_MAX_BYTES);

  /** Throws UnusableSchemaError when the schema does not compile, as a worker reports it. */
  validate(schemaJson: string, input: unknown): InputVerdict {
    let validate;
    try {
      validate = this.schemas.validator(schemaJson);
    } catch (error) {
      throw new UnusableSchemaError(error instanceof Error ? error.message : String(error));
    }
    return validate(input) ? { valid: true } : { valid: false, details: this.schemas.describe(validate) };
  }
}
