import { BadRequestError, ServiceUnavailableError } from '../../kernel/errors.js';
import type { Capability } from '@agent-registry/protocol';
import {
  UnusableSchemaError,
  ValidationTimeoutError,
  ValidationUnavailableError,
  type InputVerdict,
} from './validator-pool.js';
import { INLINE_VALIDATION, validatesInBoundedTime } from './inline-validation.js';
import { assertSchemaBudget } from './schema-limits.js';

/** Where invocation input is checked against a schema (worker threads with a time limit in production). */
export interface InputValidator {
  validate(schemaJson: string, inputJson: string): Promise<InputVerdict>;
  /** Compiles the schema; rejects with UnusableSchemaError when it does not compile. */
  check(schemaJson: string): Promise<void>;
}

/** Checks input on the calling thread; only given schema and input pairs of bounded cost. */
export interface BoundedInputValidator {
  validate(schemaJson: string, input: unknown): InputVerdict;
}

/**
 * Agents' capability JSON Schemas: checked when published (size and complexity first, then the
 * meta-schema and a compile), and invocation input checked against them off the event loop, except
 * small inputs against small schemas, whose check is bounded work (modules/capabilities/inline-validation.ts).
 */
export class CapabilitySchemas {
  private compileCount = 0;
  private inlineCount = 0;

  constructor(
    private readonly inputs: InputValidator,
    private readonly validationTimeoutMs: number,
    /** Small inputs against small schemas, checked without a thread hand-off (modules/capabilities/inline-validation.ts). */
    private readonly inline?: BoundedInputValidator,
  ) {}

  /** How many schemas were sent to be compiled for a publish check (a compile is the expensive step). */
  get compilations(): number {
    return this.compileCount;
  }

  /** How many inputs were checked on the event loop rather than in a validation worker. */
  get inlineValidations(): number {
    return this.inlineCount;
  }

  /**
   * A 400 unless every schema of the profile is within the limits, is a valid JSON Schema and compiles.
   * Call after the request is authenticated: the budget check is cheap; compiling (up to a few hundred
   * milliseconds for a profile at the limits) runs in a validation worker, off the event loop.
   */
  async assertPublishable(capabilities: readonly Capability[] | null | undefined): Promise<void> {
    assertSchemaBudget(capabilities);
    for (const [index, capability] of (capabilities ?? []).entries()) {
      for (const member of ['input_schema', 'output_schema'] as const) {
        const schema = capability[member];
        if (schema === undefined || schema === null) continue;
        this.compileCount++;
        try {
          await this.inputs.check(JSON.stringify(schema));
        } catch (error) {
          if (!(error instanceof UnusableSchemaError || error instanceof ValidationTimeoutError)) {
            throw this.validationError(capability, error);
          }
          const problem =
            error instanceof UnusableSchemaError ? error.message : 'it took too long to compile';
          throw new BadRequestError(
            'INVALID_CAPABILITY_SCHEMA',
            `capabilities[${index}].${member} is not a usable JSON Schema: ${problem}` +
              (/regexp/i.test(problem) ? ' (patterns use RE2 syntax: no lookaround or backreferences)' : ''),
          );
        }
      }
    }
  }

  /** A 400 naming the first mismatch when the input (`inputJson` is its JSON text) does not match the capability's input_schema. */
  async assertInputMatches(capability: Capability, input: unknown, inputJson: string): Promise<void> {
    const schema = capability.input_schema;
    if (schema == null) return;
    const schemaJson = JSON.stringify(schema);
    let verdict: InputVerdict;
    try {
      if (
        this.inline !== undefined &&
        inputJson.length <= INLINE_VALIDATION.inputMaxChars &&
        validatesInBoundedTime(schema)
      ) {
        this.inlineCount++;
        verdict = this.inline.validate(schemaJson, input);
      } else {
        verdict = await this.inputs.validate(schemaJson, inputJson);
      }
    } catch (error) {
      throw this.validationError(capability, error);
    }
    if (!verdict.valid) {
      throw new BadRequestError(
        'INPUT_SCHEMA_MISMATCH',
        `input does not match the input_schema of "${capability.type}": ${verdict.details}`,
      );
    }
  }

  private validationError(capability: Capability, error: unknown): Error {
    if (error instanceof ValidationTimeoutError) {
      return new BadRequestError(
        'INPUT_VALIDATION_TIMEOUT',
        `checking input against the input_schema of "${capability.type}" took longer than ` +
          `${this.validationTimeoutMs} ms and was stopped; send a smaller input`,
      );
    }
    if (error instanceof UnusableSchemaError) {
      return new BadRequestError(
        'INVALID_CAPABILITY_SCHEMA',
        `the input_schema of "${capability.type}" cannot be used (${error.message}); its agent must publish it again`,
      );
    }
    if (error instanceof ValidationUnavailableError) {
      return new ServiceUnavailableError(
        'VALIDATION_BUSY',
        `input could not be checked against the input_schema of "${capability.type}" (${error.message}); retry shortly`,
      );
    }
    return error instanceof Error ? error : new Error(String(error));
  }
}
