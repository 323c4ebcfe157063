import { Ajv, type ValidateFunction } from 'ajv';
import { linearRegExp } from '@agent-registry/protocol';
import type { RegistryClient } from './client.js';
import type { JsonObject } from './types.js';

const PROFILE_REFRESH_MS = 60_000;

/**
 * Checks handler outputs against the output_schema each capability publishes in the agent's own
 * profile, so a bad output fails the task with the reason instead of reaching the caller.
 */
export class OutputValidator {
  private readonly ajv = new Ajv({ strict: false, allErrors: true, code: { regExp: linearRegExp } });
  private validators = new Map<string, ValidateFunction | null>();
  private loadedAt = -Infinity;
  private loading: Promise<void> | undefined;

  constructor(private readonly client: RegistryClient) {}

  /** null when the output is valid or no schema is published; otherwise what is wrong. */
  async check(capability: string, output: JsonObject): Promise<string | null> {
    if (Date.now() - this.loadedAt > PROFILE_REFRESH_MS || !this.validators.has(capability)) {
      await this.refresh();
    }
    const validate = this.validators.get(capability);
    if (validate === undefined || validate === null || validate(output)) return null;
    return this.ajv.errorsText(validate.errors?.slice(0, 10), { dataVar: 'output', separator: '; ' });
  }

  private async refresh(): Promise<void> {
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async load(): Promise<void> {
    const did = this.client.did;
    if (did === undefined) return;
    const profile = await this.client.getAgent(did);
    const validators = new Map<string, ValidateFunction | null>();
    for (const capability of profile.capabilities) {
      const schema = capability.output_schema;
      validators.set(
        capability.type,
        schema === undefined || schema === null ? null : this.ajv.compile(schema as object),
      );
    }
    this.validators = validators;
    this.loadedAt = Date.now();
  }
}
