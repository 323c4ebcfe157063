import { BadRequestError } from '../../kernel/errors.js';
import { DidFormatError, parseDid, type ParsedDid } from '@agent-registry/protocol';

/** Parses a DID from a request into its canonical form, or a 400 that says what a DID looks like. */
export function requireDid(raw: string | undefined, registryDomain: string): ParsedDid {
  try {
    return parseDid(raw ?? '', registryDomain);
  } catch (error) {
    if (error instanceof DidFormatError)
      throw new BadRequestError('INVALID_DID', error.message, 'Invalid DID');
    throw error;
  }
}
