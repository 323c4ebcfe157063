import type { Message } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors';
import type { AgentProfile } from '../../modules/agents/schemas.js';

/**
 * Where a text part's content goes, for the capability the message is for: `property` names the one
 * required string property; `offered: false` when the agent has no such capability (the broker then
 * answers CAPABILITY_NOT_OFFERED with the list).
 */
export type TextTarget =
  { offered: true; capability: string; property: string | undefined } | { offered: false };

/**
 * The invocation input. One data part is the input, as is; a text part beside it fills the property a
 * capability with a single required string property names, when the data part lacks it (text and
 * arguments: `[{text: "hello"}, {data: {to: "fr"}}]`). Without a data part, one text part is that
 * property alone.
 */
export async function inputOf(
  message: Message,
  textTarget: () => Promise<TextTarget>,
): Promise<Record<string, unknown>> {
  const cases = message.parts.map((part) => part.content?.$case);
  const data = message.parts.flatMap((part) => (part.content?.$case === 'data' ? [part.content.value] : []));
  const texts = message.parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : []));
  if (data.length > 1 || cases.length === 0 || texts.length > 1) {
    throw new RequestMalformedError(
      'INVALID_MESSAGE: send the invocation input as exactly one data part ({"data": {...}}), or as one ' +
        `text part where the skill's inputModes include text/plain; got ${data.length} data and ` +
        `${texts.length} text part(s)`,
    );
  }
  if (data.length === 1) {
    const input: unknown = data[0];
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new RequestMalformedError('INVALID_MESSAGE: the data part must be a JSON object (the input)');
    }
    const object = input as Record<string, unknown>;
    if (texts.length === 0) return object;
    const target = await textTarget();
    const property = target.offered ? target.property : undefined;
    // The data part already names the property, or the capability has no text property: data alone.
    if (property === undefined || property in object) return object;
    return { ...object, [property]: texts[0] };
  }
  const target = await textTarget();
  if (!target.offered) return {};
  if (texts.length === 1 && target.property !== undefined) return { [target.property]: texts[0] };
  const sent =
    texts.length === 1 ? 'a text part' : `a ${cases.find((kind) => kind !== 'text') ?? 'non-data'} part`;
  throw new ContentTypeNotSupportedError({
    message:
      `CONTENT_TYPE_NOT_SUPPORTED: "${target.capability}" does not take ${sent}: send its input as one data ` +
      "part, a JSON object matching its input_schema (in the card's capability-schemas extension). Only " +
      'skills whose inputModes include text/plain take a text part (capabilities with a single required ' +
      'string property).',
    metadata: { code: 'CONTENT_TYPE_NOT_SUPPORTED' },
  });
}

export function metadataValue(metadata: Record<string, unknown> | undefined, key: string): unknown {
  return metadata === undefined ? undefined : metadata[key];
}

/** No capability named: fine when the agent offers exactly one, else the choices are listed. */
export function impliedCapability(profile: AgentProfile): string {
  const types = profile.capabilities.map((capability) => capability.type);
  if (types.length === 1) return types[0] as string;
  throw new RequestMalformedError({
    message:
      `CAPABILITY_REQUIRED: ${profile.did} offers ${types.length} capabilities; name one in the message ` +
      `metadata as {"capability": "..."}: ${types.join(', ')}`,
    metadata: { code: 'CAPABILITY_REQUIRED', choices: types.join(',') },
  });
}

/** A2A v1.0 section 3.2.4: historyLength is unset, 0 or a positive count. */
export function requireHistoryLength(historyLength: number | undefined): void {
  if (historyLength === undefined) return;
  if (!Number.isInteger(historyLength) || historyLength < 0) {
    throw new RequestMalformedError({
      message: `INVALID_PARAMS: historyLength must be an integer of 0 or more; got ${historyLength}`,
      metadata: { code: 'INVALID_PARAMS' },
    });
  }
}
